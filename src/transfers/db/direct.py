"""Direct one-row reads for the hottest path (GET booking), below SQLAlchemy's execution layer.

Why this exists: a read through the async engine costs ~0.5 ms of Python on top of the query
(pool checkout and return, the pre-ping round trip, greenlet hops, result processing), which was
most of a GET booking's CPU (bench/README.md, "Profile"). Here a statement is still written as a
SQLAlchemy ``Select`` (one schema, one place), but it is compiled once per dialect into its SQL
text, its parameter order and the result processors of its columns, and then run:

* on PostgreSQL on a few plain asyncpg connections of its own (prepared statements cached by
  asyncpg, no pre-ping: a read that meets a dead connection is retried once on a fresh one, which
  a read may always be);
* on a SQLite file with one ``sqlite3`` connection on the event loop's thread (a primary-key
  read takes microseconds, less than the thread hop aiosqlite needs; WAL readers never wait
  for writers);
* on an in-memory SQLite database (tests) through the engine, like every other read.

The rows come out exactly as the engine would give them (same type processors: ``Money`` as
``Decimal``, instants as aware UTC datetimes, JSON decoded), which tests/unit/test_direct_reads.py
checks column by column. Only reads go this way; every write keeps the engine's transactions.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import orjson
from sqlalchemy import Select
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine

Processor = Callable[[Any], Any] | None

# Errors after which the same read, on a new connection, can succeed: the server restarted or the
# connection was cut while it sat in the pool.
_RETRYABLE = (asyncpg.exceptions.ConnectionDoesNotExistError, asyncpg.exceptions.InterfaceError,
              asyncpg.exceptions.PostgresConnectionError, ConnectionError)


@dataclass
class CompiledRead:
    sql: str
    parameters: tuple[str, ...]
    keys: tuple[str, ...]
    types: tuple[TypeEngine[Any], ...]
    dialect: Dialect
    processors: tuple[Processor, ...] | None = None

    def arguments(self, params: dict[str, Any]) -> list[Any]:
        return [params[name] for name in self.parameters]

    def set_column_types(self, coltypes: Sequence[Any]) -> None:
        """The engine picks a column's result processor by the type code the driver reports
        (asyncpg: the column's OID, e.g. NUMERIC's), so the same is done here, once."""
        self.processors = tuple(t.dialect_impl(self.dialect).result_processor(self.dialect, coltype)
                                for t, coltype in zip(self.types, coltypes, strict=True))

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        if self.processors is None:
            self.set_column_types([None] * len(self.types))
        assert self.processors is not None
        return {key: (proc(value) if proc is not None and value is not None else value)
                for key, proc, value in zip(self.keys, self.processors, values, strict=True)}


class DirectRead:
    """One fixed SELECT, compiled lazily for each dialect it runs on."""

    def __init__(self, statement: Select[Any]) -> None:
        self.statement = statement
        self._compiled: dict[str, CompiledRead] = {}

    def compiled(self, dialect: Dialect) -> CompiledRead:
        found = self._compiled.get(dialect.name)
        if found is None:
            compiled = self.statement.compile(dialect=dialect)
            columns = list(self.statement.selected_columns)
            found = CompiledRead(sql=compiled.string, parameters=tuple(compiled.positiontup or ()),
                                 keys=tuple(str(c.key) for c in columns), types=tuple(c.type for c in columns),
                                 dialect=dialect)
            self._compiled[dialect.name] = found
        return found


class PostgresReader:
    """A small pool of asyncpg connections of its own, for single autocommit SELECTs only.

    Not ``asyncpg.Pool``: its acquire/release machinery (proxy objects, reset query, an inactivity
    timer re-armed on every release) cost ~55 µs a read against ~27 µs for the ``fetchrow`` itself
    (measured on this machine), i.e. ~9 % of a GET booking. What these reads need is simpler:
    at most ``max_size`` connections in use (a semaphore; waiting for one is bounded by
    ``timeout``, then it is the same 503 as the engine's pool timeout), idle ones reused last-in
    first-out and closed after ``IDLE_SECONDS`` unused, any connection that saw a connection-level
    error or a cancellation thrown away, and after a connection error every idle one too (a
    restarted server has cut them all) before the one retry."""

    IDLE_SECONDS = 300.0

    def __init__(self, dsn: str, *, max_size: int, timeout: float, application_name: str) -> None:
        self._dsn = dsn
        self._timeout = timeout
        self._application_name = application_name
        self._max_size = max_size
        self._slots: asyncio.Semaphore | None = None
        self._idle: deque[tuple[asyncpg.Connection, float]] = deque()
        self._closed = False

    async def _connect(self) -> asyncpg.Connection:
        conn = await asyncpg.connect(self._dsn, timeout=self._timeout, command_timeout=30,
                                     server_settings={"application_name": self._application_name})
        await _init_connection(conn)
        return conn

    def _take_idle(self) -> asyncpg.Connection | None:
        now = time.monotonic()
        while self._idle and now - self._idle[0][1] > self.IDLE_SECONDS:
            self._idle.popleft()[0].terminate()
        return self._idle.pop()[0] if self._idle else None

    def _drop_idle(self) -> None:
        while self._idle:
            self._idle.pop()[0].terminate()

    async def one(self, read: CompiledRead, params: dict[str, Any]) -> dict[str, Any] | None:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_size)
        slots = self._slots
        if slots.locked():
            async with asyncio.timeout(self._timeout):
                await slots.acquire()
        else:
            await slots.acquire()
        try:
            record = await self._fetch(read, read.arguments(params))
        finally:
            slots.release()
        return None if record is None else read.row(record)

    async def _fetch(self, read: CompiledRead, arguments: list[Any]) -> Any:
        for attempt in (1, 2):
            conn = self._take_idle()
            if conn is None:
                conn = await self._connect()
            try:
                if read.processors is None:
                    prepared = await conn.prepare(read.sql)
                    read.set_column_types([a.type.oid for a in prepared.get_attributes()])
                record = await conn.fetchrow(read.sql, *arguments)
            except _RETRYABLE:
                conn.terminate()
                self._drop_idle()
                if attempt == 2:
                    raise
                continue
            except BaseException as exc:
                # A cancelled read may leave its connection mid-protocol; a query error (a bad
                # parameter, a statement timeout) leaves it usable.
                if isinstance(exc, asyncpg.PostgresError) and not conn.is_closed():
                    self._release(conn)
                else:
                    conn.terminate()
                raise
            self._release(conn)
            return record
        raise AssertionError("unreachable")

    def _release(self, conn: asyncpg.Connection) -> None:
        if self._closed or conn.is_closed():
            conn.terminate()
        else:
            self._idle.append((conn, time.monotonic()))

    async def close(self) -> None:
        self._closed = True
        while self._idle:
            conn = self._idle.pop()[0]
            try:
                await asyncio.wait_for(conn.close(), timeout=2)
            except Exception:
                conn.terminate()


class SqliteReader:
    """One read-only-by-use ``sqlite3`` connection, opened on first use, used only on the loop's
    thread (so never concurrently). A short busy timeout: a WAL reader waits only in the rare
    moments SQLite resets the WAL, and never for a writer."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=200")
            conn.execute("PRAGMA query_only=ON")
            self._conn = conn
        return self._conn

    async def one(self, read: CompiledRead, params: dict[str, Any]) -> dict[str, Any] | None:
        values = self._connection().execute(read.sql, read.arguments(params)).fetchone()
        return None if values is None else read.row(values)

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()


async def _init_connection(conn: asyncpg.Connection) -> None:
    """Decode json/jsonb as SQLAlchemy's asyncpg dialect does, so its (then empty) JSON result
    processors give the same values."""
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, schema="pg_catalog", format="text",
                                  encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads)
