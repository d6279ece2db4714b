"""Journal persistence: balanced entries appended, never updated (docs/rules/statements.md#journal).

Every write runs in the caller's transaction, so an entry commits with the change that causes it
or not at all. Accounts carry no balance column: a balance is the sum of the account's lines, so
no hot row (the platform's, the world's) is ever locked by a write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, Text, bindparam, cast, func, insert, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting.journal import AccountKind, NewEntry
from transfers.accounting.periods import next_period, period_of
from transfers.accounting.statements import ClosedRow, Figures, StatementStatus
from transfers.db.direct import DirectStatement
from transfers.db.tables import (
    admin_audit,
    bookings,
    journal_entries,
    journal_lines,
    partner_statements,
    statement_close_runs,
)

ZERO = Decimal("0.00")
_INSERT_ENTRY = insert(journal_entries).returning(journal_entries.c.id)
_INSERT_LINE = insert(journal_lines)


async def open_period(conn: AsyncConnection, partner_id: int, currency: str, now: datetime) -> str:
    """The month a partner's line written at ``now`` counts in: its own, unless that month's
    statement is already closed (a line committed across the month's end), then the first month
    after the last closed one: a closed statement's lines never change (docs/rules/statements.md#statements)."""
    await lock_for_close(conn, exclusive=False)
    period = period_of(now)
    last = (
        await conn.execute(
            select(func.max(partner_statements.c.period)).where(
                partner_statements.c.partner_id == partner_id, partner_statements.c.currency == currency
            )
        )
    ).scalar_one()
    if last is not None and last >= period:
        return next_period(str(last))
    return period


async def post(conn: AsyncConnection, entry: NewEntry, now: datetime) -> int:
    """Append ``entry`` (balanced by construction, ``journal.NewEntry``) and its lines; its id."""
    return (await post_many(conn, (entry,), now))[0]


# Several entries in one round trip each for the entries and their lines (a return trip's two
# debits, docs/operations/performance-history.md#return-trips): ids answered in the order of the entries.
_INSERT_ENTRIES = insert(journal_entries).returning(journal_entries.c.id, sort_by_parameter_order=True)


async def post_many(conn: AsyncConnection, entries: Sequence[NewEntry], now: datetime) -> list[int]:
    """``post`` for each of ``entries``, in that order, with one INSERT of the entries and one of
    all their lines; their ids in the same order."""
    if not entries:
        return []
    rows = [
        {
            "kind": entry.kind,
            "currency": entry.currency,
            "booking_id": entry.booking_id,
            "ledger_entry_id": entry.ledger_entry_id,
            "note": entry.note,
            "reference": entry.reference,
            "actor": entry.actor,
            "created_at": now,
        }
        for entry in entries
    ]
    if len(rows) == 1:
        ids = [int((await conn.execute(_INSERT_ENTRY, rows[0])).scalar_one())]
    else:
        ids = [int(i) for i in (await conn.execute(_INSERT_ENTRIES, rows)).scalars()]
    period = period_of(now)
    lines = []
    for entry, entry_id in zip(entries, ids, strict=True):
        for leg in entry.legs:
            leg_period = period
            currency = entry.currency_of(leg)
            if leg.account.kind is AccountKind.PARTNER:
                leg_period = await open_period(conn, leg.account.owner_id, currency, now)
            lines.append(
                {
                    "entry_id": entry_id,
                    "account": leg.account.kind.value,
                    "owner_id": leg.account.owner_id,
                    "currency": currency,
                    "amount": leg.amount,
                    "period": leg_period,
                    "created_at": now,
                }
            )
    await conn.execute(_INSERT_LINE, lines)
    return ids


async def booking_kind_total(conn: AsyncConnection, booking_id: int, kind: str, partner_id: int) -> Decimal | None:
    """The sum of a partner's lines of ``kind`` for one booking (None: there is none)."""
    e, line = journal_entries.c, journal_lines.c
    row = (
        await conn.execute(
            select(func.count(line.id), func.sum(line.amount))
            .select_from(journal_lines.join(journal_entries, e.id == line.entry_id))
            .where(
                e.booking_id == booking_id,
                e.kind == kind,
                line.account == AccountKind.PARTNER.value,
                line.owner_id == partner_id,
            )
        )
    ).first()
    if row is None or not row[0]:
        return None
    return ZERO if row[1] is None else Decimal(row[1])


async def booking_kind_sums(conn: AsyncConnection, booking_id: int, kind: str) -> dict[tuple[str, str], Decimal]:
    """(account kind, currency) -> the sum of the lines of one booking's entries of ``kind`` (a converted
    booking's partner line has its platform's side in the booking's currency, docs/rules/fx.md#books)."""
    e, line = journal_entries.c, journal_lines.c
    rows = await conn.execute(
        select(line.account, line.currency, func.sum(line.amount))
        .select_from(journal_lines.join(journal_entries, e.id == line.entry_id))
        .where(e.booking_id == booking_id, e.kind == kind)
        .group_by(line.account, line.currency)
    )
    return {(str(a), str(c)): Decimal(t) for a, c, t in rows}


async def fx_position(conn: AsyncConnection) -> list[tuple[str, Decimal]]:
    """(currency, balance) of each FX account that has lines, by currency (docs/rules/fx.md#position)."""
    line = journal_lines.c
    rows = await conn.execute(
        select(line.currency, func.sum(line.amount))
        .where(line.account == AccountKind.FX.value)
        .group_by(line.currency)
        .order_by(line.currency)
    )
    return [(str(c), Decimal(t)) for c, t in rows]


# --- statements ---------------------------------------------------------------------------------------


def _closed_row(row: Mapping[Any, Any]) -> ClosedRow:
    return ClosedRow(
        id=int(row["id"]),
        currency=str(row["currency"]),
        period=str(row["period"]),
        status=StatementStatus(row["status"]),
        figures=Figures(row["opening_balance"], row["earned"], row["recovered"], row["paid"]),
        paid_reference=row["paid_reference"],
    )


async def closed_statements(conn: AsyncConnection, partner_id: int) -> list[ClosedRow]:
    st = partner_statements.c
    rows = await conn.execute(select(partner_statements).where(st.partner_id == partner_id))
    return [_closed_row(r) for r in rows.mappings()]


async def month_sums(conn: AsyncConnection, partner_id: int) -> list[tuple[str, str, str, Decimal]]:
    """(currency, period, kind, sum) of the partner's account lines."""
    line, entry = journal_lines.c, journal_entries.c
    rows = await conn.execute(
        select(line.currency, line.period, entry.kind, func.sum(line.amount))
        .select_from(journal_lines.join(journal_entries, entry.id == line.entry_id))
        .where(line.account == AccountKind.PARTNER.value, line.owner_id == partner_id)
        .group_by(line.currency, line.period, entry.kind)
    )
    return [(str(c), str(p), str(k), Decimal(t)) for c, p, k, t in rows]


def lines_query(partner_id: Any, currency: Any, period: Any, *, as_text: bool = False) -> Select[Any]:
    """A statement's lines, oldest first: date, reservation number, kind, retail, its currency (the
    booking's), net (the partner's own, in the statement's currency: docs/rules/fx.md#books), amount,
    note. ``as_text`` (PostgreSQL only): the date as ``YYYY-MM-DD`` in UTC and the amounts as the NUMERIC's
    own text (``money.stored_text`` writes it), so the driver decodes strings instead of datetimes and Decimals."""
    line, entry, b = journal_lines.c, journal_entries.c, bookings.c
    own_net = func.coalesce(b.partner_net_total, b.net_total)
    columns: list[Any] = [line.created_at, b.reservation_no, entry.kind, b.total, b.currency, own_net, line.amount]
    if as_text:
        columns = [
            func.to_char(func.timezone("UTC", line.created_at), "YYYY-MM-DD"),
            b.reservation_no,
            entry.kind,
            cast(b.total, Text),
            b.currency,
            cast(own_net, Text),
            cast(line.amount, Text),
        ]
    return (
        select(*columns, entry.note, entry.reference)
        .select_from(
            journal_lines.join(journal_entries, entry.id == line.entry_id).outerjoin(bookings, b.id == entry.booking_id)
        )
        .where(
            line.account == AccountKind.PARTNER.value,
            line.owner_id == partner_id,
            line.currency == currency,
            line.period == period,
        )
        .order_by(line.id)
    )


# The same query with bind parameters and text columns, compiled once for the direct path
# (PostgreSQL): a 100,000-line statement is read without SQLAlchemy's per-row processing and
# without decoding 400,000 datetimes and Decimals (~0.6 s of the JSON's time;
# docs/operations/performance-history.md#statements).
LINES_AS_TEXT = DirectStatement(
    lines_query(bindparam("partner_id"), bindparam("currency"), bindparam("period"), as_text=True)
)


async def has_lines(conn: AsyncConnection, partner_id: int, currency: str, period: str) -> bool:
    line = journal_lines.c
    found = await conn.execute(
        select(line.id)
        .where(
            line.account == AccountKind.PARTNER.value,
            line.owner_id == partner_id,
            line.currency == currency,
            line.period == period,
        )
        .limit(1)
    )
    return found.first() is not None


async def lock_for_close(conn: AsyncConnection, *, exclusive: bool) -> None:
    """PostgreSQL: a writer of partner lines takes the shared lock, the month close the exclusive
    one, so no line lands in a month while it is being closed (SQLite's write transaction already
    serialises them)."""
    if conn.dialect.name == "postgresql":
        function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        await conn.execute(text(f"SELECT {function}(:key)"), {"key": CLOSE_LOCK_KEY})


CLOSE_LOCK_KEY = 724_015


async def unclosed_sums(conn: AsyncConnection, before_period: str) -> list[tuple[int, str, str, str, Decimal]]:
    """(partner, currency, period, kind, sum) of every partner month before ``before_period`` that
    has lines and no statement row yet."""
    line, entry, st = journal_lines.c, journal_entries.c, partner_statements.c
    closed = (
        select(st.id)
        .where(st.partner_id == line.owner_id, st.currency == line.currency, st.period == line.period)
        .exists()
    )
    rows = await conn.execute(
        select(line.owner_id, line.currency, line.period, entry.kind, func.sum(line.amount))
        .select_from(journal_lines.join(journal_entries, entry.id == line.entry_id))
        .where(line.account == AccountKind.PARTNER.value, line.period < before_period, ~closed)
        .group_by(line.owner_id, line.currency, line.period, entry.kind)
    )
    return [(int(o), str(c), str(p), str(k), Decimal(t)) for o, c, p, k, t in rows]


async def last_closings(conn: AsyncConnection) -> dict[tuple[int, str], tuple[str, Decimal]]:
    """(partner, currency) -> (period, closing balance) of its latest statement row."""
    st = partner_statements.c
    latest = (
        select(st.partner_id, st.currency, func.max(st.period).label("period"))
        .group_by(st.partner_id, st.currency)
        .subquery()
    )
    rows = await conn.execute(
        select(st.partner_id, st.currency, st.period, st.closing_balance).join(
            latest,
            (latest.c.partner_id == st.partner_id)
            & (latest.c.currency == st.currency)
            & (latest.c.period == st.period),
        )
    )
    return {(int(p), str(c)): (str(m), Decimal(b)) for p, c, m, b in rows}


async def insert_statements(conn: AsyncConnection, rows: list[dict[str, Any]]) -> int:
    """The closed statements, each only if its (partner, currency, period) has none yet (insert-if-absent,
    backed by the unique constraint): the number inserted."""
    inserted = 0
    for row in rows:
        insert_if_absent = _dialect_insert(conn)(partner_statements).values(**row)
        result = await conn.execute(
            insert_if_absent.on_conflict_do_nothing(index_elements=["partner_id", "currency", "period"])
        )
        inserted += max(result.rowcount or 0, 0)
    return inserted


def _dialect_insert(conn: AsyncConnection) -> Any:
    if conn.dialect.name == "postgresql":
        return postgresql.insert
    return sqlite.insert


async def close_run(conn: AsyncConnection) -> tuple[str, int] | None:
    """The month the close last ran in and the last journal line it saw (None: it never ran)."""
    row = (await conn.execute(select(statement_close_runs.c.period, statement_close_runs.c.line_id))).first()
    return None if row is None else (str(row[0]), int(row[1]))


async def last_line_id(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.coalesce(func.max(journal_lines.c.id), 0)))).scalar_one())


