"""How the request log's writer batches (docs/rules/agency-portal.md#request-log), on both
databases: a round writes what was buffered when it began and never chases the requests that arrive
while it writes (the first version did, and under steady traffic wrote ~25 requests per transaction
instead of 500: docs/operations/performance-history.md#request-log); between intervals only full batches are
written; a database found unreachable is not tried again before the next interval; ``stop`` writes
the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from tests.conftest import ClientFactory
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import api_requests
from transfers.requestlog import repository
from transfers.requestlog.buffer import Entry, RequestLogBuffer
from transfers.requestlog.writer import RequestLogWriter

NEVER_DUE = 3600.0  # an interval no test reaches: only full batches (and stop) write


async def count_rows(db: Database, client_id: int) -> int:
    async with db.read() as conn:
        found = await conn.execute(select(func.count()).where(api_requests.c.client_id == client_id))
        return int(found.scalar_one())


def record(buffer: RequestLogBuffer, client_id: int, count: int, tag: str) -> None:
    for n in range(count):
        buffer.record(client_id, "GET", f"/api/{tag}/{n}", 200, f"{tag}-{client_id}-{n}", None, 0.001)


async def until(predicate: Any, what: str) -> None:
    """Bounded polling for the background task's writes (real database round trips)."""
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"not within 5 s: {what}")


async def test_a_flush_writes_what_was_buffered_when_it_began_not_what_arrives_meanwhile(
    make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client()
    buffer = RequestLogBuffer(clock, capacity=100, batch=2)
    sizes: list[int] = []

    async def write(entries: list[Entry]) -> None:
        sizes.append(len(entries))
        record(buffer, client_id, 3, f"during{len(sizes)}")  # traffic keeps coming while a batch is written
        await repository.insert_entries(db, entries)

    writer = RequestLogWriter(buffer, write, NEVER_DUE)
    record(buffer, client_id, 5, "before")
    assert await writer.flush() == 5
    assert sizes == [2, 2, 1] and len(buffer) == 9  # the 9 that arrived wait for the next round
    assert await count_rows(db, client_id) == 5
    assert (writer.writes, writer.written) == (3, 5)


async def test_between_intervals_only_full_batches_are_written(
    make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client()
    buffer = RequestLogBuffer(clock, capacity=100, batch=2)
    sizes: list[int] = []

    async def write(entries: list[Entry]) -> None:
        sizes.append(len(entries))
        await repository.insert_entries(db, entries)

    writer = RequestLogWriter(buffer, write, NEVER_DUE)
    record(buffer, client_id, 5, "full")
    assert await writer.flush(full_batches_only=True) == 4
    assert sizes == [2, 2] and len(buffer) == 1


async def test_the_task_writes_full_batches_as_they_fill_and_the_rest_at_stop(
    make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client()
    buffer = RequestLogBuffer(clock, capacity=100, batch=2)
    sizes: list[int] = []

    async def write(entries: list[Entry]) -> None:
        sizes.append(len(entries))
        await repository.insert_entries(db, entries)

    writer = RequestLogWriter(buffer, write, NEVER_DUE)
    writer.start()
    try:
        record(buffer, client_id, 5, "task")  # two full batches wake it; the fifth waits for the interval
        await until(lambda: sizes == [2, 2], "the two full batches")
        for _ in range(20):  # it goes back to waiting: nothing more is written before the interval
            await asyncio.sleep(0)
        assert sizes == [2, 2] and len(buffer) == 1
    finally:
        await writer.stop()
    assert sizes == [2, 2, 1] and len(buffer) == 0
    assert await count_rows(db, client_id) == 5


async def test_the_task_writes_a_partial_batch_at_the_interval(
    make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client()
    buffer = RequestLogBuffer(clock, capacity=100, batch=500)
    sizes: list[int] = []

    async def write(entries: list[Entry]) -> None:
        sizes.append(len(entries))
        await repository.insert_entries(db, entries)

    writer = RequestLogWriter(buffer, write, 0.05)  # the interval is the event loop's time
    writer.start()
    try:
        record(buffer, client_id, 3, "interval")
        await until(lambda: sum(sizes) == 3, "the interval's write")
        assert sizes == [3]
    finally:
        await writer.stop()
    assert await count_rows(db, client_id) == 3


async def test_a_database_found_unreachable_is_not_tried_again_before_the_interval(
    make_client: ClientFactory, db: Database, clock: ShiftedClock, tmp_path: Path
) -> None:
    client_id, _ = await make_client()
    down = Database(f"sqlite+aiosqlite:///{tmp_path}/no-such-dir/x.db", pool_size=1, application_name="down")
    target = down
    attempts: list[int] = []

    async def write(entries: list[Entry]) -> None:
        attempts.append(len(entries))
        await repository.insert_entries(target, entries)

    buffer = RequestLogBuffer(clock, capacity=10, batch=2)
    writer = RequestLogWriter(buffer, write, NEVER_DUE)
    writer.start()
    try:
        record(buffer, client_id, 4, "down")
        await until(lambda: len(attempts) == 1 and len(buffer) == 4, "the first attempt, its batch given back")
        record(buffer, client_id, 2, "more")  # another full batch: still held until the interval
        for _ in range(20):
            await asyncio.sleep(0)
        assert attempts == [2] and len(buffer) == 6  # the failed batch went back in front, none lost
    finally:
        await down.dispose()
        target = db
        await writer.stop()  # the database is back: stop writes everything
    assert len(buffer) == 0 and await count_rows(db, client_id) == 6
