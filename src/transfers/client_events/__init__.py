"""Client events (docs/rules/webhooks.md): which events a booking change produces and the body
every delivery of one sends (events.py, pure), and their inserts (repository.py).

A package of its own, below ``bookings``, because a booking change decides and writes its events
in its own transaction (``bookings/event_effects.py``, the fast paths too), while the webhooks
that fan them out to the client's endpoints and deliver them (``webhooks/``) sit above
``bookings``. It imports nothing of the service but the tables.
"""
