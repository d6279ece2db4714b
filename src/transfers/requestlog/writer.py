"""The background task that writes the request log in batches (docs/rules/agency-portal.md#request-log).

Every ``TRANSFERS_REQUEST_LOG_FLUSH_SECONDS`` (1 s), or as soon as a full batch (500) waits, the
buffered requests are inserted, a batch per transaction. A write that fails because the database
is unreachable puts its batch back (within the buffer's bound) and is tried again at the next
interval; a batch the database refuses for any other reason is dropped and counted, never retried
forever. ``stop`` writes
what is left before the process ends (``runtime.start`` returns it as one of the lifespan's stops,
run before the database is disposed of); a process killed outright loses at most one interval.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from transfers.db.errors import is_database_unavailable
from transfers.requestlog.buffer import Entry, RequestLogBuffer

log = structlog.get_logger("transfers.requestlog")
Write = Callable[[list[Entry]], Awaitable[None]]
STOP_TIMEOUT_SECONDS = 10.0


class RequestLogWriter:
    def __init__(self, buffer: RequestLogBuffer, write: Write, interval_seconds: float) -> None:
        self.buffer = buffer
        self._write = write
        self._interval = interval_seconds
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    async def flush(self) -> int:
        """Write everything buffered, batch by batch; answers how many requests were written. A
        failed batch goes back to the buffer and ends this flush."""
        written = 0
        while True:
            batch = self.buffer.take(self.buffer.batch)
            if not batch:
                return written
            try:
                await self._write(batch)
            except Exception as exc:
                if is_database_unavailable(exc):  # tried again at the next interval
                    log.warning("request_log_write_failed", error=type(exc).__name__, requests=len(batch))
                    self.buffer.give_back(batch)
                else:  # a batch the database refuses would be refused again: never retried forever
                    log.exception("request_log_batch_refused", requests=len(batch))
                    self.buffer.drop(batch)
                return written
            written += len(batch)

    async def run(self) -> None:
        while not self._stopping:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.buffer.wake.wait(), timeout=self._interval)
            self.buffer.wake.clear()
            await self.flush()

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="transfers-request-log")

    async def stop(self) -> None:
        """End the loop, then write what is left (bounded by ``STOP_TIMEOUT_SECONDS``)."""
        self._stopping = True
        self.buffer.wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(self._task, timeout=STOP_TIMEOUT_SECONDS)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.flush(), timeout=STOP_TIMEOUT_SECONDS)
        if len(self.buffer):
            log.warning("request_log_lost_at_stop", requests=len(self.buffer))
