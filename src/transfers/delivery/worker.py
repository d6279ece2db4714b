"""The engine's delivery loop: claim due messages and deliver them, until stopped.

Claiming does not wait for the deliveries of the previous claim: every poll interval a new
delivery cycle (claim a batch, deliver it) may start while earlier ones are still running, up to
``MAX_CYCLES`` at once. So a receiver that accepts the connection and never answers holds only its
own cycle, until the per-attempt timeout, and everyone else's messages keep being delivered. A
cycle that found work is followed by another one at once (a backlog drains without waiting); an
idle loop still claims once per poll interval. On stop, the cycles in flight finish and nothing
new is claimed.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

import structlog

log = structlog.get_logger("transfers.worker")
MAX_CYCLES = 4
CYCLE_BATCH = 8


class Claims(Protocol):
    """What the loop runs: an ``Engine`` of any message type."""

    async def run_once(self, limit: int = ...) -> int: ...


class DeliveryLoop:
    def __init__(self, engine: Claims, *, poll_seconds: float, job_name: str, max_cycles: int | None = None) -> None:
        self.engine = engine
        self.poll = poll_seconds
        self.job_name = job_name  # what a failed cycle is logged under (``job_failed``)
        self.max_cycles = max_cycles or MAX_CYCLES

    async def run(self, stopping: asyncio.Event) -> None:
        cycles: set[asyncio.Task[int]] = set()
        stop_requested = asyncio.create_task(stopping.wait())
        next_claim = 0.0
        try:
            while not stopping.is_set():
                if len(cycles) < self.max_cycles and time.monotonic() >= next_claim:
                    cycles.add(asyncio.create_task(self._cycle()))
                    next_claim = time.monotonic() + self.poll
                timeout = None if len(cycles) >= self.max_cycles else max(0.0, next_claim - time.monotonic())
                done, _ = await asyncio.wait(
                    {*cycles, stop_requested}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                )
                for task in done & cycles:
                    cycles.discard(task)
                    if task.result() > 0:
                        next_claim = 0.0  # more may be due: claim again at once
            if cycles:
                await asyncio.wait(cycles)  # the deliveries in flight finish; nothing new is claimed
        finally:
            stop_requested.cancel()
            for task in cycles:
                task.cancel()

    async def _cycle(self) -> int:
        try:
            return await self.engine.run_once(limit=CYCLE_BATCH)
        except Exception:
            log.exception("job_failed", job=self.job_name)
            return 0
