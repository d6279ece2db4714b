"""What runs beside the HTTP routes for the life of an API process: the outbox dispatcher (used by
create-booking for its immediate attempt), the embedded worker, and, in sandbox, the built-in
reference partner mounted at ``/sandbox-partner`` and registered for every airport."""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Awaitable, Callable

import structlog
from fastapi import FastAPI

from transfers.config import SANDBOX_PARTNER_PATH
from transfers.deliveries import Dispatcher
from transfers.reference.airports import find_airport
from transfers.requestlog.buffer import Entry, RequestLogBuffer
from transfers.services import Services
from transfers.worker import Worker

log = structlog.get_logger("transfers.runtime")
SANDBOX_MOUNT = SANDBOX_PARTNER_PATH
Stop = Callable[[], Awaitable[None]]


def mount_sandbox_partner(app: FastAPI, svc: Services) -> None:
    """Mount the reference partner; its registration happens at start-up (it needs the database)."""
    from transfers.partners.service import sandbox_credentials
    from transfers.sandbox_partner.app import create_sandbox_partner_app
    from transfers.sandbox_partner.config import SandboxPartnerConfig

    creds = sandbox_credentials(svc.box)
    partner_app = create_sandbox_partner_app(
        SandboxPartnerConfig(
            service_url=svc.settings.service_url,
            api_key=creds.api_key,
            signing_secret=creds.signing_secret,
            outbound_token=creds.outbound_token,
            approve_after_seconds=svc.settings.sandbox_approve_after_seconds,
            clock=svc.clock,
        )
    )
    svc.sandbox_partner_app = partner_app
    app.mount(SANDBOX_MOUNT, partner_app)


async def start(svc: Services) -> list[Stop]:
    stops: list[Stop] = []
    dispatcher = Dispatcher(svc)
    svc.dispatcher = dispatcher
    if svc.settings.sandbox_partner_enabled and svc.sandbox_partner_app is not None:
        from transfers.partners.service import ensure_sandbox_partner

        base = svc.settings.service_url + SANDBOX_MOUNT
        partner_id = await ensure_sandbox_partner(svc.db, svc.clock, svc.box, base)
        log.info("sandbox_partner_registered", partner_id=partner_id, base_url=base)
        partner_app = svc.sandbox_partner_app
        closer = getattr(partner_app.state, "aclose", None)
        if closer is not None:
            stops.append(closer)
    stops.append(start_health_flusher(svc))
    stops.append(svc.background.drain)  # before the database is disposed of: a running check finishes
    if svc.request_log is not None:
        stops.append(start_request_log_writer(svc, svc.request_log))
    if svc.settings.embedded_worker:
        worker = Worker(svc, dispatcher)
        task = asyncio.create_task(worker.run(), name="transfers-worker")

        async def stop_worker() -> None:
            worker.stop()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=30)

        stops.append(stop_worker)
    settle_heap()
    return stops


def start_health_flusher(svc: Services) -> Stop:
    """Partner health (partners/health.py): this process's search counts are added to the database
    every ``partner_health_flush_seconds`` and once more when it stops (the stop runs before the
    database is disposed of)."""
    from transfers.partners import health, health_repository

    stopping = asyncio.Event()

    async def write(tallies: dict[health.Key, health.Tally]) -> None:
        await health_repository.add_tallies(svc.db, tallies)

    task = asyncio.create_task(
        health.run_flusher(svc.health, write, svc.settings.partner_health_flush_seconds, stopping),
        name="transfers-partner-health",
    )

    async def stop() -> None:
        stopping.set()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(task, timeout=10)

    return stop


def start_request_log_writer(svc: Services, buffer: RequestLogBuffer) -> Stop:
    """The request log (requestlog/): the buffer written in batches every
    ``request_log_flush_seconds``, and what is left when the process stops (before the database is
    disposed of)."""
    from transfers.requestlog import repository
    from transfers.requestlog.writer import RequestLogWriter

    async def write(entries: list[Entry]) -> None:
        await repository.insert_entries(svc.db, entries)

    writer = RequestLogWriter(buffer, write, svc.settings.request_log_flush_seconds)
    writer.start()
    return writer.stop


# Allocations (minus deallocations) of tracked objects between two young-generation collections;
# CPython's default is 700. A request allocates thousands of short-lived containers that reference
# counting frees anyway, so at 700 the collector ran several times per search and walked objects that
# were about to die (docs/operations/performance-history.md#gc-threshold).
GEN0_THRESHOLD = 10_000


def settle_heap() -> None:
    """Load what every request needs, then move everything alive at start-up out of the cyclic
    garbage collector's reach (``gc.freeze``).

    Why: the process starts with ~120 000 long-lived objects (the airport dataset, routes, models,
    SQLAlchemy's tables), and every full (generation 2) collection walks all of them: ~65 ms on this
    machine, a pause that lands on whichever requests are in flight (the search p99 in
    docs/operations/performance-history.md#profile, change 15). Frozen objects are still freed by reference counting;
    only cycles among them would never be collected, and start-up objects live as long as the process anyway."""
    find_airport("LHR")  # the dataset is loaded on first use otherwise
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, *gc.get_threshold()[1:])
