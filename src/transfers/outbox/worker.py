"""The worker loop: deliver due outbox messages, and run the scheduled jobs every so often.

Runs in-process under ``transfers serve`` (unless --no-worker) or alone as ``transfers worker``.
On stop it finishes the deliveries it has started and claims nothing new.

Claiming does not wait for the deliveries of the previous claim: every poll interval a new
delivery cycle (claim a batch, deliver it) may start while earlier ones are still running, up to
``MAX_CYCLES`` at once. So a partner that accepts the connection and never answers holds only its
own cycle, until the per-attempt timeout, and everyone else's messages keep being delivered. A
cycle that found work is followed by another one at once (a backlog drains without waiting); an
idle worker still claims once per poll interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog

from transfers.jobs import scheduled
from transfers.outbox.dispatcher import Dispatcher
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

log = structlog.get_logger("transfers.worker")
MAX_CYCLES = 4
CYCLE_BATCH = 8
DELIVERY_JOB = "outbox_delivery"  # the job name a failed delivery cycle is logged under


class Worker:
    def __init__(self, svc: Services, dispatcher: Dispatcher, *, max_cycles: int = MAX_CYCLES) -> None:
        self.svc = svc
        self.dispatcher = dispatcher
        self.max_cycles = max_cycles
        self.stopping = asyncio.Event()
        self.webhooks = WebhookDispatcher(svc)  # issue 14: client webhooks, beside partner deliveries

    async def run(self) -> None:
        log.info("worker_started")
        await asyncio.gather(self._deliveries(), self._jobs(), self.webhooks.run(self.stopping))
        log.info("worker_stopped")

    def stop(self) -> None:
        self.stopping.set()

    async def _deliveries(self) -> None:
        poll = self.svc.settings.outbox_poll_seconds
        cycles: set[asyncio.Task[int]] = set()
        stop_requested = asyncio.create_task(self.stopping.wait())
        next_claim = 0.0
        try:
            while not self.stopping.is_set():
                if len(cycles) < self.max_cycles and time.monotonic() >= next_claim:
                    cycles.add(asyncio.create_task(self._cycle()))
                    next_claim = time.monotonic() + poll
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
            return await self.dispatcher.run_once(limit=CYCLE_BATCH)
        except Exception:
            log.exception("job_failed", job=DELIVERY_JOB)
            return 0

    async def _jobs(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(Exception):  # run_all logged it as job_failed, with the job's name
                counts = await scheduled.run_all(self.svc)
                if any(counts.values()):
                    log.info("jobs_ran", **counts)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), timeout=self.svc.settings.jobs_interval_seconds)