async def partner_lines_before(conn: AsyncConnection, period: str, *, after_id: int, upto_id: int) -> bool:
    """Whether a partner line of a month before ``period`` was written with an id in (``after_id``,
    ``upto_id``]: a line committed into an ended month after the close ran (a primary-key range: the
    lines since the last run only)."""
    line = journal_lines.c
    found = await conn.execute(
        select(line.id)
        .where(
            line.id > after_id,
            line.id <= upto_id,
            line.account == AccountKind.PARTNER.value,
            line.period < period,
        )
        .limit(1)
    )
    return found.first() is not None


async def save_close_run(conn: AsyncConnection, period: str, line_id: int, now: datetime) -> None:
    """The close ran in ``period`` and saw the journal up to ``line_id`` (the one row, written or updated)."""
    values = {"period": period, "line_id": line_id, "ran_at": now}
    updated = await conn.execute(update(statement_close_runs).where(statement_close_runs.c.id == 1).values(**values))
    if not updated.rowcount:
        await conn.execute(insert(statement_close_runs).values(id=1, **values))


async def statement_row(conn: AsyncConnection, partner_id: int, currency: str, period: str) -> ClosedRow | None:
    st = partner_statements.c
    row = (
        (
            await conn.execute(
                select(partner_statements).where(
                    st.partner_id == partner_id, st.currency == currency, st.period == period
                )
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else _closed_row(row)


async def mark_paid(
    conn: AsyncConnection, statement_id: int, *, reference: str, now: datetime
) -> tuple[int, str, str, Decimal] | None:
    """CLOSED -> PAID by compare-and-set: (partner, currency, period, closing) of the statement
    this call marked, None when it was not CLOSED (another operator's call won)."""
    st = partner_statements.c
    row = (
        await conn.execute(
            update(partner_statements)
            .where(st.id == statement_id, st.status == StatementStatus.CLOSED.value)
            .values(status=StatementStatus.PAID.value, paid_at=now, paid_reference=reference)
            .returning(st.partner_id, st.currency, st.period, st.closing_balance)
        )
    ).first()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]), Decimal(row[3]))


async def link_payout(conn: AsyncConnection, statement_id: int, entry_id: int) -> None:
    st = partner_statements.c
    await conn.execute(update(partner_statements).where(st.id == statement_id).values(payout_entry_id=entry_id))


async def record_audit(
    conn: AsyncConnection, *, actor: str, action: str, subject: str, details: dict[str, Any], now: datetime
) -> None:
    """The operator's action in ``admin_audit``, with the money it moved."""
    await conn.execute(
        insert(admin_audit).values(actor=actor, action=action, subject=subject, details=details, created_at=now)
    )


async def partner_ids_with_lines(conn: AsyncConnection) -> list[int]:
    line = journal_lines.c
    rows = await conn.execute(
        select(line.owner_id).where(line.account == AccountKind.PARTNER.value).group_by(line.owner_id)
    )
    return [int(r[0]) for r in rows]
