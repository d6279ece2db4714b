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
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # SQLite changes a column by copying the table into a new one and dropping the old (batch
        # mode). With foreign keys on, dropping a table that other rows reference fails (e.g.
        # bookings, referenced by the ledger), so foreign keys are off while migrating, and checked
        # before COMMIT: SQLite's own procedure (sqlite.org/lang_altertable.html, "other changes").
        # The pragma is a no-op inside a transaction, hence on the driver's connection, before BEGIN;
        # and all revisions run in one transaction (``transactional_ddl``: SQLite's DDL is
        # transactional, Alembic just does not assume it), so a failed check commits nothing.
        _pragma(connection, "PRAGMA foreign_keys=OFF")
    try:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=sqlite,
            compare_type=True,
            transactional_ddl=True if sqlite else None,
        )
        with context.begin_transaction():
            context.run_migrations()
            if sqlite:
                broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"migration would leave {len(broken)} broken foreign keys, e.g. {broken[0]}")
    finally:
        if sqlite:
            _pragma(connection, "PRAGMA foreign_keys=ON")


def _pragma(connection: Connection, statement: str) -> None:
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(statement)
    finally:
        cursor.close()


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
