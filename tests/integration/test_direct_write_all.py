"""Several statements all or nothing on a direct connection (``Database.write_all``,
``PostgresDirect.all_or_nothing``; a return trip's legs, ``fast_paths.store_created_many``): committed
together; rolled back together when one answers no row or raises; the connection back in the pool,
outside any transaction, or thrown away when the transaction was cancelled mid-way."""

from __future__ import annotations

import asyncio
import secrets

import asyncpg
import pytest
from sqlalchemy import Boolean, Integer, bindparam, false, func, insert, literal, select, true
from sqlalchemy.exc import IntegrityError

from tests.conftest import PG_URL
from transfers.db.direct import DirectStatement, PostgresDirect
from transfers.db.engine import Database
from transfers.db.tables import cancellation_reasons

pytestmark = pytest.mark.pg_only

APP = "transfers-write-all-test"
R = cancellation_reasons.c


def _insert(*, when: bool = True) -> DirectStatement:
    """An INSERT of one cancellation reason answering its id; ``when=False``: it inserts and answers nothing."""
    values = select(bindparam("id", type_=Integer), literal("write-all"), literal(99), true())
    if not when:
        values = values.where(false())
    made = insert(cancellation_reasons).from_select(["id", "name", "position", "active"], values).returning(R.id)
    cte = made.cte("i")
    return DirectStatement(select(cte.c.id).add_cte(cte))


INSERT, INSERT_NOTHING = _insert(), _insert(when=False)


def _insert_when() -> DirectStatement:
    """An INSERT of one cancellation reason when ``ok`` (answering its id), else nothing."""
    values = select(bindparam("id", type_=Integer), literal("write-all"), literal(99), true()).where(
        bindparam("ok", type_=Boolean)
    )
    cte = (
        insert(cancellation_reasons).from_select(["id", "name", "position", "active"], values).returning(R.id).cte("i")
    )
    return DirectStatement(select(cte.c.id).add_cte(cte))


INSERT_WHEN = _insert_when()
SLOW = DirectStatement(select(func.pg_sleep(5).label("slept"), literal(1).label("one")))


def _dsn() -> str:
    return PG_URL


def _ids(n: int) -> list[int]:
    first = 100_000 + secrets.randbelow(800_000_000)
    return [first + i for i in range(n)]


async def _written(admin: asyncpg.Connection, ids: list[int]) -> list[int]:
    rows = await admin.fetch("SELECT id FROM cancellation_reasons WHERE id = ANY($1::int[]) ORDER BY id", ids)
    return [r["id"] for r in rows]


@pytest.fixture
async def direct(database_url: str) -> tuple[PostgresDirect, object]:  # database_url: the schema is there
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    return PostgresDirect(_dsn(), max_size=2, timeout=2.0, application_name=APP), dialect()


def _pooled(direct: PostgresDirect) -> list[asyncpg.Connection]:
    """The idle connections (the pool's own list): each must be outside any transaction."""
    conns = [conn for conn, _ in direct._idle]
    assert all(not conn.is_in_transaction() and not conn.is_closed() for conn in conns)
    return conns


async def test_every_step_commits_together_and_each_answers_its_row(direct: tuple) -> None:
    pool, dialect = direct
    ids = _ids(3)
    admin = await asyncpg.connect(_dsn())
    try:
        rows = await pool.all_or_nothing([(INSERT.compiled(dialect), {"id": i}) for i in ids])
        assert rows == [{"id": i} for i in ids]
        assert await _written(admin, ids) == ids
        assert len(_pooled(pool)) == 1
    finally:
        await pool.close()
        await admin.close()


async def test_a_step_answering_no_row_rolls_back_the_steps_before_it(direct: tuple) -> None:
    pool, dialect = direct
    ids = _ids(3)
    admin = await asyncpg.connect(_dsn())
    try:
        steps = [
            (INSERT.compiled(dialect), {"id": ids[0]}),
            (INSERT.compiled(dialect), {"id": ids[1]}),
            (INSERT_NOTHING.compiled(dialect), {"id": ids[2]}),
        ]
        assert await pool.all_or_nothing(steps) is None
        assert await _written(admin, ids) == []
        (conn,) = _pooled(pool)
        # the same connection serves the next transaction, which commits
        assert await pool.all_or_nothing([(INSERT.compiled(dialect), {"id": ids[2]})]) == [{"id": ids[2]}]
        assert _pooled(pool) == [conn] and await _written(admin, ids) == [ids[2]]
    finally:
        await pool.close()
        await admin.close()


