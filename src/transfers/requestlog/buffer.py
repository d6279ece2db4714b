"""This process's requests not yet written (docs/rules/agency-portal.md#request-log).

``record`` is on every client request's path: a length check, one ``datetime`` subtraction and a
list append (no lock: only the event loop's thread touches the buffer, so ``record`` and ``take``
never interleave mid-update). What is recorded is fixed here, field by field; nothing else of the
request (its body, its headers, its query string, the API key) ever reaches the buffer.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from transfers.clock import Clock
from transfers.db.tables.requestlog import (
    MAX_IDEMPOTENCY_KEY_CHARS,
    MAX_METHOD_CHARS,
    MAX_PATH_CHARS,
    MAX_REQUEST_ID_CHARS,
)
from transfers.observability import metrics

# (at, client_id, method, path, status, request_id, idempotency_key, duration_us): one request.
Entry = tuple[datetime, int, str, str, int, str, str | None, int]
MAX_DURATION_US = 2**31 - 1  # the column is a 32-bit integer (35 minutes; no request is that long)
DEFAULT_CAPACITY = 10_000
DEFAULT_BATCH = 500


class RequestLogBuffer:
    """A bounded list of requests. Full: the request is dropped and counted (``dropped`` and the
    ``request_log_dropped_total`` metric), never waited for: the API's answer comes first."""

    __slots__ = ("_clock", "_entries", "batch", "capacity", "dropped", "wake")

    def __init__(self, clock: Clock, *, capacity: int = DEFAULT_CAPACITY, batch: int = DEFAULT_BATCH) -> None:
        self._clock = clock
        self._entries: list[Entry] = []
        self.capacity = capacity
        self.batch = min(batch, capacity)
        self.dropped = 0
        self.wake = asyncio.Event()
        """Set when a full batch is waiting: the writer writes it without waiting for its interval."""

    def record(
        self,
        client_id: int,
        method: str,
        path: str,
        status: int,
        request_id: str,
        idempotency_key: str | None,
        seconds: float,
    ) -> None:
        """Keep one finished request (``seconds``: how long it took; ``at`` is when it arrived)."""
        entries = self._entries
        if len(entries) >= self.capacity:
            self.dropped += 1
            metrics.REQUEST_LOG_DROPPED.inc()
            return
        if "\x00" in path:  # a percent-encoded NUL: PostgreSQL refuses it in text, and with it the batch
            path = path.replace("\x00", "")
        if idempotency_key is not None and "\x00" in idempotency_key:
            idempotency_key = idempotency_key.replace("\x00", "")
        entries.append(
            (
                self._clock.now() - timedelta(seconds=seconds),
                client_id,
                method[:MAX_METHOD_CHARS],
                path[:MAX_PATH_CHARS],
                status,
                request_id[:MAX_REQUEST_ID_CHARS],
                None if idempotency_key is None else idempotency_key[:MAX_IDEMPOTENCY_KEY_CHARS],
                min(int(seconds * 1_000_000), MAX_DURATION_US),
            )
        )
        if len(entries) == self.batch:
            self.wake.set()

    def take(self, limit: int) -> list[Entry]:
        """Up to ``limit`` of the oldest requests, removed from the buffer."""
        taken = self._entries[:limit]
        del self._entries[:limit]
        return taken

    def drop(self, entries: list[Entry]) -> None:
        """Requests that will never be written (their batch was refused), counted as dropped."""
        self.dropped += len(entries)
        metrics.REQUEST_LOG_DROPPED.inc(len(entries))

    def give_back(self, entries: list[Entry]) -> None:
        """Requests whose write failed go back in front, as far as the capacity allows; the rest are
        dropped and counted (the buffer stays bounded while the database is down)."""
        room = max(0, self.capacity - len(self._entries))
        kept = entries[:room]
        self._entries[:0] = kept
        lost = len(entries) - len(kept)
        if lost:
            self.dropped += lost
            metrics.REQUEST_LOG_DROPPED.inc(lost)

    def __len__(self) -> int:
        return len(self._entries)
