"""What every CLI command shares: settings, a database handle, JSON output, the audit actor."""

from __future__ import annotations

import asyncio
import getpass
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from transfers.clock import SystemClock
from transfers.config import Settings, get_settings
from transfers.db.engine import Database
from transfers.ops.startup import prepare_database

T = TypeVar("T")


def settings() -> Settings:
    return get_settings()


def actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:
        return "cli:unknown"


def with_db(work: Callable[[Database, SystemClock], Awaitable[T]]) -> T:
    """Run one async unit of CLI work against the configured database, then dispose of it.

    The database is probed first: unreachable, refused, missing or on another schema version is one
    line and exit 69 (``cli/errors.py``), before any work starts."""

    async def main() -> T:
        cfg = settings()
        await prepare_database(cfg)
        db = Database(cfg.resolved_database_url, pool_size=2, application_name="transfers-cli")
        try:
            return await work(db, SystemClock())
        finally:
            await db.dispose()

    return asyncio.run(main())


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, default=str))


def fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
