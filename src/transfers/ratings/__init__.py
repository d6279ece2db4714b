"""Ratings (docs/rules/ratings.md): the traveller's 1..5 stars and comment on a ride, once per booking,
from the drop-off until 7 days after it.

* ``rules.py``: the window and what a rating may hold. Pure.
* ``models.py``: a stored rating, as the API shows it.
* ``repository.py``: the ``ratings`` table's statements (the scorecards read the same table).
* ``service.py``: the use cases: the agency's ``POST /booking/rating`` and the rating page's form.
* ``pages.py``: the rating page ``/r/{token}`` (an entry point, like ``tracking/pages.py``).

The page's token and the client's ``ride.rating_url`` are the booking's: ``bookings/rating_link.py``.
"""
