"""``transfers ledger check``: the books' invariants, read from the database (docs/rules/statements.md#operators).

Each check is one aggregate query and names the first difference it finds, so an operator sees
what is wrong, not only that something is:

1. every entry has at least two lines and they add up to zero in each currency they are in (an entry
   that moves money between currencies, through the FX accounts, balances in each of them);
2. all accounts together add up to zero, per currency;
3. every wallet's balance equals its account (and every wallet ledger row has its journal entry);
4. a booking's client side (its wallet or third-party lines) never got back more than it paid;
5. every closed statement equals the partner's account: its opening the lines before its month,
   its closing those up to its month's end, ``closing = opening + earned + recovered + paid``,
   and its figures are still what its month's lines add up to (a closed statement never changes).
"""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.accounting.journal import AccountKind
from transfers.accounting.statements import Figures, figures_of
from transfers.db.tables import journal_entries, journal_lines, ledger_entries, partner_statements, wallets

ZERO = Decimal("0.00")


async def first_difference(conn: AsyncConnection) -> str | None:
    """The first broken invariant, in words, or None when the books reconcile."""
    for check in (_entries_balance, _accounts_sum_to_zero, _wallets_equal_accounts, _refunds_within_paid, _statements):
        found = await check(conn)
        if found is not None:
            return found
    return None


async def _entries_balance(conn: AsyncConnection) -> str | None:
    line = journal_lines.c
    short = (
        await conn.execute(
            select(journal_entries.c.id, func.count(line.id))
            .select_from(journal_entries.outerjoin(journal_lines, line.entry_id == journal_entries.c.id))
            .group_by(journal_entries.c.id)
            .having(func.count(line.id) < 2)
            .order_by(journal_entries.c.id)
            .limit(1)
        )
    ).first()
    unbalanced = (
        await conn.execute(
            select(line.entry_id, line.currency, func.count(line.id), func.sum(line.amount))
            .group_by(line.entry_id, line.currency)
            .having(func.sum(line.amount) != 0)
            .order_by(line.entry_id, line.currency)
            .limit(1)
        )
    ).first()
    if short is not None and (unbalanced is None or short[0] <= unbalanced[0]):
        return f"journal entry {short[0]} does not balance: {short[1]} lines"
    if unbalanced is None:
        return None
    entry_id, currency, count, total = unbalanced
    shown = money.diagnostic(_money(total), currency)
    return f"journal entry {entry_id} does not balance in {currency}: {count} lines adding up to {shown}"


