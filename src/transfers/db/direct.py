"""Direct one-row statements for the hottest paths, below SQLAlchemy's execution layer.

Why this exists: a statement through the async engine costs ~0.5 ms of Python on top of the query
(pool checkout and return, greenlet hops, parameter and result processing), which was most of a
GET booking's CPU and a third of a create's (docs/operations/performance-history.md#profile). Here a statement is still
written as a SQLAlchemy ``Select`` (one schema, one place; data-modifying CTEs included), but it is
compiled once per dialect into its SQL text, its parameter order with the parameters' bind
processors and literal values, and the result processors of its columns, and then run:

* on PostgreSQL on a few plain asyncpg connections of its own, in autocommit (prepared statements
  cached by asyncpg). A read that meets a dead connection is retried once on a fresh one, which a
  read may always be. A write never is (it may have committed before the connection broke), unless
  asyncpg refused to send it at all (``_unsent``); it pings a connection that sat idle first, as the
  engine does (``PING_AFTER_IDLE_SECONDS``);
* on a SQLite file, reads only, with one ``sqlite3`` connection on the event loop's thread (a
  primary-key read takes microseconds, less than the thread hop aiosqlite needs; WAL readers never
  wait for writers);
* otherwise (in-memory SQLite in tests, and every SQLite write) through the engine.

Values go in and come out exactly as through the engine (same type processors: ``Money`` as
``Decimal``, instants as aware UTC datetimes, JSON encoded and decoded with the same functions),
which tests/api/test_direct_reads.py checks column by column. Only single statements that are
atomic on their own come this way: anything needing a transaction keeps the engine's.

The durable writes that come this way are frozen at the two booking statements that were measured
(``bookings/fast_paths.py``: the create and the partner's acknowledgement), each run alone in
autocommit (``Database.write_one``), and the create statement once per leg of a return trip in one
transaction (``Database.write_all``, ``PostgresDirect.all_or_nothing``: BEGIN, each leg's statement,
COMMIT, or ROLLBACK when a leg's debit does not fit). Why the pair: through the engine's general
transaction it cost 2.87x one create's CPU (8.08 / 2.82 ms, docs/operations/performance-history.md#return-trips; target
1.6x), and the same frozen SQL twice writes it with no new statement to keep equal. New writes use
the engine's general transaction path: a write here is a second copy of what the general path
writes, kept equal only by a PostgreSQL test of its own (tests/unit/test_fast_paths_frozen.py fails
on a third statement or another caller).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import orjson
from sqlalchemy import Select
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeEngine

from transfers.db.errors import UNAVAILABLE_SQLSTATES

Processor = Callable[[Any], Any] | None

# Errors after which the same read, on a new connection, can succeed: the server restarted or the
# connection was cut while it sat in the pool.
_RETRYABLE = (
    asyncpg.exceptions.ConnectionDoesNotExistError,
    asyncpg.exceptions.InterfaceError,
    asyncpg.exceptions.PostgresConnectionError,
    ConnectionError,
)


def _broken(exc: BaseException) -> bool:
    """Whether the connection that raised ``exc`` is done for: a client-side connection error, a
    server error that ends the session (``pg_terminate_backend``'s 57P01, a crash or a shutdown,
    class 08), or asyncpg's ``InternalClientError``. The last one is what an idle connection whose
    backend was terminated gives: the server's FATAL message is read at once and leaves the protocol
    waiting for the end of an error, but the socket's close may be seen only later (a busy machine), so
    the connection is not ``is_closed()`` yet when the next statement takes it ("cannot switch to state
    12; another operation (2) is in progress": a 500 in the soak's ``pg_terminate_backend``)."""
    if isinstance(exc, (*_RETRYABLE, asyncpg.InternalClientError)):
        return True
    state = getattr(exc, "sqlstate", None)
    return (
        isinstance(exc, asyncpg.PostgresError)
        and isinstance(state, str)
        and (state.startswith("08") or state in UNAVAILABLE_SQLSTATES)
    )


def _unsent(exc: BaseException) -> bool:
    """asyncpg refused to start the statement on a connection still busy with an earlier one (the
    broken idle connection above): nothing was sent, so even a write may run again elsewhere."""
    return isinstance(exc, asyncpg.InternalClientError) and str(exc).startswith("cannot switch to state")


# A pooled connection idle for longer than this is pinged before a write (db/engine.py does the same).
PING_AFTER_IDLE_SECONDS = 1.0


@dataclass
class CompiledStatement:
    sql: str
    parameters: tuple[str, ...]
    keys: tuple[str, ...]
    types: tuple[TypeEngine[Any], ...]
    dialect: Dialect
    processors: tuple[Processor, ...] | None = None
    # Per parameter: its bind processor (None: the value goes as it is) and the value of a literal
    # compiled into the statement (``literal(...)``), used when the caller does not pass that name.
    bind_processors: tuple[Processor, ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)

    def arguments(self, params: dict[str, Any]) -> list[Any]:
        if self.defaults:
            params = {**self.defaults, **params}
        if not self.bind_processors:
            return [params[name] for name in self.parameters]
        return [
            proc(params[name]) if proc is not None else params[name]
            for proc, name in zip(self.bind_processors, self.parameters, strict=True)
        ]

    def set_column_types(self, coltypes: Sequence[Any]) -> tuple[Processor, ...]:
        """The engine picks a column's result processor by the type code the driver reports
        (asyncpg: the column's OID, e.g. NUMERIC's), so the same is done here, once."""
        self.processors = tuple(
            t.dialect_impl(self.dialect).result_processor(self.dialect, coltype)
            for t, coltype in zip(self.types, coltypes, strict=True)
        )
        return self.processors

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        processors = self.processors
        if processors is None:
            processors = self.set_column_types([None] * len(self.types))
        return {
            key: (proc(value) if proc is not None and value is not None else value)
            for key, proc, value in zip(self.keys, processors, values, strict=True)
        }


class DirectStatement:
    """One fixed SELECT (it may carry data-modifying CTEs: then it is a write, run by
    ``Database.write_one``), compiled lazily for each dialect it runs on."""

    def __init__(self, statement: Select[Any]) -> None:
        self.statement = statement
        self._compiled: dict[str, CompiledStatement] = {}

    def compiled(self, dialect: Dialect) -> CompiledStatement:
        found = self._compiled.get(dialect.name)
        if found is None:
            compiled = self.statement.compile(dialect=dialect)
            columns = list(self.statement.selected_columns)
            parameters = tuple(compiled.positiontup or ())
            binds = [compiled.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in parameters]
            found = CompiledStatement(
                sql=compiled.string,
                parameters=parameters,
                keys=tuple(str(c.key) for c in columns),
                types=tuple(c.type for c in columns),
                dialect=dialect,
                bind_processors=tuple(binds) if any(binds) else (),
                defaults={
                    name: compiled.binds[name].effective_value
                    for name in parameters
                    if not compiled.binds[name].required
                },
            )
            self._compiled[dialect.name] = found
        return found


class PostgresDirect:
    """A small pool of asyncpg connections of its own, for single autocommit statements only.

    Not ``asyncpg.Pool``: its acquire/release machinery (proxy objects, reset query, an inactivity
    timer re-armed on every release) cost ~55 µs a read against ~27 µs for the ``fetchrow`` itself
    (measured on this machine), i.e. ~9 % of a GET booking. What these reads need is simpler:
    at most ``max_size`` connections in use (a semaphore; waiting for one is bounded by
    ``timeout``, then it is the same 503 as the engine's pool timeout), idle ones reused last-in
    first-out and closed after ``IDLE_SECONDS`` unused, any connection that saw a connection-level
    error or a cancellation thrown away, and after a connection error every idle one too (a
    restarted server has cut them all) before the one retry."""

    IDLE_SECONDS = 300.0

    def __init__(
        self, dsn: str, *, max_size: int, timeout: float, application_name: str, settings: dict[str, str] | None = None
    ) -> None:
        self._dsn = dsn
        self._timeout = timeout
        self._server_settings = {"application_name": application_name, **(settings or {})}
        self._max_size = max_size
        self._slots: asyncio.Semaphore | None = None
        self._idle: deque[tuple[asyncpg.Connection, float]] = deque()
        self._closed = False

    async def _connect(self) -> asyncpg.Connection:
        conn = await asyncpg.connect(
            self._dsn, timeout=self._timeout, command_timeout=30, server_settings=self._server_settings
        )
        try:
            await _init_connection(conn)
        except BaseException:
            conn.terminate()  # not left to the garbage collector
            raise
        return conn

    def _take_idle(self) -> tuple[asyncpg.Connection, float] | None:
        """The most recently used idle connection and when it went idle; expired ones are closed
        and ones the server closed while they sat here (a restart) dropped on the way."""
        now = time.monotonic()
        while self._idle and now - self._idle[0][1] > self.IDLE_SECONDS:
            self._idle.popleft()[0].terminate()
        while self._idle:
            conn, since = self._idle.pop()
            if not conn.is_closed():
                return conn, since
            conn.terminate()
        return None

    async def _idle_connection(self, *, write: bool) -> asyncpg.Connection | None:
        """An idle connection to use, or None (connect a new one). For a write, one that sat idle
        for ``PING_AFTER_IDLE_SECONDS`` is pinged first (a write is never retried, so it must not
        meet a connection the server closed meanwhile); after a failed ping every idle one is
        dropped."""
        taken = self._take_idle()
        if taken is None:
            return None
        conn, since = taken
        if not write or time.monotonic() - since < PING_AFTER_IDLE_SECONDS:
            return conn
        try:
            await conn.fetchrow(";")  # as SQLAlchemy pings (a simple-protocol ";" breaks asyncpg)
            return conn
        except BaseException as exc:
            conn.terminate()
            if _broken(exc):
                self._drop_idle()
                return None
            raise

    def _drop_idle(self) -> None:
        while self._idle:
            self._idle.pop()[0].terminate()

    async def _slot(self) -> asyncio.Semaphore:
        """One of the ``max_size`` slots (released by the caller), waited for at most ``timeout`` as
        the engine's pool checkout is; no timer is armed when a slot is free (the usual case)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max_size)
        slots = self._slots
        if slots.locked():
            async with asyncio.timeout(self._timeout):
                await slots.acquire()
        else:
            await slots.acquire()
        return slots

    async def one(
        self, statement: CompiledStatement, params: dict[str, Any], *, write: bool = False
    ) -> dict[str, Any] | None:
        """The statement's first row (None: no row). ``write``: never retried, and a connection that
        sat idle is pinged first; an integrity violation is raised as SQLAlchemy's IntegrityError,
        as through the engine."""
        slots = await self._slot()
        try:
            record = await self._fetch(statement, statement.arguments(params), write)
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise sa_exc.IntegrityError(statement.sql, None, exc) from exc
        finally:
            slots.release()
        return None if record is None else statement.row(record)

    async def all_or_nothing(
        self, steps: Sequence[tuple[CompiledStatement, dict[str, Any]]]
    ) -> list[dict[str, Any]] | None:
        """Run ``steps`` in order in ONE transaction on one connection (BEGIN, each statement,
        COMMIT) and answer each one's row (a step answers one row or none); when a statement answers
        no row, ROLLBACK and answer None: nothing of any step stays written. Consecutive steps of the
        same statement go in one round trip (asyncpg's ``fetchmany``: a return trip's two legs when
        their columns are the same), since on this machine a round trip costs about as much of the
        API's CPU as a create statement's own execution (docs/operations/performance-history.md#return-trips).

        For several statements that are each all-or-nothing by themselves (a create statement per
        leg of a return trip, whose debit matches no row when it does not fit) and must also be
        all-or-nothing together. A write: never retried, a connection that sat idle is pinged first.
        On a database error the transaction is rolled back and the connection kept (an integrity
        violation is raised as SQLAlchemy's IntegrityError, as through the engine); on a
        cancellation or a broken connection it is thrown away (the server rolls back an open
        transaction whose connection ends)."""
        arguments = [statement.arguments(params) for statement, params in steps]
        slots = await self._slot()
        try:
            for attempt in (1, 2):
                conn = await self._idle_connection(write=True)
                if conn is None:
                    conn = await self._connect()
                try:
                    rows = await self._transaction(conn, [s for s, _ in steps], arguments)
                except BaseException as exc:
                    # kept only when the error came from the server and ``_transaction`` rolled it back
                    if (
                        isinstance(exc, asyncpg.PostgresError)
                        and not _broken(exc)
                        and not conn.is_closed()
                        and not conn.is_in_transaction()
                    ):
                        self._release(conn)
                    else:
                        conn.terminate()
                    if attempt == 1 and _unsent(exc):  # nothing reached the server: try a new connection
                        self._drop_idle()
                        continue
                    if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
                        raise sa_exc.IntegrityError(steps[0][0].sql, None, exc) from exc
                    raise
                self._release(conn)
                return rows
        finally:
            slots.release()
        raise AssertionError("unreachable")

    @staticmethod
    async def _transaction(
        conn: asyncpg.Connection, statements: list[CompiledStatement], arguments: list[list[Any]]
    ) -> list[dict[str, Any]] | None:
        """``all_or_nothing``'s transaction. A PostgreSQL error is rolled back here and raised (the
        connection stays usable); any other exception leaves the transaction open, and the caller
        throws the connection away."""
        transaction = conn.transaction()
        await transaction.start()
        rows: list[dict[str, Any]] = []
        try:
            for statement, runs in _runs(statements, arguments):
                if statement.processors is None:
                    prepared = await conn.prepare(statement.sql)
                    statement.set_column_types([a.type.oid for a in prepared.get_attributes()])
                if len(runs) == 1:
                    record = await conn.fetchrow(statement.sql, *runs[0])
                    records = [] if record is None else [record]
                else:  # one round trip for all of them (asyncpg pipelines the executions)
                    records = await conn.fetchmany(statement.sql, runs)
                if len(records) != len(runs):  # one of them answered no row
                    await transaction.rollback()
                    return None
                rows.extend(statement.row(record) for record in records)
        except asyncpg.PostgresError:
            with contextlib.suppress(Exception):  # a broken connection: the caller sees it still in a transaction
                await transaction.rollback()
            raise
        await transaction.commit()
        return rows

    async def all_raw(self, statement: CompiledStatement, params: dict[str, Any]) -> list[Any]:
        """Every row of a read as asyncpg's records, without the columns' result processors: for a
        caller that formats the driver's own values (a long statement's lines, where SQLAlchemy's
        per-value processing cost ~0.3 s per 100,000 rows; docs/operations/performance-history.md#statements)."""
        slots = await self._slot()
        try:
            rows: list[Any] = await self._fetch(statement, statement.arguments(params), False, many=True)
        finally:
            slots.release()
        return rows

    async def _fetch(
        self, statement: CompiledStatement, arguments: list[Any], write: bool, *, many: bool = False
    ) -> Any:
        for attempt in (1, 2):
            conn = await self._idle_connection(write=write)
            if conn is None:
                conn = await self._connect()
            try:
                if statement.processors is None:
                    prepared = await conn.prepare(statement.sql)
                    statement.set_column_types([a.type.oid for a in prepared.get_attributes()])
                if many:
                    record = await conn.fetch(statement.sql, *arguments)
                else:
                    record = await conn.fetchrow(statement.sql, *arguments)
            except BaseException as exc:
                if _broken(exc):
                    conn.terminate()
                    self._drop_idle()
                    if attempt == 2 or not isinstance(exc, Exception) or (write and not _unsent(exc)):
                        raise
                    continue
                # A cancelled statement may leave its connection mid-protocol; a query error (a
                # parameter asyncpg cannot encode, a statement timeout) leaves it usable.
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


def _runs(
    statements: list[CompiledStatement], arguments: list[list[Any]]
) -> list[tuple[CompiledStatement, list[list[Any]]]]:
    """Consecutive steps of the same statement grouped, each group with its steps' arguments in order:
    ``all_or_nothing`` runs a group in one round trip (``fetchmany``). Each step answers at most one
    row, so a group answering fewer rows than it has steps had a step answer none."""
    runs: list[tuple[CompiledStatement, list[list[Any]]]] = []
    for statement, args in zip(statements, arguments, strict=True):
        if runs and runs[-1][0] is statement:
            runs[-1][1].append(args)
        else:
            runs.append((statement, [args]))
    return runs


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

    async def one(self, read: CompiledStatement, params: dict[str, Any]) -> dict[str, Any] | None:
        values = self._connection().execute(read.sql, read.arguments(params)).fetchone()
        return None if values is None else read.row(values)

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.close()


def _text(value: str) -> str:
    return value


async def _init_connection(conn: asyncpg.Connection) -> None:
    """Encode and decode json/jsonb as SQLAlchemy's asyncpg dialect does: a JSON parameter arrives
    already serialised by the type's bind processor (the engine's ``json_serializer``), and a value
    read is decoded here, so the (then empty) JSON result processors give the same values."""
    for name in ("json", "jsonb"):
        await conn.set_type_codec(name, schema="pg_catalog", format="text", encoder=_text, decoder=orjson.loads)
