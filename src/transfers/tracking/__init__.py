"""The traveller's page ``/t/{token}`` and the hosted partners' driver page ``/d/{token}``
(docs/rules/ride.md#tracking-page, docs/rules/ride.md#driver-page), served by the API process from this
package: templates and CSS here, nothing fetched from another host.

* ``facts.py``: what the traveller is shown, as one JSON-able value built from the booking row and the
  clock (the HTML page and ``/t/{token}.json`` render the same facts). Pure.
* ``rules.py``: what a token may look like, the driver link's URL, the windows the pages open. Pure. (The
  traveller's token and link a booking carries are the booking's: ``bookings/tracking_link.py``.)
* ``driver.py``: the driver page's next step. Pure.
* ``repository.py``: the token lookups and the driver links' statements.
* ``pages.py``: the HTTP routes (an entry point, like ``api/`` and ``portal/``).
"""
