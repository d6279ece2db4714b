"""Alembic environment: runs migrations through the service's own async engine setup."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from transfers.db.engine import Database
from transfers.db.tables import metadata

config = context.config
target_metadata = metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    url = config.get_main_option("sqlalchemy.url")
    assert url, "migrations need sqlalchemy.url"
    db = Database(url, pool_size=1, application_name="transfers-migrate")
    try:
        async with db.engine.connect() as conn:
            await conn.run_sync(_run)
            await conn.commit()
    finally:
        await db.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported")
asyncio.run(_run_async())
