"""Engine and transaction scopes: one request, one transaction, committed in one place.

``Database.read()`` and ``Database.write()`` are the only ways code gets a connection. Both commit
when the block ends normally and roll back on any exception. On SQLite, ``write()`` starts with
``BEGIN IMMEDIATE`` so two writers never both read a balance and then race to update it: the
second waits (busy timeout) instead of failing with "database is locked" half-way through.
PostgreSQL uses READ COMMITTED plus explicit row locks or single-statement conditional updates.

Round trips are the cost of a request on PostgreSQL (bench/README.md, "Profile"), so on it:
``read()`` runs without BEGIN/COMMIT (autocommit: under READ COMMITTED every statement takes its
own snapshot inside a transaction too, so a read-only block sees exactly the same rows), and the
pool's pre-ping is one ``;`` instead of the driver's ``BEGIN; ; ROLLBACK``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from transfers.db.direct import DirectRead, PostgresReader, SqliteReader


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class Database:
    def __init__(self, url: str, *, pool_size: int = 10, pool_timeout: float = 5.0,
                 application_name: str = "transfers") -> None:
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        kwargs: dict[str, Any] = {"json_serializer": _json_dumps, "json_deserializer": orjson.loads}
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            kwargs["pool_size"] = pool_size
            kwargs["pool_timeout"] = pool_timeout
        else:
            kwargs.update(
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_timeout=pool_timeout,
                pool_pre_ping=True,
                pool_recycle=1800,
                connect_args={
                    "timeout": 5,
                    "command_timeout": 30,
                    "server_settings": {"application_name": application_name},
                },
            )
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self._reads = self.engine
        self._direct: PostgresReader | SqliteReader | None = None
        if self.is_sqlite:
            _configure_sqlite(self.engine)
            if parsed.database and parsed.database != ":memory:":
                self._direct = SqliteReader(parsed.database)
        else:
            self._reads = self.engine.execution_options(isolation_level="AUTOCOMMIT")
            _one_round_trip_ping(self.engine)
            self._direct = PostgresReader(
                parsed.set(drivername="postgresql").render_as_string(hide_password=False),
                max_size=pool_size, timeout=pool_timeout, application_name=application_name,
            )

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A read-only block: a deferred transaction on SQLite (readers never block each other),
        autocommit statements on PostgreSQL. Nothing written here would be atomic on PostgreSQL."""
        async with self._reads.connect() as conn, conn.begin():
            yield conn

    @asynccontextmanager
    async def autocommit(self) -> AsyncIterator[AsyncConnection]:
        """A block whose every write is one statement that is all-or-nothing by itself (e.g. a
        data-modifying WITH): on PostgreSQL each statement commits on its own, with no BEGIN/COMMIT
        round trips and no row lock held while this process gets round to sending COMMIT. Two
        writes that must commit together do not belong here. On SQLite: a write transaction."""
        if self.is_sqlite:
            async with self.write() as conn:
                yield conn
        else:
            async with self._reads.connect() as conn, conn.begin():
                yield conn

    async def read_one(self, read: DirectRead, **params: Any) -> dict[str, Any] | None:
        """One row of a fixed SELECT by the direct path (``db/direct.py``), as the engine would give it."""
        if self._direct is None:
            async with self.read() as conn:
                row = (await conn.execute(read.statement, params)).mappings().first()
            return dict(row) if row is not None else None
        return await self._direct.one(read.compiled(self.engine.dialect), params)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction; on SQLite it takes the write lock up front (BEGIN IMMEDIATE)."""
        async with self.engine.connect() as conn:
            if self.is_sqlite:
                conn = await conn.execution_options(transfers_write=True)
            async with conn.begin():
                yield conn

    async def ping(self) -> None:
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._direct is not None:
            await self._direct.close()
        await self.engine.dispose()


def _one_round_trip_ping(engine: AsyncEngine) -> None:
    """Keep SQLAlchemy's pre-ping (every checkout is checked, a dead connection is replaced and the
    pool invalidated), but let the asyncpg adapter send its ``;`` alone: outside autocommit it wraps
    it in BEGIN/ROLLBACK (for pgbouncer's transaction mode, which this service does not use), three
    round trips on every checkout. The connection's isolation setting is restored right after."""
    dialect = engine.sync_engine.dialect
    ping = dialect.do_ping

    def do_ping(dbapi_connection: Any) -> bool:
        dbapi_connection.autocommit = True
        try:
            return ping(dbapi_connection)
        finally:
            dbapi_connection.autocommit = False

    dialect.do_ping = do_ping  # type: ignore[method-assign]


def _configure_sqlite(engine: AsyncEngine) -> None:
    """Take BEGIN away from the driver so we choose DEFERRED or IMMEDIATE per transaction."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=15000")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("transfers_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
