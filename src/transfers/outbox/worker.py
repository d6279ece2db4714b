"""The worker loop: deliver due outbox messages, and run the scheduled jobs every so often.

Runs in-process under ``transfers serve`` (unless --no-worker) or alone as ``transfers worker``.
On stop it finishes the deliveries it has started and claims nothing new.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog

from transfers.jobs import scheduled
from transfers.outbox.dispatcher import Dispatcher
from transfers.services import Services

log = structlog.get_logger("transfers.worker")


class Worker:
    def __init__(self, svc: Services, dispatcher: Dispatcher) -> None:
        self.svc = svc
        self.dispatcher = dispatcher
        self.stopping = asyncio.Event()

    async def run(self) -> None:
        settings = self.svc.settings
        next_jobs = 0.0
        log.info("worker_started")
        while not self.stopping.is_set():
            busy = 0
            try:
                busy = await self.dispatcher.run_once()
                if time.monotonic() >= next_jobs:
                    counts = await scheduled.run_all(self.svc)
                    if any(counts.values()):
                        log.info("jobs_ran", **counts)
                    next_jobs = time.monotonic() + settings.jobs_interval_seconds
            except Exception:
                log.exception("worker_cycle_failed")
            if busy == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), timeout=settings.outbox_poll_seconds)
        log.info("worker_stopped")

    def stop(self) -> None:
        self.stopping.set()
