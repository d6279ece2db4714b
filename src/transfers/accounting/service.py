"""The use cases of the books (docs/rules/statements.md): a partner's statements, the month close,
a payout, an adjustment, the check. Each write is one transaction: its entry commits with the
statement's change and its audit row, or nothing does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.accounting import amounts, check
from transfers.accounting import repository as repo
from transfers.accounting.journal import PLATFORM, WORLD, PartnerLine, partner, transfer
from transfers.accounting.periods import parse_period, period_end, period_of
from transfers.accounting.statements import Statement, StatementStatus, assemble, figures_of
from transfers.db.engine import Database
from transfers.errors import Conflict, ErrorCode, Invalid, NotFound, Refused

ZERO = Decimal("0.00")
CSV_COLUMNS = ("date", "reservation_no", "kind", "retail", "retail_currency", "net", "amount", "note")


class NoSuchStatement(NotFound):
    """No statement of this partner for that period (and currency): it has no lines there. The
    ``NOT_FOUND`` code gives it the string-code body on the reverse API, whose code-less 404 is the
    booking's fixed one."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.NOT_FOUND, message)


class StatementNotPayable(Refused):
    """Only a CLOSED statement with a positive closing balance can be marked paid."""


class AlreadyPaid(Conflict):
    """Another operator marked the statement paid first: one payout, never two."""


class CurrencyNeeded(Invalid):
    """The period has statements in more than one currency: say which."""


async def statements(db: Database, partner_id: int) -> list[Statement]:
    """Every statement of the partner, newest first."""
    async with db.read() as conn:
        closed = await repo.closed_statements(conn, partner_id)
        sums = await repo.month_sums(conn, partner_id)
    return assemble(partner_id, closed, sums)


async def statement(db: Database, partner_id: int, period: object, currency: object = None) -> Statement:
    """The partner's statement of ``period`` (``YYYY-MM``), in ``currency`` when it has several."""
    month = parse_period(period)
    found = [s for s in await statements(db, partner_id) if s.period == month]
    if currency is not None:
        found = [s for s in found if s.currency == currency]
    if not found:
        raise NoSuchStatement(f"There is no statement for {month}.")
    if len(found) > 1:
        raise CurrencyNeeded(f"{month} has statements in {', '.join(s.currency for s in found)}: add ?currency=.")
    return found[0]


def shown_note(note: str | None, reference: str | None) -> str | None:
    """A line's note as shown: the note, with the payment's reference after it when it has one."""
    if reference is None:
        return note
    return f"{note} (reference {reference})" if note else f"reference {reference}"


def line_dict(row: Any, currency: str) -> dict[str, Any]:
    """One statement line as the API shows it (docs/rules/statements.md#partner-api); its ``amount`` and a
    booking's ``net`` (the partner's own price) in ``currency``, the statement's, the partner's; a booking's
    ``retail`` in ``retail_currency``, the one the client paid in (docs/rules/fx.md#books)."""
    created_at, reservation_no, kind, retail, retail_currency, net, amount, note, reference = row
    is_booking = reservation_no is not None
    return {
        "date": created_at.date().isoformat(),
        "reservation_no": reservation_no,
        "kind": kind,
        "retail": money.text(retail, retail_currency) if is_booking and retail is not None else None,
        "retail_currency": retail_currency if is_booking else None,
        "net": money.text(net, currency) if is_booking and net is not None else None,
        "amount": money.text(amount, currency),
        "note": shown_note(note, reference),
    }


def text_line_dict(row: Any, currency: str) -> dict[str, Any]:
    """``line_dict`` for a row of ``repo.LINES_AS_TEXT``: the date already ``YYYY-MM-DD`` (UTC) and
    the amounts the NUMERIC(18, 4)'s own text ("45.1000"), written by ``money.stored_text`` as
    ``money.text`` writes the typed values ("45.10")."""
    day, reservation_no, kind, retail, retail_currency, net, amount, note, reference = row
    is_booking = reservation_no is not None
    return {
        "date": day,
        "reservation_no": reservation_no,
        "kind": kind,
        "retail": money.stored_text(retail, retail_currency) if is_booking and retail is not None else None,
        "retail_currency": retail_currency if is_booking else None,
        "net": money.stored_text(net, currency) if is_booking and net is not None else None,
        "amount": money.stored_text(amount, currency),
        "note": shown_note(note, reference),
    }


