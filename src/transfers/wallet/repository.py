"""Wallet persistence: balance row plus append-only ledger, changed together or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import ColumnElement, Update, and_, bindparam, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import wallet_entry
from transfers.db.tables import bookings, ledger_entries, wallets
from transfers.wallet.ledger import (
    InsufficientBalance,
    LedgerEntry,
    LedgerKind,
    StatementLine,
    in_currency,
    signed_amount,
)

# Built once (every create and refund runs them): building the statements per call was a visible
# share of a create (docs/operations/performance-history.md#profile). ``w_delta`` appears twice: same name, same value.
# The one place the "never below zero" move is written: the create statement of
# ``bookings.repository`` embeds MOVE_BY_CLIENT (and DELTA) as its first step.
DELTA = bindparam("w_delta", type_=wallets.c.balance.type)


def _move(where: ColumnElement[bool]) -> Update:
    return (
        update(wallets)
        .where(where, wallets.c.balance + DELTA >= 0)
        .values(balance=wallets.c.balance + DELTA)
        .returning(wallets.c.id, wallets.c.balance, wallets.c.currency)
    )


_MOVE_BY_ID = _move(wallets.c.id == bindparam("w_id"))
# The wallet of a client in one currency (``UNIQUE (client_id, currency)``): a booking moves the wallet of
# its own currency and no other (docs/rules/wallet.md#currencies). No such wallet: no row, as a debit
# that does not fit.
MOVE_BY_CLIENT = _move(
    and_(wallets.c.client_id == bindparam("w_client_id"), wallets.c.currency == bindparam("w_currency"))
)
_INSERT_ENTRY = insert(ledger_entries).returning(ledger_entries.c.id)


async def post_entry(
    conn: AsyncConnection,
    *,
    wallet_id: int,
    kind: LedgerKind,
    amount: Decimal,
    now: datetime,
    booking_id: int | None = None,
    note: str | None = None,
) -> Decimal:
    """Apply one ledger entry and return the new balance.

    The balance is changed by a single conditional UPDATE: PostgreSQL takes the row lock and
    re-checks ``balance + delta >= 0`` on the latest committed row, so concurrent debits can never
    overdraw; on SQLite the caller's write transaction (BEGIN IMMEDIATE) already serialises them.
    Raises InsufficientBalance (writing nothing) when a debit does not fit.
    """
    return (await _post(conn, _MOVE_BY_ID, {"w_id": wallet_id}, kind, amount, now, booking_id, note))[1]


async def post_entry_for_client(
    conn: AsyncConnection,
    *,
    client_id: int,
    currency: str,
    kind: LedgerKind,
    amount: Decimal,
    now: datetime,
    booking_id: int | None = None,
    note: str | None = None,
) -> int:
    """``post_entry`` on the client's wallet in ``currency``, found by the UPDATE itself (``UNIQUE
    (client_id, currency)``): no separate wallet lookup. Returns the wallet id. Raises InsufficientBalance
    (writing nothing) like ``post_entry`` when no row moved."""
    key = {"w_client_id": client_id, "w_currency": currency}
    return (await _post(conn, MOVE_BY_CLIENT, key, kind, amount, now, booking_id, note))[0]


_INSERT_ENTRIES = insert(ledger_entries).returning(ledger_entries.c.id, sort_by_parameter_order=True)


@dataclass(frozen=True, slots=True)
class Move:
    """One of several moves of one wallet posted together (``post_entries_for_client``)."""

    kind: LedgerKind
    amount: Decimal
    booking_id: int | None
    note: str | None


async def post_entries_for_client(
    conn: AsyncConnection, *, client_id: int, currency: str, moves: Sequence[Move], now: datetime
) -> int:
    """``post_entry_for_client`` for each of ``moves`` in that order, with ONE wallet UPDATE by their
    sum: all fit or InsufficientBalance and nothing written (a return trip's two debits: 1101 on the
    sum, docs/rules/return-trips.md#create). Each ledger entry's ``balance_after`` is the balance
    after it, as if posted one by one. Returns the wallet id."""
    deltas = [signed_amount(move.kind, move.amount) for move in moves]
    moved = (
        await conn.execute(
            MOVE_BY_CLIENT,
            {"w_client_id": client_id, "w_currency": currency, "w_delta": sum(deltas), "updated_at": now},
        )
    ).first()
    if moved is None:
        raise InsufficientBalance()
    deltas = [in_currency(delta, str(moved.currency)) for delta in deltas]
    balance = Decimal(moved.balance) - sum(deltas)
    rows = []
    for move, delta in zip(moves, deltas, strict=True):
        balance += delta
        rows.append(
            {
                "wallet_id": moved.id,
                "kind": move.kind.value,
                "amount": delta,
                "booking_id": move.booking_id,
                "note": move.note,
                "created_at": now,
                "balance_after": balance,
            }
        )
    ids = [int(i) for i in (await conn.execute(_INSERT_ENTRIES, rows)).scalars()]
    entries = [
        wallet_entry(
            move.kind.value,
            str(moved.currency),
            int(moved.id),
            delta,
            move.kind.counter_account,
            i,
            move.booking_id,
            move.note,
        )
        for move, delta, i in zip(moves, deltas, ids, strict=True)
    ]
    await journal_repo.post_many(conn, entries, now)
    return int(moved.id)


async def _post(
    conn: AsyncConnection,
    statement: Update,
    key: dict[str, object],
    kind: LedgerKind,
    amount: Decimal,
    now: datetime,
    booking_id: int | None,
    note: str | None,
) -> tuple[int, Decimal]:
    delta = signed_amount(kind, amount)
    moved = (await conn.execute(statement, {**key, "w_delta": delta, "updated_at": now})).first()
    if moved is None:
        raise InsufficientBalance()
    delta = in_currency(delta, str(moved.currency))
    entry_id = (
        await conn.execute(
            _INSERT_ENTRY,
            {
                "wallet_id": moved.id,
                "kind": kind.value,
                "amount": delta,
                "booking_id": booking_id,
                "note": note,
                "created_at": now,
                "balance_after": moved.balance,
            },
        )
    ).scalar_one()
    # The journal entry of this movement, in the same transaction (docs/rules/statements.md#journal).
    await journal_repo.post(
        conn,
        wallet_entry(
            kind.value, str(moved.currency), int(moved.id), delta, kind.counter_account, int(entry_id), booking_id, note
        ),
        now,
    )
    return int(moved.id), Decimal(moved.balance)


def _one_wallet(client_id: int, currency: str | None) -> ColumnElement[bool]:
    """The client's wallet in ``currency``, or its default wallet when ``currency`` is None."""
    which = wallets.c.is_default.is_(True) if currency is None else wallets.c.currency == currency
    return and_(wallets.c.client_id == client_id, which)


async def wallet_of_client(
    conn: AsyncConnection, client_id: int, currency: str | None = None
) -> tuple[int, str, Decimal] | None:
    """(id, currency, balance) of the client's wallet in ``currency`` (None: its default wallet), or None."""
    row = (
        await conn.execute(
            select(wallets.c.id, wallets.c.currency, wallets.c.balance).where(_one_wallet(client_id, currency))
        )
    ).first()
    return None if row is None else (row.id, row.currency, row.balance)


@dataclass(frozen=True, slots=True)
class WalletRow:
    """One of a client's wallets, as ``GET /wallets`` and the console list them."""

    id: int
    currency: str
    balance: Decimal
    is_default: bool


async def wallets_of_client(conn: AsyncConnection, client_id: int) -> list[WalletRow]:
    """Every wallet of the client, in the order they were added (the first is the default until moved)."""
    rows = await conn.execute(
        select(wallets.c.id, wallets.c.currency, wallets.c.balance, wallets.c.is_default)
        .where(wallets.c.client_id == client_id)
        .order_by(wallets.c.id)
    )
    return [WalletRow(int(r.id), str(r.currency), Decimal(r.balance), bool(r.is_default)) for r in rows]


async def wallets_of_clients(conn: AsyncConnection, client_ids: list[int]) -> dict[int, list[WalletRow]]:
    """Every wallet of each of these clients (a page of the console's list), in the order they were added."""
    found: dict[int, list[WalletRow]] = {}
    if not client_ids:
        return found
    rows = await conn.execute(
        select(wallets.c.id, wallets.c.client_id, wallets.c.currency, wallets.c.balance, wallets.c.is_default)
        .where(wallets.c.client_id.in_(client_ids))
        .order_by(wallets.c.client_id, wallets.c.id)
    )
    for r in rows:
        found.setdefault(int(r.client_id), []).append(
            WalletRow(int(r.id), str(r.currency), Decimal(r.balance), bool(r.is_default))
        )
    return found


async def add_wallet(conn: AsyncConnection, client_id: int, currency: str, *, default: bool, now: datetime) -> int:
    """A new wallet at zero (the caller checked the client holds none in ``currency``); with ``default``
    it becomes the client's default, the previous default's mark cleared first (the partial unique index
    allows one). Returns its id."""
    if default:
        await conn.execute(
            update(wallets)
            .where(wallets.c.client_id == client_id, wallets.c.is_default.is_(True))
            .values(is_default=False)
        )
    inserted = await conn.execute(
        insert(wallets)
        .values(client_id=client_id, currency=currency, balance=0, updated_at=now, is_default=default)
        .returning(wallets.c.id)
    )
    return int(inserted.scalar_one())


async def ledger_sum(conn: AsyncConnection, wallet_id: int) -> Decimal:
    """Sum of the wallet's ledger (SUM keeps the Money type, so it is exact on both databases)."""
    total = (
        await conn.execute(select(func.sum(ledger_entries.c.amount)).where(ledger_entries.c.wallet_id == wallet_id))
    ).scalar_one()
    return Decimal("0.00") if total is None else Decimal(total)


async def entries_for_booking(conn: AsyncConnection, booking_id: int) -> list[LedgerEntry]:
    """The ledger entries of one booking (debit, refund), oldest first: an operator's view."""
    rows = await conn.execute(
        select(ledger_entries).where(ledger_entries.c.booking_id == booking_id).order_by(ledger_entries.c.id)
    )
    return [LedgerEntry.from_row(r) for r in rows.mappings()]


async def statement_page(
    conn: AsyncConnection,
    client_id: int,
    *,
    currency: str | None = None,
    created_from: datetime | None,
    created_to: datetime | None,
    below_id: int | None,
    limit: int,
) -> tuple[str | None, list[StatementLine]]:
    """(the wallet's currency, up to ``limit`` of its entries newest first, i.e. by id descending:
    the order the balance moved in), with the booking's reservation number; entries strictly below
    ``below_id`` when given; the wallet in ``currency``, or the default one. (None, []) when the client
    holds no such wallet. One range scan of ``ix_ledger_entries_wallet_id_id``."""
    wallet = (
        await conn.execute(select(wallets.c.id, wallets.c.currency).where(_one_wallet(client_id, currency)))
    ).first()
    if wallet is None:
        return None, []
    e = ledger_entries.c
    query = (
        select(e.id, e.kind, e.amount, e.balance_after, e.note, e.created_at, bookings.c.reservation_no)
        .select_from(ledger_entries.outerjoin(bookings, bookings.c.id == e.booking_id))
        .where(e.wallet_id == wallet.id)
        .order_by(e.id.desc())
        .limit(limit)
    )
    if created_from is not None:
        query = query.where(e.created_at >= created_from)
    if created_to is not None:
        query = query.where(e.created_at < created_to)
    if below_id is not None:
        query = query.where(e.id < below_id)
    return str(wallet.currency), [StatementLine.from_row(r) for r in (await conn.execute(query)).mappings()]
