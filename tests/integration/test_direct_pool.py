"""The direct connections of PostgreSQL (``db/direct.py``, ``PostgresDirect``): bounded, reused,
replaced when the server cut them, closed when idle, bounded waiting; writes typed as the engine
types them, pinged after idling, never retried."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from sqlalchemy import JSON, Integer, bindparam, func, insert, literal, select, true
from sqlalchemy.exc import IntegrityError

from tests.conftest import PG_URL
from transfers.db import direct as direct_module
from transfers.db.direct import DirectStatement, PostgresDirect
from transfers.db.errors import is_database_unavailable
from transfers.db.tables import cancellation_reasons
from transfers.db.types import Money, UTCDateTime

pytestmark = pytest.mark.pg_only

REASON = DirectStatement(
    select(cancellation_reasons.c.id, cancellation_reasons.c.name).where(cancellation_reasons.c.id == bindparam("id"))
)
APP = "transfers-direct-pool-test"


def _dsn() -> str:
    return PG_URL


async def _backends(admin: asyncpg.Connection) -> list[int]:
    rows = await admin.fetch("SELECT pid FROM pg_stat_activity WHERE application_name = $1", APP)
    return [r["pid"] for r in rows]


@pytest.fixture
async def reader_and_dialect() -> tuple[PostgresDirect, object]:
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    return PostgresDirect(_dsn(), max_size=3, timeout=2.0, application_name=APP), dialect()


async def test_at_most_max_size_connections_and_they_are_reused(reader_and_dialect: tuple) -> None:
    reader, dialect = reader_and_dialect
    compiled = REASON.compiled(dialect)
    admin = await asyncpg.connect(_dsn())
    try:
        rows = await asyncio.gather(*(reader.one(compiled, {"id": 1 + n % 5}) for n in range(60)))
        assert [r["id"] for r in rows if r is not None] == [1 + n % 5 for n in range(60)]
        assert 1 <= len(await _backends(admin)) <= 3
        before = set(await _backends(admin))
        for _ in range(20):
            await reader.one(compiled, {"id": 1})
        assert set(await _backends(admin)) == before  # reused, not reopened
    finally:
        await reader.close()
        await asyncio.sleep(0.2)
        assert await _backends(admin) == []
        await admin.close()


async def test_connections_cut_by_the_server_are_replaced_and_the_read_succeeds(reader_and_dialect: tuple) -> None:
    reader, dialect = reader_and_dialect
    compiled = REASON.compiled(dialect)
    admin = await asyncpg.connect(_dsn())
    try:
        await asyncio.gather(*(reader.one(compiled, {"id": 1}) for _ in range(3)))
        cut = await _backends(admin)
        assert cut
        for pid in cut:  # what a PostgreSQL restart does to every idle connection
            await admin.execute("SELECT pg_terminate_backend($1)", pid)
        await asyncio.sleep(0.2)
        row = await reader.one(compiled, {"id": 2})
        assert row is not None and row["id"] == 2
        assert not set(await _backends(admin)) & set(cut)
    finally:
        await reader.close()
        await admin.close()


async def test_idle_connections_are_closed_after_idle_seconds(reader_and_dialect: tuple) -> None:
    reader, dialect = reader_and_dialect
    reader.IDLE_SECONDS = 0.2
    compiled = REASON.compiled(dialect)
    admin = await asyncpg.connect(_dsn())
    try:
        await asyncio.gather(*(reader.one(compiled, {"id": 1}) for _ in range(3)))
        first = set(await _backends(admin))
        await asyncio.sleep(0.4)
        await reader.one(compiled, {"id": 1})  # takes a fresh one, closes the expired ones
        await asyncio.sleep(0.2)
        now = set(await _backends(admin))
        assert len(now) == 1 and not now & first
    finally:
        await reader.close()
        await admin.close()


async def test_waiting_for_a_connection_is_bounded(reader_and_dialect: tuple) -> None:
    _, dialect = reader_and_dialect
    reader = PostgresDirect(_dsn(), max_size=1, timeout=0.3, application_name=APP)
    compiled = REASON.compiled(dialect)
    try:
        admin = await asyncpg.connect(_dsn())
        try:
            # Hold the only connection with a lock the read must wait for.
            await admin.execute("BEGIN; LOCK TABLE cancellation_reasons IN ACCESS EXCLUSIVE MODE")
            first = asyncio.create_task(reader.one(compiled, {"id": 1}))
            await asyncio.sleep(0.1)
            with pytest.raises(TimeoutError):
                await reader.one(compiled, {"id": 1})
            await admin.execute("ROLLBACK")
            assert (await first) is not None
        finally:
            await admin.close()
    finally:
        await reader.close()


# --- writes (``Database.write_one``): never retried, an idle connection pinged first --------------


def _echo() -> DirectStatement:
    """A statement that hands its typed parameters back: what goes in through the bind processors
    must come out through the result processors unchanged."""
    return DirectStatement(
        select(
            bindparam("money", type_=Money).label("money"),
            bindparam("at", type_=UTCDateTime).label("at"),
            bindparam("doc", type_=JSON).label("doc"),
            literal("fixed").label("fixed"),
        )
    )


async def test_a_write_sends_typed_values_as_the_engine_would(reader_and_dialect: tuple) -> None:
    reader, dialect = reader_and_dialect
    at = datetime(2026, 5, 1, 12, 30, tzinfo=timezone(timedelta(hours=2)))
    doc = {"name": "Zoë ✈", "n": [1, 2.5, None], "ok": True}
    try:
        row = await reader.one(_echo().compiled(dialect), {"money": Decimal("12.3"), "at": at, "doc": doc}, write=True)
        assert row == {"money": Decimal("12.30"), "at": at.astimezone(UTC), "doc": doc, "fixed": "fixed"}
        assert row["at"].tzinfo is UTC and row["money"] == Decimal("12.30")
        with pytest.raises(ValueError, match="timezone-aware"):  # UTCDateTime's own check still runs
            await reader.one(_echo().compiled(dialect), {"money": 1, "at": datetime(2026, 5, 1), "doc": {}}, write=True)
    finally:
        await reader.close()


async def test_a_write_on_a_connection_the_server_cut_while_idle_pings_and_uses_a_new_one(
    reader_and_dialect: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, dialect = reader_and_dialect
    monkeypatch.setattr(direct_module, "PING_AFTER_IDLE_SECONDS", 0.1)
    compiled = REASON.compiled(dialect)
    admin = await asyncpg.connect(_dsn())
    try:
        await reader.one(compiled, {"id": 1})
        cut = await _backends(admin)
        assert len(cut) == 1
        await admin.execute("SELECT pg_terminate_backend($1)", cut[0])
        await asyncio.sleep(0.2)  # idle past the threshold: the write pings first, finds it dead
        row = await reader.one(compiled, {"id": 3}, write=True)
        assert row is not None and row["id"] == 3
        assert len(now := await _backends(admin)) == 1 and now != cut
    finally:
        await reader.close()
        await admin.close()


async def test_a_write_cut_mid_statement_is_not_retried(reader_and_dialect: tuple) -> None:
    """It may have committed before the connection broke: the caller gets the error (a 503 to the
    client), never a second execution."""
    reader, dialect = reader_and_dialect
    slow = DirectStatement(select(func.pg_sleep(2).label("slept"), literal(1).label("one")))
    admin = await asyncpg.connect(_dsn())
    try:
        task = asyncio.create_task(reader.one(slow.compiled(dialect), {}, write=True))
        running: list[int] = []
        for _ in range(50):
            await asyncio.sleep(0.05)
            running = [
                r["pid"]
                for r in await admin.fetch(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep%'"
                    " AND state = 'active'",
                    APP,
                )
            ]
            if running:
                break
        assert running
        await admin.execute("SELECT pg_terminate_backend($1)", running[0])
        with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError)) as raised:
            await task
        assert is_database_unavailable(raised.value)
        assert (
            await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep%'"
                " AND state = 'active'",
                APP,
            )
            == 0
        )  # no second run
    finally:
        await reader.close()
        await admin.close()


async def test_an_integrity_violation_is_sqlalchemys_and_leaves_the_connection_usable(
    reader_and_dialect: tuple,
) -> None:
    reader, dialect = reader_and_dialect
    duplicate = DirectStatement(
        select(literal(1).label("n")).add_cte(
            insert(cancellation_reasons)
            .from_select(
                ["id", "name", "position", "active"],
                select(bindparam("id", type_=Integer), literal("again"), literal(99), true()),
            )
            .cte("i")
        )
    )
    admin = await asyncpg.connect(_dsn())
    try:
        with pytest.raises(IntegrityError) as raised:
            await reader.one(duplicate.compiled(dialect), {"id": 1}, write=True)
        assert isinstance(raised.value.orig, asyncpg.UniqueViolationError)
        assert not is_database_unavailable(raised.value)
        before = await _backends(admin)
        assert (await reader.one(REASON.compiled(dialect), {"id": 2})) is not None
        assert await _backends(admin) == before  # the same connection served the next statement
    finally:
        await reader.close()
        await admin.close()


async def test_only_unflushed_writes_skip_the_wal_flush(database_url: str) -> None:
    """Searches commit without waiting for the WAL flush; bookings, wallets and reads never do: the
    setting lives on connections of their own, so it cannot leak into a durable write."""
    from transfers.db.engine import Database

    setting = DirectStatement(select(func.current_setting("synchronous_commit").label("value")))
    db = Database(database_url, pool_size=4, application_name=APP)
    admin = await asyncpg.connect(_dsn())
    try:
        for _ in range(3):  # interleaved, on reused connections
            assert (await db.write_one_unflushed(setting)) == {"value": "off"}
            assert (await db.write_one(setting)) == {"value": "on"}
            assert (await db.read_one(setting)) == {"value": "on"}
        many = await asyncio.gather(*(db.write_one_unflushed(setting) for _ in range(12)))
        assert many == [{"value": "off"}] * 12
        assert len(await _backends(admin)) <= 4 + 2  # the direct pool's 4 and the unflushed writes' 2
    finally:
        await db.dispose()
        await admin.close()


async def test_a_write_right_after_the_server_closed_an_idle_connection_uses_a_new_one(
    reader_and_dialect: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the no-ping second: a connection the server closed (a restart) is noticed as closed
    and never used, so the write runs once, on a new connection (it was a 500 under a crash test)."""
    reader, dialect = reader_and_dialect
    monkeypatch.setattr(direct_module, "PING_AFTER_IDLE_SECONDS", 60.0)
    admin = await asyncpg.connect(_dsn())
    try:
        await reader.one(REASON.compiled(dialect), {"id": 1})
        cut = await _backends(admin)
        await admin.execute("SELECT pg_terminate_backend($1)", cut[0])
        await asyncio.sleep(0.2)
        row = await reader.one(REASON.compiled(dialect), {"id": 4}, write=True)
        assert row is not None and row["id"] == 4
        assert set(await _backends(admin)).isdisjoint(cut)
    finally:
        await reader.close()
        await admin.close()


