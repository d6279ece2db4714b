"""The engine pings a pooled connection only after it sat idle (db/engine.py, ``_ping_after_idle``):
a dead idle connection is replaced before use; a connection cut within the idle window fails its
request as "database unavailable" (503, nothing written) and the next request gets a new one."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.conftest import PG_URL
from transfers.db import engine as engine_module
from transfers.db.engine import Database
from transfers.db.errors import is_database_unavailable

pytestmark = pytest.mark.pg_only
APP = "transfers-ping-test"


async def _cut_all(admin: asyncpg.Connection) -> int:
    pids = [r["pid"] for r in await admin.fetch("SELECT pid FROM pg_stat_activity WHERE application_name = $1", APP)]
    for pid in pids:
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
    return len(pids)


@pytest.fixture
async def database_and_admin(database_url: str) -> tuple[Database, asyncpg.Connection]:
    database = Database(database_url, pool_size=2, application_name=APP)
    admin = await asyncpg.connect(PG_URL)
    yield database, admin
    await admin.close()
    await database.dispose()


async def _one(database: Database) -> int:
    async with database.read() as conn:
        return int((await conn.execute(text("SELECT 1"))).scalar_one())


async def _used_then_cut(database: Database, admin: asyncpg.Connection, *, idle: float) -> None:
    """One connection used and returned to the pool, then cut by the server, then ``idle`` seconds."""
    assert await _one(database) == 1
    assert await _cut_all(admin) >= 1
    await asyncio.sleep(idle)


async def test_a_dead_idle_connection_is_replaced_before_use(
    database_and_admin: tuple[Database, asyncpg.Connection],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    database, admin = database_and_admin
    monkeypatch.setattr(engine_module, "PING_AFTER_IDLE_SECONDS", 0.2)
    await _used_then_cut(database, admin, idle=0.4)  # idle longer than the window: the checkout pings, sees it dead
    assert await _one(database) == 1
    async with database.write() as conn:
        assert int((await conn.execute(text("SELECT 2"))).scalar_one()) == 2


async def test_a_connection_cut_within_the_window_fails_as_unavailable_then_recovers(
    database_and_admin: tuple[Database, asyncpg.Connection],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    database, admin = database_and_admin
    monkeypatch.setattr(engine_module, "PING_AFTER_IDLE_SECONDS", 60.0)
    await _used_then_cut(database, admin, idle=0.2)
    with pytest.raises(DBAPIError) as failure:  # not pinged: its first statement meets the cut
        await _one(database)
    assert is_database_unavailable(failure.value)
    assert await _one(database) == 1  # the pool was invalidated: a new connection
