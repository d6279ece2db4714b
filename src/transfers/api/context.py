"""Per-request values that logs and outgoing partner calls carry (request id, client, booking)."""

from __future__ import annotations

from contextvars import ContextVar

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)
