"""The background task that writes the request log in batches (docs/rules/agency-portal.md#request-log).

Every ``TRANSFERS_REQUEST_LOG_FLUSH_SECONDS`` (1 s) what is buffered at that moment is inserted, a
batch (500) per transaction; in between, only full batches are written, as soon as one waits.
A write that fails because the database is unreachable puts its batch back (within the buffer's
bound) and is tried again at the next interval; a batch the database refuses for any other reason
is dropped and counted, never retried forever. ``stop`` writes what is left before the process
ends (``runtime.start`` returns it as one of the lifespan's stops, run before the database is
disposed of); a process killed outright loses at most one interval.

Why a round writes only what was there when it began
(docs/operations/performance-history.md#request-log): the first version wrote until the buffer was empty, and under
steady traffic it never was, since requests keep arriving while a batch is written. The writer then ran back to back,
one transaction of ~25 requests per round trip instead of 500 (measured: 300 writes for 7,677 requests
in 10 s), and each transaction's fixed cost (the engine's checkout, BEGIN, COPY, COMMIT: a few
hundred µs of the API's CPU, and a commit for PostgreSQL) was paid 20 times over: +13-15 % CPU per
GET booking. Requests that arrive during a write now wait for a full batch or the next interval.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from transfers.db.errors import is_database_unavailable
from transfers.observability import metrics
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
        self._held = False  # a write found the database unreachable: nothing more until the interval
        self.writes = 0
        """Batches written so far (``request_log_batches_total``): with ``written``, the mean batch."""
        self.written = 0

    async def flush(self, *, full_batches_only: bool = False) -> int:
        """Write what is buffered now, batch by batch (only whole batches with
        ``full_batches_only``); answers how many requests were written. Requests recorded while it
        writes are left for the next round: a flush never chases the traffic. A failed batch goes
        back to the buffer and ends this flush."""
        size = self.buffer.batch
        pending = len(self.buffer)
        if full_batches_only:
            pending -= pending % size
        written = 0
        while pending > 0:
            batch = self.buffer.take(min(size, pending))
            if not batch:
                break
            pending -= len(batch)
            try:
                await self._write(batch)
            except Exception as exc:
                if is_database_unavailable(exc):  # tried again at the next interval
                    log.warning("request_log_write_failed", error=type(exc).__name__, requests=len(batch))
                    self.buffer.give_back(batch)
                    self._held = True
                else:  # a batch the database refuses would be refused again: never retried forever
                    log.exception("request_log_batch_refused", requests=len(batch))
                    self.buffer.drop(batch)
                break
            written += len(batch)
            self.writes += 1
            self.written += len(batch)
            metrics.REQUEST_LOG_BATCHES.inc()
            metrics.REQUEST_LOG_WRITTEN.inc(len(batch))
        return written

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        due = loop.time() + self._interval
        while not self._stopping:
            left = due - loop.time()
            if left > 0 and (self._held or len(self.buffer) < self.buffer.batch):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.buffer.wake.wait(), timeout=left)
            self.buffer.wake.clear()
            if self._stopping:
                return  # ``stop`` writes the rest
            if loop.time() >= due:
                due = loop.time() + self._interval
                self._held = False
                await self.flush()
            elif not self._held:
                await self.flush(full_batches_only=True)

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
            await asyncio.wait_for(self._flush_all(), timeout=STOP_TIMEOUT_SECONDS)
        if len(self.buffer):
            log.warning("request_log_lost_at_stop", requests=len(self.buffer))

    async def _flush_all(self) -> None:
        """At stop: rounds until the buffer is empty or a write fails (requests still finishing
        during a graceful stop are recorded after the first round began)."""
        while len(self.buffer) and await self.flush():
            pass
