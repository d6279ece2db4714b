"""``transfers serve``: migrations, then the API (and, unless --no-worker, the worker in-process)."""

from __future__ import annotations

import os

import click
import uvicorn

from transfers.cli.common import settings
from transfers.config import get_settings
from transfers.db.migrate import upgrade


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=int, help="API processes")
@click.option("--no-worker", is_flag=True, help="do not run the outbox/jobs worker in-process")
def serve(host: str, port: int, workers: int, no_worker: bool) -> None:
    """Serve the booking API, the reverse API and the reference data."""
    cfg = settings()
    upgrade(cfg.resolved_database_url)
    # The API processes read these through Settings; set them here so every worker inherits them.
    if no_worker:
        os.environ["TRANSFERS_EMBEDDED_WORKER"] = "0"
    if not cfg.public_base_url:
        reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        os.environ["TRANSFERS_PUBLIC_BASE_URL"] = f"http://{reach}:{port}"
    get_settings.cache_clear()  # the app factory must see the variables set above
    uvicorn.run(
        "transfers.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=30,
        proxy_headers=True,
    )
