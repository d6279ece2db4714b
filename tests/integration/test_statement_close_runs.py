"""The month close is driven by the database (docs/rules/statements.md#statements), on both databases: two
workers closing at the same moment (two connection pools, as two processes) close each month once, a
restarted worker (a new pool, nothing remembered) closes nothing again, and a partner line committed late
into an ended month (its transaction's clock still in that month) is closed by the next run of the same
month, not a month later."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from decimal import Decimal

from sqlalchemy import select

from tests.conftest import PartnerFactory
from transfers.accounting import repository as journal_repo
from transfers.accounting import service as books
from transfers.accounting.journal import PLATFORM, PartnerLine, partner, transfer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import partner_statements


def at(clock: ShiftedClock, when: datetime) -> datetime:
    clock.advance(when - clock.now())
    return clock.now()


async def adjust(db: Database, partner_id: int, amount: str, now: datetime) -> None:
    entry = transfer(PartnerLine.ADJUSTMENT.value, "EUR", PLATFORM, partner(partner_id), Decimal(amount), note="t")
    async with db.write() as conn:
        await journal_repo.post(conn, entry, now)


async def statements_of(db: Database, partner_id: int) -> list[tuple[str, str, Decimal, datetime]]:
    st = partner_statements.c
    async with db.read() as conn:
        rows = await conn.execute(
            select(st.period, st.status, st.closing_balance, st.closed_at)
            .where(st.partner_id == partner_id)
            .order_by(st.period)
        )
        return [(str(p), str(s), Decimal(c), t) for p, s, c, t in rows]


async def test_two_workers_and_a_restart_close_a_month_once(
    db: Database, database_url: str, clock: ShiftedClock, make_partner: PartnerFactory
) -> None:
    _, partner_id, _ = await make_partner()
    await adjust(db, partner_id, "12.50", at(clock, datetime(2027, 5, 10, 9, 0, tzinfo=UTC)))
    now = at(clock, datetime(2027, 6, 1, 0, 5, tzinfo=UTC))
    first, second = Database(database_url, pool_size=2), Database(database_url, pool_size=2)
    try:
        closed = await asyncio.gather(books.close_due(first, now), books.close_due(second, now))
    finally:
        await first.dispose()
        await second.dispose()
    assert 0 in closed and max(closed) >= 1  # one worker closed, the other found it done
    (statement,) = await statements_of(db, partner_id)
    assert statement[:3] == ("2027-05", "CLOSED", Decimal("12.50"))

    restarted = Database(database_url, pool_size=2)  # a new process: nothing in memory
    try:
        assert await books.close_due(restarted, at(clock, datetime(2027, 6, 1, 0, 6, tzinfo=UTC))) == 0
        assert await books.close_due(restarted, at(clock, datetime(2027, 6, 20, 12, 0, tzinfo=UTC))) == 0
    finally:
        await restarted.dispose()
    assert await statements_of(db, partner_id) == [statement]


async def test_a_line_committed_late_into_an_ended_month_is_closed_the_same_month(
    db: Database, clock: ShiftedClock, make_partner: PartnerFactory
) -> None:
    _, early, _ = await make_partner()
    _, late, _ = await make_partner()
    await adjust(db, early, "5.00", at(clock, datetime(2027, 8, 3, 9, 0, tzinfo=UTC)))
    at(clock, datetime(2027, 9, 1, 0, 1, tzinfo=UTC))
    assert await books.close_due(db, clock.now()) >= 1
    assert [s[:2] for s in await statements_of(db, early)] == [("2027-08", "CLOSED")]

    # a change whose transaction read the clock before midnight commits after the close: the partner has no
    # August statement, so its line counts in August, which has ended
    await adjust(db, late, "7.25", datetime(2027, 8, 31, 23, 59, 59, tzinfo=UTC))
    assert await books.close_due(db, at(clock, datetime(2027, 9, 1, 0, 2, tzinfo=UTC))) == 1
    assert [s[:3] for s in await statements_of(db, late)] == [("2027-08", "CLOSED", Decimal("7.25"))]
    assert await books.close_due(db, at(clock, datetime(2027, 9, 1, 0, 3, tzinfo=UTC))) == 0
    assert len(await statements_of(db, early)) == 1
