"""Per-request values that logs and outgoing partner calls carry (the request id): set by the HTTP
middleware, read by the logs and the partner client, so it lives below both (no HTTP import)."""

from __future__ import annotations

from contextvars import ContextVar

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