async def test_a_parameter_asyncpg_cannot_encode_is_not_a_dead_connection(reader_and_dialect: tuple) -> None:
    """Client-side encoding errors are raised as they are, never retried, and keep the connection."""
    reader, dialect = reader_and_dialect
    admin = await asyncpg.connect(_dsn())
    try:
        await reader.one(REASON.compiled(dialect), {"id": 1})
        before = await _backends(admin)
        with pytest.raises(asyncpg.exceptions.DataError, match="invalid input for query argument") as raised:
            await reader.one(REASON.compiled(dialect), {"id": "not a number"})
        assert not is_database_unavailable(raised.value)
        assert (await reader.one(REASON.compiled(dialect), {"id": 2})) is not None
        assert await _backends(admin) == before  # the same connection, kept
    finally:
        await reader.close()
        await admin.close()


class _LateCloseProxy:
    """A TCP proxy in front of PostgreSQL that passes the server's bytes at once but its closing of
    the connection only ``delay`` s later: what a busy machine does between a terminated backend's
    FATAL message and its socket's end, made certain."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self, upstream: str) -> str:
        parts = urlsplit(upstream)
        self.server = await asyncio.start_server(
            lambda r, w: self._connection(r, w, parts.hostname or "127.0.0.1", parts.port or 5432), "127.0.0.1", 0
        )
        port = self.server.sockets[0].getsockname()[1]
        return urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{port}"))

    async def _connection(
        self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter, host: str, port: int
    ) -> None:
        server_r, server_w = await asyncio.open_connection(host, port)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, late: float) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            await asyncio.sleep(late)
            sink.close()

        task = asyncio.ensure_future(
            asyncio.gather(pipe(client_r, server_w, 0.0), pipe(server_r, client_w, self.delay), return_exceptions=True)
        )
        self.tasks.add(task)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
async def test_an_idle_connection_terminated_before_its_close_is_seen_is_replaced(
    reader_and_dialect: tuple, write: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pg_terminate_backend`` of an idle connection: the server's FATAL message is read at once and
    leaves asyncpg's protocol waiting for the end of an error, but the socket's close may be seen
    only later (here 1 s, through a proxy; under the soak's load, a few ms). The next statement took
    that connection and asyncpg refused it ("cannot switch to state 12; another operation (2) is in
    progress"): a 500 to a partner's driver event in the soak. Now the connection is thrown away and
    the statement runs on a new one: a read always may, and so may a write here, since nothing of it
    was sent."""
    _, dialect = reader_and_dialect
    monkeypatch.setattr(direct_module, "PING_AFTER_IDLE_SECONDS", 60.0)  # the no-ping second, made long
    proxy = _LateCloseProxy(delay=1.0)
    reader = PostgresDirect(await proxy.start(_dsn()), max_size=1, timeout=5.0, application_name=APP)
    admin = await asyncpg.connect(_dsn())
    try:
        await reader.one(REASON.compiled(dialect), {"id": 1})
        cut = await _backends(admin)
        assert len(cut) == 1
        await admin.execute("SELECT pg_terminate_backend($1)", cut[0])
        await asyncio.sleep(0.2)  # the FATAL message is in; the close is not yet
        row = await reader.one(REASON.compiled(dialect), {"id": 2}, write=write)
        assert row is not None and row["id"] == 2
        assert set(await _backends(admin)).isdisjoint(cut)
    finally:
        await reader.close()
        await admin.close()
        await proxy.close()


async def test_a_transaction_on_an_idle_connection_terminated_before_its_close_is_seen_runs_on_a_new_one(
    reader_and_dialect: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same for ``all_or_nothing`` (a return trip's two legs): its BEGIN was never sent."""
    _, dialect = reader_and_dialect
    monkeypatch.setattr(direct_module, "PING_AFTER_IDLE_SECONDS", 60.0)
    proxy = _LateCloseProxy(delay=1.0)
    reader = PostgresDirect(await proxy.start(_dsn()), max_size=1, timeout=5.0, application_name=APP)
    admin = await asyncpg.connect(_dsn())
    try:
        await reader.one(REASON.compiled(dialect), {"id": 1})
        cut = await _backends(admin)
        await admin.execute("SELECT pg_terminate_backend($1)", cut[0])
        await asyncio.sleep(0.2)
        compiled = REASON.compiled(dialect)
        rows = await reader.all_or_nothing([(compiled, {"id": 3}), (compiled, {"id": 4})])
        assert rows is not None and [r["id"] for r in rows] == [3, 4]
    finally:
        await reader.close()
        await admin.close()
        await proxy.close()