async def statement_lines(db: Database, found: Statement, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The statement's lines, oldest first (the first ``limit`` of them when given)."""
    if limit is None:
        # PostgreSQL: the lines as text from the direct path, formatted by text_line_dict exactly
        # as line_dict formats the typed values (tests/integration/test_statement_example.py).
        raw = await db.read_all_raw(
            repo.LINES_AS_TEXT, partner_id=found.partner_id, currency=found.currency, period=found.period
        )
        if raw is not None:
            return [text_line_dict(r, found.currency) for r in raw]
    query = repo.lines_query(found.partner_id, found.currency, found.period)
    if limit is not None:
        query = query.limit(limit)
    async with db.read() as conn:
        rows = await conn.execute(query)
        return [line_dict(r, found.currency) for r in rows]


async def stream_lines(db: Database, found: Statement, *, chunk: int = 2000) -> AsyncIterator[dict[str, Any]]:
    """The lines one by one from a server-side cursor: a statement of any length in bounded memory.
    In a transaction of its own (PostgreSQL's cursors live in one; ``read()`` is autocommit there),
    which also gives the whole CSV one snapshot."""
    async with db.engine.connect() as conn, conn.begin():
        result = await conn.stream(
            repo.lines_query(found.partner_id, found.currency, found.period).execution_options(yield_per=chunk)
        )
        async for row in result:
            yield line_dict(row, found.currency)


async def close_ended(db: Database, now: datetime) -> int:
    """Close every partner month that has ended and has lines (``transfers statements close``); the
    number of statements closed. Safe to run twice at once, in two processes too: the close holds the
    exclusive close lock (PostgreSQL) or the write transaction (SQLite), and a statement is only inserted
    where its partner, currency and month have none."""
    async with db.write() as conn:
        await repo.lock_for_close(conn, exclusive=True)
        return await _close(conn, now, await repo.last_line_id(conn))


async def close_due(db: Database, now: datetime) -> int:
    """The scheduled job's close (docs/rules/statements.md#statements), driven by the database, not by
    what a process remembers: it closes when the close has not run yet in this month
    (``statement_close_runs``), or when a partner line of an ended month was written since it last ran (a
    change committed across the month's end into a month it had no statement in); else it only moves the
    row's line mark on. Every worker and a restarted one read the same row: a month is closed once, and no
    late line waits for the next month."""
    current = period_of(now)
    async with db.write() as conn:
        await repo.lock_for_close(conn, exclusive=True)  # partner lines are written under the shared lock
        top = await repo.last_line_id(conn)
        last = await repo.close_run(conn)
        if (
            last is not None
            and last[0] >= current
            and not await repo.partner_lines_before(conn, current, after_id=last[1], upto_id=top)
        ):
            if top != last[1]:
                await repo.save_close_run(conn, last[0], top, now)
            return 0
        return await _close(conn, now, top)


async def _close(conn: AsyncConnection, now: datetime, top: int) -> int:
    current = period_of(now)
    closed = 0
    sums = await repo.unclosed_sums(conn, current)
    if sums:
        last = await repo.last_closings(conn)
        months: dict[tuple[int, str], dict[str, dict[str, Decimal]]] = {}
        for partner_id, currency, period, kind, total in sums:
            months.setdefault((partner_id, currency), {}).setdefault(period, {})[kind] = total
        rows = []
        for (partner_id, currency), periods in months.items():
            closing = last.get((partner_id, currency), ("", ZERO))[1]
            for period in sorted(periods):
                figures = figures_of(closing, periods[period])
                closing = figures.closing
                rows.append(
                    {
                        "partner_id": partner_id,
                        "currency": currency,
                        "period": period,
                        "status": StatementStatus.CLOSED.value,
                        "opening_balance": figures.opening,
                        "earned": figures.earned,
                        "recovered": figures.recovered,
                        "paid": figures.paid,
                        "closing_balance": closing,
                        "closed_at": now,
                    }
                )
        closed = await repo.insert_statements(conn, rows)
    previous = await repo.close_run(conn)
    # a clock moved back (a test, a worker behind) never moves the month the close ran in backwards
    await repo.save_close_run(conn, max(current, previous[0]) if previous else current, top, now)
    return closed


async def mark_paid(
    db: Database, partner_id: int, period: object, currency: object, reference: object, *, actor: str, now: datetime
) -> Decimal:
    """CLOSED -> PAID with a ``PAYOUT`` of its closing balance in the open month; the amount paid.
    Twice at once: one payout (the second call finds it PAID: ``AlreadyPaid``)."""
    month = parse_period(period)
    ref = amounts.clean_text(reference, what="reference", limit=amounts.MAX_REFERENCE)
    if not isinstance(currency, str):
        raise CurrencyNeeded("Say which currency's statement.")
    async with db.write() as conn:
        row = await repo.statement_row(conn, partner_id, currency, month)
        if row is None:
            raise NoSuchStatement(f"There is no closed statement for {month} in {currency}.")
        if row.status is StatementStatus.PAID:
            raise AlreadyPaid(f"The statement {month} is already paid (reference {row.paid_reference}).")
        if row.figures.closing <= 0:
            raise StatementNotPayable(
                f"Nothing to pay: the closing balance of {month} is {money.text(row.figures.closing, currency)}."
            )
        marked = await repo.mark_paid(conn, row.id, reference=ref, now=now)
        if marked is None:
            raise AlreadyPaid(f"The statement {month} was marked paid meanwhile.")
        amount = marked[3]
        entry = transfer(
            PartnerLine.PAYOUT.value,
            currency,
            partner(partner_id),
            WORLD,
            amount,
            note=f"payout of {month}",
            reference=ref,
            actor=actor,
        )
        entry_id = await repo.post(conn, entry, now)
        await repo.link_payout(conn, row.id, entry_id)
        await repo.record_audit(
            conn,
            actor=actor,
            action="statement.mark_paid",
            subject=f"partner:{partner_id}",
            details={"period": month, "currency": currency, "amount": money.text(amount, currency), "reference": ref},
            now=now,
        )
    return amount


async def adjust(
    db: Database, partner_id: int, currency: object, amount: object, note: object, *, actor: str, now: datetime
) -> Decimal:
    """An ``ADJUSTMENT`` of the partner's account, either way, in the open month (admin, audited)."""
    if not isinstance(currency, str) or not money.is_currency(currency):
        raise CurrencyNeeded("Say which currency (an ISO 4217 code in capital letters, like EUR).")
    value = amounts.parse_adjustment(amount, currency)
    text = amounts.clean_text(note, what="note", limit=amounts.MAX_NOTE)
    entry = transfer(
        PartnerLine.ADJUSTMENT.value, currency, PLATFORM, partner(partner_id), value, note=text, actor=actor
    )
    async with db.write() as conn:
        await repo.post(conn, entry, now)
        await repo.record_audit(
            conn,
            actor=actor,
            action="partner.adjust",
            subject=f"partner:{partner_id}",
            details={"currency": currency, "amount": money.text(value, currency), "note": text},
            now=now,
        )
    return value


async def fx_position(db: Database) -> list[tuple[str, Decimal]]:
    """The FX accounts' balances, per currency (``transfers fx position``, docs/rules/fx.md#position):
    positive, taken in that currency; negative, owed in it."""
    async with db.read() as conn:
        return await repo.fx_position(conn)


async def ledger_check(db: Database) -> str | None:
    """The first difference in the books, or None (``transfers ledger check``)."""
    async with db.read() as conn:
        return await check.first_difference(conn)


def period_ended(period: str, now: datetime) -> bool:
    return period_end(period) <= now
