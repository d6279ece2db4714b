"""``transfers serve``: migrations, then the API (and, unless --no-worker, the worker in-process)."""

from __future__ import annotations

import os
import socket
import sys

import click
import uvicorn
from uvicorn.supervisors import Multiprocess

from transfers.cli.common import settings
from transfers.config import get_settings
from transfers.logging import configure_logging
from transfers.ops.startup import run_preflight

GRACEFUL_SHUTDOWN_SECONDS = 30
STARTUP_FAILURE = 3  # uvicorn's exit code when the app never started


class _GracefulServer(uvicorn.Server):
    """uvicorn, except that a SIGTERM/SIGINT it has handled gracefully ends the process with 0.

    After a graceful shutdown uvicorn re-raises the signal it stopped on, so a clean drain would
    end as "killed by SIGTERM" (exit -15/143) and supervisors would report a failure. Here the
    signal is considered handled once the shutdown (requests drained, lifespan closed) is done.
    """

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        await super().shutdown(sockets=sockets)
        self._captured_signals.clear()


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=int, help="API processes")
@click.option("--no-worker", is_flag=True, help="do not run the outbox/jobs worker in-process")
@click.option(
    "--wait-for-db",
    "wait_for_db",
    default=30.0,
    show_default=True,
    type=click.FloatRange(min=0),
    metavar="SECONDS",
    help="wait this long for PostgreSQL (and Redis) to accept connections",
)
def serve(host: str, port: int, workers: int, no_worker: bool, wait_for_db: float) -> None:
    """Serve the booking API, the reverse API and the reference data.

    SIGTERM or SIGINT stops taking new connections, lets the requests in flight finish (up to 30 s),
    stops the embedded worker after its deliveries in flight, and exits 0. A database or Redis that
    is down is waited for (--wait-for-db), each attempt logged; then exit 69.
    """
    cfg = settings()
    configure_logging(cfg.log_level, cfg.log_format)
    run_preflight(cfg, wait_seconds=wait_for_db, migrate=True, redis=True)
    # The API processes read these through Settings; set them here so every worker inherits them.
    if no_worker:
        os.environ["TRANSFERS_EMBEDDED_WORKER"] = "0"
    if not cfg.public_base_url:
        reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        os.environ["TRANSFERS_PUBLIC_BASE_URL"] = f"http://{reach}:{port}"
    get_settings.cache_clear()  # the app factory must see the variables set above
    config = uvicorn.Config(
        "transfers.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        proxy_headers=True,
    )
    if config.workers > 1:
        # uvicorn's supervisor (what uvicorn.run does): it passes the signal on to the API processes,
        # waits for them to finish and exits 0.
        Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    server = _GracefulServer(config)
    server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