async def _accounts_sum_to_zero(conn: AsyncConnection) -> str | None:
    line = journal_lines.c
    row = (
        await conn.execute(
            select(line.currency, func.sum(line.amount))
            .group_by(line.currency)
            .having(func.sum(line.amount) != 0)
            .order_by(line.currency)
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    zero = money.diagnostic(ZERO, row[0])
    return f"the accounts in {row[0]} add up to {money.diagnostic(_money(row[1]), row[0])}, not {zero}"


async def _wallets_equal_accounts(conn: AsyncConnection) -> str | None:
    line = journal_lines.c
    account = (
        select(line.owner_id, line.currency, func.sum(line.amount).label("total"))
        .where(line.account == AccountKind.WALLET.value)
        .group_by(line.owner_id, line.currency)
        .subquery()
    )
    rows = await conn.execute(
        select(wallets.c.id, wallets.c.balance, account.c.total, wallets.c.currency)
        .select_from(
            wallets.outerjoin(
                account, and_(account.c.owner_id == wallets.c.id, account.c.currency == wallets.c.currency)
            )
        )
        .order_by(wallets.c.id)
    )
    for wallet_id, balance, total, currency in rows:
        if _money(total) != _money(balance):
            shown = money.diagnostic(_money(balance), currency), money.diagnostic(_money(total), currency)
            return f"wallet {wallet_id}: balance {shown[0]}, its account {shown[1]}"
    stray = (
        await conn.execute(
            select(line.owner_id, line.currency)
            .select_from(
                journal_lines.outerjoin(
                    wallets, and_(wallets.c.id == line.owner_id, wallets.c.currency == line.currency)
                )
            )
            .where(line.account == AccountKind.WALLET.value, wallets.c.id.is_(None))
            .limit(1)
        )
    ).first()
    if stray is not None:
        return f"a journal line names wallet {stray[0]} in {stray[1]}, which has no such wallet"
    missing = (
        await conn.execute(
            select(ledger_entries.c.id)
            .select_from(
                ledger_entries.outerjoin(journal_entries, journal_entries.c.ledger_entry_id == ledger_entries.c.id)
            )
            .where(journal_entries.c.id.is_(None))
            .order_by(ledger_entries.c.id)
            .limit(1)
        )
    ).first()
    return None if missing is None else f"wallet ledger entry {missing[0]} has no journal entry"


async def _refunds_within_paid(conn: AsyncConnection) -> str | None:
    line, entry = journal_lines.c, journal_entries.c
    row = (
        await conn.execute(
            select(entry.booking_id, func.sum(line.amount), line.currency)
            .select_from(journal_lines.join(journal_entries, entry.id == line.entry_id))
            .where(
                entry.booking_id.is_not(None),
                line.account.in_([AccountKind.WALLET.value, AccountKind.WORLD.value]),
            )
            .group_by(entry.booking_id, line.currency)
            .having(func.sum(line.amount) > 0)
            .order_by(entry.booking_id)
            .limit(1)
        )
    ).first()
    if row is None:
        return None
    return f"booking {row[0]}: its payer got back {money.diagnostic(_money(row[1]), row[2])} more than it paid"


async def _statements(conn: AsyncConnection) -> str | None:
    line, entry, st = journal_lines.c, journal_entries.c, partner_statements.c
    sums = await conn.execute(
        select(line.owner_id, line.currency, line.period, entry.kind, func.sum(line.amount))
        .select_from(journal_lines.join(journal_entries, entry.id == line.entry_id))
        .where(line.account == AccountKind.PARTNER.value)
        .group_by(line.owner_id, line.currency, line.period, entry.kind)
    )
    by_month: dict[tuple[int, str, str], dict[str, Decimal]] = {}
    for owner, currency, period, kind, total in sums:
        by_month.setdefault((int(owner), str(currency), str(period)), {})[str(kind)] = _money(total)
    rows = await conn.execute(select(partner_statements).order_by(st.partner_id, st.currency, st.period))
    for statement in rows.mappings():
        key = (int(statement["partner_id"]), str(statement["currency"]), str(statement["period"]))
        name = f"statement {key[1]} {key[2]} of partner {key[0]}"
        before = sum(
            (sum(kinds.values(), ZERO) for (p, c, m), kinds in by_month.items() if (p, c) == key[:2] and m < key[2]),
            ZERO,
        )
        lines: Figures = figures_of(before, by_month.get(key, {}))
        frozen = (
            _money(statement["opening_balance"]),
            _money(statement["earned"]),
            _money(statement["recovered"]),
            _money(statement["paid"]),
            _money(statement["closing_balance"]),
        )
        if frozen[4] != frozen[0] + frozen[1] + frozen[2] + frozen[3]:
            return f"{name}: closing {money.diagnostic(frozen[4], key[1])} is not opening + earned + recovered + paid"
        expected = (lines.opening, lines.earned, lines.recovered, lines.paid, lines.closing)
        if frozen != expected:
            return (
                f"{name}: (opening, earned, recovered, paid, closing) is {_texts(frozen, key[1])}, "
                f"the partner's account says {_texts(expected, key[1])}"
            )
    return None


def _texts(amounts: tuple[Decimal, ...], currency: str) -> tuple[str, ...]:
    return tuple(money.diagnostic(amount, currency) for amount in amounts)


def _money(value: object) -> Decimal:
    return ZERO if value is None else Decimal(str(value))
