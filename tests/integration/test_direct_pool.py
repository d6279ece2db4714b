"""The direct-read connections of PostgreSQL (``db/direct.py``, ``PostgresReader``): bounded,
reused, replaced when the server cut them, closed when idle, bounded waiting."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from sqlalchemy import bindparam, select

from tests.conftest import PG_URL
from transfers.db.direct import DirectRead, PostgresReader
from transfers.db.tables import cancellation_reasons

pytestmark = pytest.mark.pg_only

REASON = DirectRead(select(cancellation_reasons.c.id, cancellation_reasons.c.name)
                    .where(cancellation_reasons.c.id == bindparam("id")))
APP = "transfers-direct-pool-test"


def _dsn() -> str:
    return PG_URL.replace("postgresql+asyncpg://", "postgresql://")


async def _backends(admin: asyncpg.Connection) -> list[int]:
    rows = await admin.fetch("SELECT pid FROM pg_stat_activity WHERE application_name = $1", APP)
    return [r["pid"] for r in rows]


@pytest.fixture
async def reader_and_dialect() -> tuple[PostgresReader, object]:
    from sqlalchemy.dialects.postgresql.asyncpg import dialect

    return PostgresReader(_dsn(), max_size=3, timeout=2.0, application_name=APP), dialect()


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
    reader = PostgresReader(_dsn(), max_size=1, timeout=0.3, application_name=APP)
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