async def test_steps_of_one_statement_go_together_and_one_without_a_row_rolls_back_them_all(direct: tuple) -> None:
    """Consecutive steps of the same statement run in one round trip (``fetchmany``): a return trip's
    legs. One of them answering no row still rolls back every step, before and after it."""
    pool, dialect = direct
    ids = _ids(4)
    admin = await asyncpg.connect(_dsn())
    try:
        when = INSERT_WHEN.compiled(dialect)
        steps = [(when, {"id": ids[0], "ok": True}), (when, {"id": ids[1], "ok": True})]
        assert await pool.all_or_nothing(steps) == [{"id": ids[0]}, {"id": ids[1]}]
        for failing in (0, 1):  # the first of the group answers no row, then the second
            steps = [(when, {"id": ids[2], "ok": failing != 0}), (when, {"id": ids[3], "ok": failing != 1})]
            assert await pool.all_or_nothing(steps) is None
        assert await _written(admin, ids) == ids[:2]
        assert len(_pooled(pool)) == 1
    finally:
        await pool.close()
        await admin.close()


async def test_a_step_that_raises_rolls_back_and_keeps_the_connection(direct: tuple) -> None:
    pool, dialect = direct
    ids = _ids(2)
    admin = await asyncpg.connect(_dsn())
    try:
        steps = [(INSERT.compiled(dialect), {"id": ids[0]}), (INSERT.compiled(dialect), {"id": 1})]  # 1: taken
        with pytest.raises(IntegrityError) as raised:
            await pool.all_or_nothing(steps)
        assert isinstance(raised.value.orig, asyncpg.UniqueViolationError)
        assert await _written(admin, ids) == []
        (conn,) = _pooled(pool)
        # a parameter asyncpg cannot encode (raised before it is sent) after a step that wrote: rolled back too
        with pytest.raises(asyncpg.exceptions.DataError):
            await pool.all_or_nothing(
                [(INSERT.compiled(dialect), {"id": ids[0]}), (INSERT.compiled(dialect), {"id": "x"})]
            )
        assert await _written(admin, ids) == [] and _pooled(pool) == [conn]
    finally:
        await pool.close()
        await admin.close()


async def test_a_cancelled_transaction_writes_nothing_and_its_connection_is_thrown_away(direct: tuple) -> None:
    pool, dialect = direct
    ids = _ids(1)
    admin = await asyncpg.connect(_dsn())
    try:
        task = asyncio.create_task(
            pool.all_or_nothing([(INSERT.compiled(dialect), {"id": ids[0]}), (SLOW.compiled(dialect), {})])
        )
        for _ in range(50):
            await asyncio.sleep(0.05)
            if await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep%'"
                " AND state = 'active'",
                APP,
            ):
                break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _pooled(pool) == []
        for _ in range(50):  # the server ends the backend, and with it the open transaction
            if not await admin.fetchval("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", APP):
                break
            await asyncio.sleep(0.05)
        assert await _written(admin, ids) == []
    finally:
        await pool.close()
        await admin.close()


async def test_database_write_all_answers_the_rows_or_none(database_url: str) -> None:
    db = Database(database_url, pool_size=2, application_name=APP)
    ids = _ids(3)
    admin = await asyncpg.connect(_dsn())
    try:
        assert await db.write_all([(INSERT, {"id": ids[0]}), (INSERT, {"id": ids[1]})]) == [
            {"id": ids[0]},
            {"id": ids[1]},
        ]
        assert await db.write_all([(INSERT, {"id": ids[2]}), (INSERT_NOTHING, {"id": ids[2] + 1})]) is None
        assert await _written(admin, ids) == ids[:2]
    finally:
        await db.dispose()
        await admin.close()
