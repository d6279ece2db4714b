"""Flight tracking (docs/rules/flights.md): arrival pickups follow the flight.

The flight watch is this package, above ``bookings/``: ``watch`` (the worker's pass, a new booking's
first check, the notices), ``repository`` (``flight_watches`` and the bookings' flight columns, both
``db/tables/flights.py``) and ``enrolment`` (the handlers that enrol a new or amended booking's
flight, registered with ``bookings/hooks.py`` at start-up by ``transfers/features.py``).
``rules`` decides what a provider's report does to a booking (pure, table-tested; the number's form
and the statuses are ``reference/flights.py``, which the booking shows), ``providers`` is the
provider interface (``sandbox``, ``none``, ``aerodatabox``).
"""
