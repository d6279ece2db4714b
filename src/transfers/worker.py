"""The worker: the delivery engine's loop, client webhooks and the scheduled jobs, until stopped.

Runs in-process under ``transfers serve`` (unless --no-worker) or alone as ``transfers worker``.
On stop it finishes the deliveries it has started and claims nothing new.
"""

from __future__ import annotations

import asyncio
import contextlib

import structlog

from transfers.deliveries import webhook_dispatcher
from transfers.delivery.engine import Engine
from transfers.delivery.models import OutboxMessage
from transfers.delivery.worker import DeliveryLoop
from transfers.jobs import scheduled
from transfers.services import Services

log = structlog.get_logger("transfers.worker")
DELIVERY_JOB = "outbox_delivery"  # the job name a failed delivery cycle is logged under


class Worker:
    def __init__(self, svc: Services, dispatcher: Engine[OutboxMessage], *, max_cycles: int | None = None) -> None:
        self.svc = svc
        self.dispatcher = dispatcher
        self.stopping = asyncio.Event()
        self.loop = DeliveryLoop(
            dispatcher, poll_seconds=svc.settings.outbox_poll_seconds, job_name=DELIVERY_JOB, max_cycles=max_cycles
        )
        self.webhooks = webhook_dispatcher(svc)  # client webhooks, beside partner deliveries

    async def run(self) -> None:
        log.info("worker_started")
        await asyncio.gather(self.loop.run(self.stopping), self._jobs(), self.webhooks.run(self.stopping))
        log.info("worker_stopped")

    def stop(self) -> None:
        self.stopping.set()

    async def _jobs(self) -> None:
        while not self.stopping.is_set():
            with contextlib.suppress(Exception):  # run_all logged it as job_failed, with the job's name
                counts = await scheduled.run_all(self.svc)
                if any(counts.values()):
                    log.info("jobs_ran", **counts)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), timeout=self.svc.settings.jobs_interval_seconds)
