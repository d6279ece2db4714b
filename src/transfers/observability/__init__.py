"""Observability: Prometheus metrics (``GET /metrics``) for HTTP, partner calls, the outbox and bookings.

See README.md ("Observability"). Logs are structlog JSON lines (``transfers.logging``).
"""
