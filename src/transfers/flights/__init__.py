"""Flight tracking (docs/rules/flights.md): arrival pickups follow the flight.

``numbers`` normalises flight numbers, ``rules`` decides what a provider's report does to a booking (pure,
table-tested), ``providers`` is the provider interface (``sandbox``, ``none``, ``aerodatabox``).
"""
