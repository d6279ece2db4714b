"""``transfers db upgrade``."""

from __future__ import annotations

import asyncio

import click
from alembic.util.exc import CommandError

from transfers.cli.common import settings
from transfers.ops.errors import OperatorError
from transfers.ops.startup import apply_migrations, prepare_database


@click.group("db")
def db_group() -> None:
    """Database schema management."""


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Apply pending migrations."""
    cfg = settings()

    async def run() -> None:
        # Reachable, the login accepted, and no revision newer than this code's, before Alembic runs.
        await prepare_database(cfg, migrate=True, apply=False)
        await apply_migrations(cfg.resolved_database_url, revision)

    try:
        asyncio.run(run())
    except CommandError as exc:
        # Alembic's own wording (e.g. "Can't locate revision identified by 'bogus'"), one line.
        raise OperatorError(f"--revision {revision}: {str(exc).strip().splitlines()[0]}", exit_code=2) from exc
    click.echo(f"database at {revision}")
