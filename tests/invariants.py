"""Whole-database invariants, checked against everything the test session has written so far.

Any test may call these after it has done its work (they read every row, not only the test's own),
so a bug that breaks an invariant is caught by whichever test runs next, not only by the test that
targets it. Later issues add booking invariants here (one debit per wallet-paid booking, refunds
only for cancelled/declined/failed bookings, ...).
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select

from transfers import money
from transfers.db.engine import Database
from transfers.db.tables import ledger_entries, wallets
from transfers.wallet.ledger import LedgerKind

ZERO = Decimal("0.00")


async def check_wallet_invariants(db: Database) -> int:
    """Assert, for every wallet: balance == SUM(its ledger), balance >= 0, and every ledger entry
    carries the sign of its kind with at most its wallet currency's decimals. Returns how many wallets were checked.

    One read transaction, so the balances and the sums come from the same snapshot on PostgreSQL
    (REPEATABLE READ is not needed: a single SELECT joins both) and from one consistent read on
    SQLite.
    """
    sums = (
        select(ledger_entries.c.wallet_id, func.sum(ledger_entries.c.amount).label("total"))
        .group_by(ledger_entries.c.wallet_id)
        .subquery()
    )
    query = (
        select(wallets.c.id, wallets.c.balance, sums.c.total, wallets.c.currency)
        .select_from(wallets.outerjoin(sums, sums.c.wallet_id == wallets.c.id))
        .order_by(wallets.c.id)
    )
    async with db.read() as conn:
        rows = (await conn.execute(query)).all()
        orphans = (
            await conn.execute(
                select(func.count())
                .select_from(ledger_entries.outerjoin(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                .where(wallets.c.id.is_(None))
            )
        ).scalar_one()
        bad_signs = (
            await conn.execute(
                select(ledger_entries.c.id, ledger_entries.c.kind, ledger_entries.c.amount).where(
                    ((ledger_entries.c.kind == LedgerKind.DEBIT_BOOKING.value) & (ledger_entries.c.amount >= 0))
                    | ((ledger_entries.c.kind != LedgerKind.DEBIT_BOOKING.value) & (ledger_entries.c.amount <= 0))
                    | ledger_entries.c.kind.not_in([k.value for k in LedgerKind])
                )
            )
        ).all()
    mismatched = []
    negative = []
    for wallet_id, balance, total, currency in rows:
        ledger_total = ZERO if total is None else Decimal(total)
        if Decimal(balance) != ledger_total:
            mismatched.append((wallet_id, balance, ledger_total))
        if Decimal(balance) < 0:
            negative.append((wallet_id, balance))
        assert money.exact(Decimal(balance), currency) == Decimal(balance), (wallet_id, balance, currency)
    assert not mismatched, f"wallet balance != sum of its ledger (wallet, balance, ledger sum): {mismatched}"
    assert not negative, f"negative wallet balances: {negative}"
    assert orphans == 0, f"{orphans} ledger entries name no wallet"
    assert not bad_signs, f"ledger entries whose sign does not match their kind: {bad_signs}"
    return len(rows)


async def check_statement_invariants(db: Database) -> None:
    """docs/rules/wallet.md, for every wallet with entries: its newest entry's ``balance_after`` is the
    balance (one statement, one snapshot)."""
    newest = (
        select(ledger_entries.c.wallet_id, func.max(ledger_entries.c.id).label("last_id"))
        .group_by(ledger_entries.c.wallet_id)
        .subquery()
    )
    query = select(wallets.c.id, wallets.c.balance, ledger_entries.c.balance_after).select_from(
        wallets.join(newest, newest.c.wallet_id == wallets.c.id).join(
            ledger_entries, ledger_entries.c.id == newest.c.last_id
        )
    )
    async with db.read() as conn:
        rows = (await conn.execute(query)).all()
    wrong = [(w, b, a) for w, b, a in rows if Decimal(b) != Decimal(a)]
    assert not wrong, f"newest balance_after != balance (wallet, balance, balance_after): {wrong}"


async def check_event_invariants(db: Database) -> None:
    """docs/rules/webhooks.md, for every booking: its client events are numbered up to ``event_sequence`` with no
    gap and no repeat (each change wrote its events in its own transaction, on every path); from 1
    unless the retention job pruned the oldest."""
    from transfers.db.tables import bookings, client_events

    e = client_events.c
    query = (
        select(bookings.c.id, bookings.c.event_sequence, func.count(e.id), func.min(e.sequence), func.max(e.sequence))
        .select_from(bookings.outerjoin(client_events, e.booking_id == bookings.c.id))
        .group_by(bookings.c.id, bookings.c.event_sequence)
    )
    async with db.read() as conn:
        rows = (await conn.execute(query)).all()
    wrong = [tuple(r) for r in rows if r[2] and not (r[4] == r[1] and r[2] == r[4] - r[3] + 1)]
    assert not wrong, f"client events out of sequence (booking, event_sequence, count, min, max): {wrong[:10]}"
