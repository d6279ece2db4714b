"""``transfers worker``: the outbox and scheduled-job worker on its own (scaled deployments)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import click
import structlog

from transfers.cli.common import print_json, settings
from transfers.deliveries import Dispatcher, webhook_dispatcher
from transfers.jobs import scheduled
from transfers.logging import configure_logging
from transfers.ops.startup import run_preflight
from transfers.services import Services
from transfers.worker import Worker

log = structlog.get_logger("transfers.worker")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@click.command("worker")
@click.option(
    "--once",
    is_flag=True,
    help="one delivery round and one run of the scheduled jobs, print what was done as JSON, exit (cron, tests)",
)
@click.option(
    "--wait-for-db",
    "wait_for_db",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="wait this long for PostgreSQL to accept connections (and for `serve` to apply pending migrations)",
)
def worker(once: bool, wait_for_db: float) -> None:
    """Deliver outbox messages to partners and run the scheduled jobs, without serving the API.

    Any number of workers may run against one PostgreSQL database (and beside `transfers serve`):
    messages are claimed under a lease, so no message is delivered by two workers at the same time.
    SIGTERM or SIGINT stops claiming new work; deliveries in flight finish, then the worker exits 0.
    Migrations are not applied here: `transfers serve` or `transfers db upgrade` does that; a schema
    behind the code is waited for like a database that is down (--wait-for-db), then exit 69.
    """
    cfg = settings()
    configure_logging(cfg.log_level, cfg.log_format)
    run_preflight(cfg, wait_seconds=wait_for_db, wait_for_migrations=True)
    svc = Services.build(cfg, application_name="transfers-worker")
    summary = asyncio.run(_run(svc, once=once))
    if summary is not None:
        print_json(summary)


async def _run(svc: Services, *, once: bool) -> dict[str, Any] | None:
    dispatcher = svc.dispatcher = Dispatcher(svc)
    try:
        if once:
            attempted = await dispatcher.run_once()
            counts = await scheduled.run_all(svc)
            webhooks = webhook_dispatcher(svc)  # client webhook deliveries too
            try:
                webhooks_attempted = await webhooks.run_once()
            finally:
                await webhooks.aclose()
            return {"attempted": attempted, **counts, "webhooks_attempted": webhooks_attempted}
        await _run_until_signalled(Worker(svc, dispatcher))
        return None
    finally:
        await svc.partner_client.aclose()
        await svc.db.dispose()


async def _run_until_signalled(loop_worker: Worker) -> None:
    loop = asyncio.get_running_loop()

    def stop(sig: signal.Signals) -> None:
        if not loop_worker.stopping.is_set():
            log.info("worker_stopping", signal=sig.name)
        loop_worker.stop()

    installed = []
    for sig in STOP_SIGNALS:
        # Not available off the main thread or on Windows: there Ctrl-C interrupts the loop instead
        # (deliveries in flight are then abandoned; their leases expire and they are sent again).
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop, sig)
            installed.append(sig)
    try:
        await loop_worker.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
