"""``transfers serve``: migrations, then the API (and, unless --no-worker, the worker in-process)."""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
from types import FrameType
from typing import Any

import click
import uvicorn
from uvicorn.supervisors import Multiprocess

from transfers.cli.common import settings
from transfers.config import get_settings
from transfers.logging import configure_logging
from transfers.ops.errors import EX_SETTINGS, EX_UNAVAILABLE, OperatorError
from transfers.ops.startup import run_preflight

GRACEFUL_SHUTDOWN_SECONDS = 30
STARTUP_FAILURE = 3  # uvicorn's exit code when the app never started


def _announce(host: str, port: int) -> None:
    """uvicorn's "running on" line, which it logs only for a socket it bound itself (here: ``claim_address``)."""
    logging.getLogger("uvicorn.error").info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, port)


class _AnnouncingServer(uvicorn.Server):
    """uvicorn's ``Server``, saying where it listens once it has started on the socket given to it."""

    def __init__(self, config: uvicorn.Config, host: str, port: int) -> None:
        super().__init__(config)
        self.address = (host, port)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if sockets is not None and self.started:
            _announce(*self.address)


def _run_gracefully(server: uvicorn.Server, listener: socket.socket) -> None:
    """``server.run``, except that a SIGTERM/SIGINT it has handled gracefully ends the process with 0.

    After a graceful shutdown uvicorn re-raises the signal it stopped on into the handler that was in place
    before it started, so a clean drain would end as "killed by SIGTERM" (exit -15/143) and supervisors would
    report a failure. That handler is this one: a signal uvicorn has already acted on (its public
    ``should_exit`` is set) is done with; any other (before uvicorn listens, after it has finished) is
    handled as it would have been without us."""
    previous: dict[int, Any] = {}

    def handled(sig: int, frame: FrameType | None) -> None:
        if server.should_exit:
            return
        before = previous[sig]
        if callable(before):
            before(sig, frame)
        elif before != signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
            signal.raise_signal(sig)

    for each in (signal.SIGINT, signal.SIGTERM):
        previous[each] = signal.signal(each, handled)
    try:
        server.run(sockets=[listener])
    finally:
        for number, before in previous.items():
            signal.signal(number, before)


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
    # The address first: a second `make run` must say the port is taken before it migrates, starts a
    # worker or prints "Application startup complete". The socket bound here is the one
    # uvicorn serves on, so nothing can take the port between the check and the start.
    listener = claim_address(host, port)
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
        "transfers.app:create_served_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        # The forwarded headers of a trusted proxy are the app's to apply (create_served_app): uvicorn's
        # middleware for them would be one more layer around the direct routes (api/direct_routes.py).
        proxy_headers=False,
    )
    if config.workers > 1:
        # uvicorn's supervisor (what uvicorn.run does): it passes the signal on to the API processes,
        # waits for them to finish and exits 0.
        _announce(host, port)
        Multiprocess(config, sockets=[listener]).run()
        return
    server = _AnnouncingServer(config, host, port)
    _run_gracefully(server, listener)
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def claim_address(host: str, port: int) -> socket.socket:
    """Bind ``host:port`` (as uvicorn would: SO_REUSEADDR, inheritable for the API processes) or stop
    with one line. A port another process listens on is a resource that is not available now, like a
    database that is down: exit 69. An address this machine cannot listen on at all (not one of its
    own, a privileged port) is a usage error: exit 2."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise OperatorError(
                f"{host}:{port} is already in use (another `transfers serve`?): stop that process or "
                "choose another --port",
                exit_code=EX_UNAVAILABLE,
            ) from None
        raise OperatorError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (check --host and --port)",
            exit_code=EX_SETTINGS,
        ) from None
    sock.set_inheritable(True)
    return sock
