"""``transfers db upgrade``."""

from __future__ import annotations

import click

from transfers.cli.common import settings
from transfers.db.migrate import upgrade


@click.group("db")
def db_group() -> None:
    """Database schema management."""


@db_group.command("upgrade")
@click.option("--revision", default="head", show_default=True)
def db_upgrade(revision: str) -> None:
    """Apply pending migrations."""
    upgrade(settings().resolved_database_url, revision)
    click.echo(f"database at {revision}")
