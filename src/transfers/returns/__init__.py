"""Return trips (docs/rules/return-trips.md): a way out and a way back booked in one call, two
bookings written in one transaction. Above ``bookings/``: ``service.py`` (the pair's create, through
the bookings' create pieces and ``bookings/hooks.py``'s ``new_booking`` moment for what the features
add to each leg), ``rules.py`` (the way back's request; pure). Its columns (``trip_id``, ``trip_leg``,
``trip_other_reservation_no`` on ``bookings``, ``return_pickup_at`` on ``searches``, ``leg`` on
``search_vehicles``) are ``db/tables/return_trips.py``; the booking shows them as its trip's ``leg``.
"""
