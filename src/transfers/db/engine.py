"""Engine and transaction scopes: one request, one transaction, committed in one place.

``Database.read()`` and ``Database.write()`` are the only ways code gets a connection. Both commit
when the block ends normally and roll back on any exception. On SQLite, ``write()`` starts with
``BEGIN IMMEDIATE`` so two writers never both read a balance and then race to update it: the
second waits (busy timeout) instead of failing with "database is locked" half-way through.
PostgreSQL uses READ COMMITTED plus explicit row locks or single-statement conditional updates.

Round trips are the cost of a request on PostgreSQL (docs/operations/performance-history.md#profile), so on it:
``read()`` runs without BEGIN/COMMIT (autocommit: under READ COMMITTED every statement takes its
own snapshot inside a transaction too, so a read-only block sees exactly the same rows), and the
pool pings a connection only after it sat idle (``_ping_after_idle``), with one ``;`` instead of the
driver's ``BEGIN; ; ROLLBACK``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import orjson
from sqlalchemy import event, text
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from transfers.db.direct import PING_AFTER_IDLE_SECONDS, DirectStatement, PostgresDirect, SqliteReader
from transfers.db.private_files import create_private_file


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


_T = TypeVar("_T")


class _NoRow(Exception):
    """A step of ``Database.write_all`` answered no row: its transaction rolls back."""


class Database:
    def __init__(
        self, url: str, *, pool_size: int = 10, pool_timeout: float = 5.0, application_name: str = "transfers"
    ) -> None:
        self.url = url
        parsed = make_url(url)
        self.is_sqlite = parsed.get_backend_name() == "sqlite"
        kwargs: dict[str, Any] = {"json_serializer": _json_dumps, "json_deserializer": orjson.loads}
        if self.is_sqlite:
            if parsed.database and parsed.database != ":memory:":
                create_private_file(Path(parsed.database))  # 0600 (and a new var/ 0700) before SQLite opens it
            kwargs["pool_size"] = pool_size
            kwargs["pool_timeout"] = pool_timeout
        else:
            # All kept open, no overflow: an overflow connection is closed as soon as it is returned,
            # so under load every burst above the pool size opened new ones (a TLS attempt, the
            # dialect's set-up queries, statements prepared again): ~10 % of a create's CPU, and
            # creates went 140 -> 207 req/s without it (docs/operations/performance-history.md#profile).
            kwargs.update(
                pool_size=2 * pool_size,
                max_overflow=0,
                pool_timeout=pool_timeout,
                pool_recycle=1800,
                connect_args={
                    "timeout": 5,
                    "command_timeout": 30,
                    "server_settings": {"application_name": application_name},
                },
            )
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self._reads = self.engine
        self._direct: PostgresDirect | SqliteReader | None = None
        self._relaxed: PostgresDirect | None = None
        # SQLite: the pooled connection ``sqlite_write`` keeps checked out (see there), and its driver's
        self._writer: AsyncConnection | None = None
        self._writer_driver: Any = None
        if self.is_sqlite:
            _configure_sqlite(self.engine)
            if parsed.database and parsed.database != ":memory:":
                self._direct = SqliteReader(parsed.database)
        else:
            self._reads = self.engine.execution_options(isolation_level="AUTOCOMMIT")
            _ping_after_idle(self.engine)
            dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
            self._direct = PostgresDirect(
                dsn, max_size=pool_size, timeout=pool_timeout, application_name=application_name
            )
            self._relaxed = PostgresDirect(
                dsn,
                max_size=max(1, pool_size // 2),
                timeout=pool_timeout,
                application_name=application_name,
                settings={"synchronous_commit": "off"},
            )

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        """A read-only block: a deferred transaction on SQLite (readers never block each other),
        autocommit statements on PostgreSQL. Nothing written here would be atomic on PostgreSQL."""
        async with self._reads.connect() as conn, conn.begin():
            yield conn

    @asynccontextmanager
    async def read_consistent(self) -> AsyncIterator[AsyncConnection]:
        """A read-only block whose statements all see the database as of one moment: a REPEATABLE
        READ transaction on PostgreSQL (a read-only one never fails to serialise), the deferred
        transaction of ``read()`` on SQLite (a WAL reader's view is fixed at its first read)."""
        if self.is_sqlite:
            async with self.read() as conn:
                yield conn
            return
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="REPEATABLE READ")
            async with conn.begin():
                yield conn

    async def read_one(self, read: DirectStatement, **params: Any) -> dict[str, Any] | None:
        """One row of a fixed SELECT by the direct path (``db/direct.py``), as the engine would give it."""
        if self._direct is None:
            async with self.read() as conn:
                row = (await conn.execute(read.statement, params)).mappings().first()
            return dict(row) if row is not None else None
        return await self._direct.one(read.compiled(self.engine.dialect), params)

    async def read_all_raw(self, read: DirectStatement, **params: Any) -> list[Any] | None:
        """Every row of a fixed SELECT as the driver decodes it (no SQLAlchemy type processing), on
        PostgreSQL by the direct path; None elsewhere (the caller reads through ``read()``)."""
        if isinstance(self._direct, PostgresDirect):
            return await self._direct.all_raw(read.compiled(self.engine.dialect), params)
        return None

    async def write_one(self, statement: DirectStatement, **params: Any) -> dict[str, Any] | None:
        """Run one statement that is atomic by itself (e.g. a data-modifying WITH) and answer its
        first row: on PostgreSQL by the direct path in autocommit (no BEGIN/COMMIT round trips, and
        row locks held only while PostgreSQL executes and commits it), never retried; elsewhere in a
        ``write()`` transaction of its own. Frozen at the two booking statements that were measured
        (``bookings/fast_paths.py``): a new write uses ``write()``, the general path."""
        if isinstance(self._direct, PostgresDirect):
            return await self._direct.one(statement.compiled(self.engine.dialect), params, write=True)
        async with self.write() as conn:
            row = (await conn.execute(statement.statement, params)).mappings().first()
        return dict(row) if row is not None else None

    async def write_all(self, steps: Sequence[tuple[DirectStatement, dict[str, Any]]]) -> list[dict[str, Any]] | None:
        """Run several statements, each atomic by itself and answering one row, all or nothing: in
        ONE transaction, rolled back when any of them answers no row (then None) or raises. On
        PostgreSQL by the direct path (``PostgresDirect.all_or_nothing``: BEGIN, the statements,
        COMMIT; never retried), elsewhere in a ``write()`` transaction. Answers each statement's row.

        Why: a return trip's pair is the one-statement create (``bookings/fast_paths.py``) once per
        leg; through the engine's general transaction it cost 2.87x one create's CPU
        (docs/operations/performance-history.md#return-trips). Frozen with ``write_one``: that create statement is its
        only step."""
        if isinstance(self._direct, PostgresDirect):
            dialect = self.engine.dialect
            return await self._direct.all_or_nothing([(s.compiled(dialect), params) for s, params in steps])
        rows: list[dict[str, Any]] = []
        try:
            async with self.write() as conn:
                for statement, params in steps:
                    row = (await conn.execute(statement.statement, params)).mappings().first()
                    if row is None:
                        raise _NoRow()
                    rows.append(dict(row))
        except _NoRow:
            return None
        return rows

    async def write_one_unflushed(self, statement: DirectStatement, **params: Any) -> dict[str, Any] | None:
        """``write_one`` for rows that may be lost in a PostgreSQL crash (searches, a new flight's
        watch): its COMMIT does not wait for the WAL to reach the disk (``synchronous_commit=off``, on
        connections of their own, so the setting can never reach a booking or a wallet write).

        Why: that flush is most of a search's store time and all of its outliers on this disk
        (commits stalled 40-360 ms together, docs/operations/performance-history.md#profile). What it risks: after a
        PostgreSQL crash, not an API crash, the last ~0.6 s of such commits (3 x wal_writer_delay) may
        be gone. A row written later and committed durably (a booking of that search) flushes
        everything before it in the WAL, so nothing durable can ever refer to a lost row.
        SQLite (WAL, synchronous=NORMAL) already commits without a flush: the same as ``write_one``."""
        if self._relaxed is not None:
            return await self._relaxed.one(statement.compiled(self.engine.dialect), params, write=True)
        return await self.write_one(statement, **params)

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction; on SQLite it takes the write lock up front (BEGIN IMMEDIATE)."""
        async with self.engine.connect() as conn:
            if self.is_sqlite:
                conn = await conn.execution_options(transfers_write=True)
            async with conn.begin():
                yield conn

    async def sqlite_write(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        """SQLite only: run ``work`` on the pinned pooled connection's own ``sqlite3`` connection
        (``_pin_writer``), inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` (ROLLBACK if it raises), all in
        one call on aiosqlite's worker thread.

        Why: through the engine every statement of a transaction is a hop to that thread and back
        (a queue put, a thread wake-up, a callback on the loop) plus SQLAlchemy's execution
        context; storing a search (BEGIN, INSERT, executemany, COMMIT) paid that four times
        (docs/operations/performance-history.md#profile). ``work`` gets plain DB-API values: the caller processes its
        parameters as the engine would (``db/direct.py``'s compiled statements). Same locking as
        ``write()``: the write lock is taken up front and waited for on the worker thread, never on
        the event loop's."""
        driver = self._writer_driver or await self._pin_writer()

        def transaction() -> _T:
            db: sqlite3.Connection = driver._conn
            db.execute("BEGIN IMMEDIATE")
            try:
                result = work(db)
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
            return result

        return await driver._execute(transaction)  # type: ignore[no-any-return]

    async def _pin_writer(self) -> Any:
        """The connection ``sqlite_write`` uses, checked out of the pool once and kept:
        checking one out per write cost a greenlet hop and a pool checkout, and its return a ROLLBACK,
        one more trip to aiosqlite's thread on the search's path, after the COMMIT. Writes through it
        queue on its one worker thread, each a whole BEGIN IMMEDIATE ... COMMIT; SQLite serialises
        writers anyway. Returned to the pool by ``dispose``."""
        conn = await self.engine.connect()
        raw = await conn.get_raw_connection()
        if self._writer_driver is not None:  # another write pinned one meanwhile: keep that one
            await conn.close()
            return self._writer_driver
        self._writer = conn
        self._writer_driver = raw.driver_connection  # aiosqlite.Connection (aiosqlite is pinned: _execute, _conn)
        return self._writer_driver

    async def ping(self) -> None:
        async with self.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._writer is not None:
            writer, self._writer, self._writer_driver = self._writer, None, None
            await writer.close()
        if self._direct is not None:
            await self._direct.close()
        if self._relaxed is not None:
            await self._relaxed.close()
        await self.engine.dispose()


def _ping_after_idle(engine: AsyncEngine) -> None:
    """Check a pooled connection before use only when it sat idle for ``PING_AFTER_IDLE_SECONDS``.

    SQLAlchemy's ``pool_pre_ping`` pings on every checkout: one round trip per read block and per
    transaction, 6-8 % of a create or a search under load (docs/operations/performance-history.md#profile). A
    connection that was in use a moment ago is almost surely alive; if it is not (the server
    restarted within that second), its first statement fails as a disconnect, SQLAlchemy
    invalidates the whole pool and the request gets 503 UNAVAILABLE with nothing written, as when
    the server dies mid-request. A connection idle for longer is pinged as before, and a dead one
    is replaced before use (``InvalidatePoolError`` makes the pool reconnect and retry).

    The ping is asyncpg's ``;`` sent alone: outside autocommit the adapter wraps it in
    BEGIN/ROLLBACK (for pgbouncer's transaction mode, which this service does not use), three round
    trips instead of one."""
    sync_engine = engine.sync_engine
    dialect = sync_engine.dialect

    def _idle_now(_dbapi_connection: Any, record: Any) -> None:
        record.info["transfers_idle_since"] = time.monotonic()

    event.listen(sync_engine, "connect", _idle_now)
    event.listen(sync_engine, "checkin", _idle_now)

    @event.listens_for(sync_engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.get("transfers_idle_since")
        if idle_since is not None and time.monotonic() - idle_since < PING_AFTER_IDLE_SECONDS:
            return
        dbapi_connection.autocommit = True
        try:
            dialect.do_ping(dbapi_connection)
        except dialect.loaded_dbapi.Error as error:
            if dialect.is_disconnect(error, dbapi_connection, None):
                raise sa_exc.InvalidatePoolError() from error
            raise
        finally:
            with contextlib.suppress(Exception):
                dbapi_connection.autocommit = False


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
