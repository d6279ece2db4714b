"""Taking a flight's watch (``flight_repository.ensure_watch`` on both databases, docs/rules/flights.md#watching;
a missing watch is inserted with ON CONFLICT DO NOTHING, no SAVEPOINT): a new flight, date and airport get a new
watch, due now; the same key again gets the same watch, an ended one made due again with its scheduled arrival,
failures and lease kept; another date or airport is another watch. Several tasks taking the same new watch at
once all get one (the losers of the race find the winner's)."""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from transfers.db.engine import Database
from transfers.db.tables import flight_watches
from transfers.flights import repository as flight_repository

W = flight_watches.c


async def _take(db: Database, number: str, airport: str, arrival: datetime, now: datetime) -> int:
    async with db.write() as conn:
        return await flight_repository.ensure_watch(conn, number, airport, arrival, now)


async def _row(db: Database, watch_id: int) -> dict[str, Any]:
    async with db.read() as conn:
        return dict((await conn.execute(select(flight_watches).where(W.id == watch_id))).mappings().one())


async def test_a_watch_is_made_once_per_flight_date_and_airport_and_made_due_again(db: Database) -> None:
    number = f"ZZ{secrets.randbelow(9000) + 1000}"  # a number no other test watches on these dates
    now = datetime(2031, 3, 1, 8, 0, tzinfo=UTC)
    arrival = datetime(2031, 3, 4, 14, 30, tzinfo=UTC)
    first = await _take(db, number, "LHR", arrival, now)
    row = await _row(db, first)
    assert (row["number"], row["airport_iata"], row["local_date"]) == (number, "LHR", "2031-03-04")
    assert row["scheduled_arrival"] == arrival and row["next_check_at"] == now and row["failures"] == 0
    assert row["lease_until"] is None and row["checked_at"] is None
    # a watch that failed twice, is leased and has ended: taken again, only next_check_at changes
    lease = now + timedelta(minutes=2)
    async with db.write() as conn:
        await conn.execute(
            update(flight_watches).where(W.id == first).values(next_check_at=None, failures=2, lease_until=lease)
        )
    later = now + timedelta(hours=1)
    again = await _take(db, number, "LHR", arrival + timedelta(minutes=40), later)
    assert again == first
    row = await _row(db, first)
    assert row["next_check_at"] == later and row["scheduled_arrival"] == arrival
    assert row["failures"] == 2 and row["lease_until"] == lease
    # another local date, another airport: other watches
    other_day = await _take(db, number, "LHR", arrival + timedelta(days=1), now)
    other_airport = await _take(db, number, "LGW", arrival, now)
    assert len({first, other_day, other_airport}) == 3


async def test_tasks_taking_one_new_watch_at_once_share_it(db: Database, database_url: str) -> None:
    number = f"ZZ{secrets.randbelow(9000) + 1000}"
    now = datetime(2031, 4, 1, 8, 0, tzinfo=UTC)
    arrival = datetime(2031, 4, 2, 9, 15, tzinfo=UTC)
    racing = Database(database_url, pool_size=4, application_name="transfers-tests-watch")
    try:
        ids = await asyncio.gather(*(_take(racing, number, "MAN", arrival, now) for _ in range(4)))
    finally:
        await racing.dispose()
    assert len(set(ids)) == 1
    async with db.read() as conn:
        found = (await conn.execute(select(W.id).where(W.number == number, W.airport_iata == "MAN"))).all()
    assert [r.id for r in found] == ids[:1]


async def test_make_due_writes_what_ensure_watch_writes_for_a_known_watch(db: Database) -> None:
    """``make_due`` (a create's watch due later: one direct statement on PostgreSQL) against ``ensure_watch``
    with ``known``: due later -> due now; already due, or due earlier -> left alone; nothing else changes."""
    now = datetime(2031, 5, 1, 8, 0, tzinfo=UTC)
    arrival = datetime(2031, 5, 3, 10, 0, tzinfo=UTC)
    rows: dict[str, list[dict[str, Any]]] = {}
    for how in ("ensure", "make_due"):
        number = f"ZZ{secrets.randbelow(9000) + 1000}"
        watch = await _take(db, number, "LHR", arrival, now)
        seen = []
        for next_check_at in (now + timedelta(hours=3), now - timedelta(minutes=5), None):
            async with db.write() as conn:
                await conn.execute(update(flight_watches).where(W.id == watch).values(next_check_at=next_check_at))
            later = now + timedelta(minutes=1)
            if how == "ensure":
                async with db.write() as conn:
                    assert (
                        await flight_repository.ensure_watch(conn, number, "LHR", arrival, later, known=watch) == watch
                    )
            else:
                await flight_repository.make_due(db, watch, later)
            row = await _row(db, watch)
            seen.append({k: v for k, v in row.items() if k not in ("id", "number")})
        rows[how] = seen
    assert rows["make_due"] == rows["ensure"]
    assert [r["next_check_at"] for r in rows["ensure"]] == [
        now + timedelta(minutes=1),
        now - timedelta(minutes=5),
        now + timedelta(minutes=1),
    ]


async def test_the_budget_read_outside_a_transaction_counts_as_inside(db: Database) -> None:
    now = datetime(2031, 6, 1, 8, 0, tzinfo=UTC)
    since = now - timedelta(minutes=1)
    async with db.read() as conn:
        inside = await flight_repository.calls_since(conn, since, now)
    assert await flight_repository.calls_read(db, since, now) == inside
    number = f"ZZ{secrets.randbelow(9000) + 1000}"
    watch = await _take(db, number, "LHR", now + timedelta(days=2), now)
    async with db.write() as conn:
        await conn.execute(update(flight_watches).where(W.id == watch).values(called_at=now - timedelta(seconds=30)))
    assert await flight_repository.calls_read(db, since, now) == inside + 1
