"""Observability: Prometheus metrics (``GET /metrics``) for HTTP, partner calls, the outbox and bookings.

See docs/operations/observability.md. Logs are structlog JSON lines (``transfers.logging``).
"""
