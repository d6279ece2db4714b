"""Wallet persistence: balance row plus append-only ledger, changed together or not at all."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import ledger_entries, wallets
from transfers.wallet.ledger import InsufficientBalance, LedgerKind, signed_amount


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
    delta = signed_amount(kind, amount)
    result = await conn.execute(
        update(wallets)
        .where(wallets.c.id == wallet_id, wallets.c.balance + delta >= 0)
        .values(balance=wallets.c.balance + delta, updated_at=now)
        .returning(wallets.c.balance)
    )
    new_balance = result.scalar_one_or_none()
    if new_balance is None:
        raise InsufficientBalance()
    await conn.execute(
        insert(ledger_entries).values(
            wallet_id=wallet_id, kind=kind.value, amount=delta, booking_id=booking_id, note=note,
            created_at=now,
        )
    )
    return Decimal(new_balance)


async def wallet_of_client(conn: AsyncConnection, client_id: int) -> tuple[int, str, Decimal] | None:
    row = (
        await conn.execute(
            select(wallets.c.id, wallets.c.currency, wallets.c.balance).where(
                wallets.c.client_id == client_id
            )
        )
    ).first()
    return None if row is None else (row.id, row.currency, row.balance)


async def ledger_sum(conn: AsyncConnection, wallet_id: int) -> Decimal:
    """Sum of the wallet's ledger (SUM keeps the Money type, so it is exact on both databases)."""
    total = (
        await conn.execute(
            select(func.sum(ledger_entries.c.amount)).where(ledger_entries.c.wallet_id == wallet_id)
        )
    ).scalar_one()
    return Decimal("0.00") if total is None else Decimal(total)
