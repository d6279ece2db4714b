"""The wallet's money of every status change, the ``ledger`` entry of ``effects.EFFECTS``
(docs/rules/accounts.md#payment, docs/rules/cancellation.md): a wallet-paid booking is debited when
it is created and refunded when it enters a REFUNDING status; a ``reverse_api`` client pays the
partner directly and moves no wallet. Each move is a ``ledger_entries`` row and its balanced journal
entry (``wallet/repository.py``; in a fast statement, the CTEs of ``ledger_fragment``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, bindparam, insert, literal, select, true
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting.journal import AccountKind
from transfers.bookings import cancelling, journal_effects
from transfers.bookings.state import REFUNDING, BookingStatus
from transfers.clients.models import REVERSE_API_PAY_TYPE
from transfers.db.tables import journal_entries, ledger_entries
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import LedgerKind, signed_amount

if TYPE_CHECKING:
    from transfers.bookings.effects import Change, FastContext, FastShape


@dataclass(frozen=True, slots=True)
class LedgerMove:
    client_id: int
    kind: LedgerKind
    amount: Decimal
    note: str


def ledger_move(change: Change) -> LedgerMove | None:
    """The money a change moves: a wallet-paid booking is debited when created and refunded when it
    enters a REFUNDING status; a ``reverse_api`` client pays the partner directly (docs/rules/accounts.md#payment)."""
    if change.from_status is None:
        booking = change.moved
        kind, note = LedgerKind.DEBIT_BOOKING, booking.reservation_no
    elif change.to_status in REFUNDING and change.from_status is not change.to_status:
        booking = change.moved
        kind, note = LedgerKind.CREDIT_REFUND, f"{change.to_status.value.lower()}: {change.reason or ''}"
    else:
        return None  # a change that moves no money, a fast acknowledgement (no booking read) among them
    if booking.pay_type == REVERSE_API_PAY_TYPE:
        return None
    amount: Decimal = booking.total if change.from_status is None else cancelling.refund_due(booking)
    # docs/rules/cancellation.md: a client's cancel keeps the fee; no entry when nothing is refunded
    # (nor when incidents refunded the whole price already: docs/rules/incidents.md#resolve)
    if amount <= 0:
        return None
    if change.to_status is BookingStatus.CANCELLED and booking.cancellation_refund is not None:
        note = cancelling.ledger_note(booking, change.reason)
    return LedgerMove(booking.client_id, kind, amount, note)


async def ledger_write(conn: AsyncConnection, change: Change) -> None:
    move = ledger_move(change)
    if move is not None:  # a debit that does not fit raises InsufficientBalance: the caller rolls back
        await wallet_repo.post_entry_for_client(
            conn,
            client_id=move.client_id,
            kind=move.kind,
            amount=move.amount,
            now=change.now,
            booking_id=change.moved.id,
            note=move.note,
        )


async def ledger_write_many(conn: AsyncConnection, changes: Sequence[Change]) -> None:
    """The changes' wallet moves, one UPDATE per wallet by their sum (all fit or none is written)."""
    by_client: dict[int, list[wallet_repo.Move]] = {}
    for change in changes:
        move = ledger_move(change)
        if move is not None:
            by_client.setdefault(move.client_id, []).append(
                wallet_repo.Move(move.kind, move.amount, change.moved.id, move.note)
            )
    for client_id, moves in by_client.items():
        await wallet_repo.post_entries_for_client(conn, client_id=client_id, moves=moves, now=changes[0].now)


def ledger_fragment(ctx: FastContext) -> dict[str, CTE]:
    """The ledger row of the wallet move the statement made first (CTE ``w``, which gates the
    booking's own INSERT so that a short balance writes nothing). No fast statement moves into a
    REFUNDING status: a refund's wallet UPDATE would need the same gating, so it is refused here
    rather than silently left out."""
    if ctx.shape.to_status in REFUNDING:
        raise NotImplementedError("no fast path for a refunding change: use the general path")
    if ctx.wallet is None:
        return {}
    w, types = ctx.wallet, ledger_entries.c
    entry = (
        insert(ledger_entries)
        .from_select(
            ["wallet_id", "kind", "amount", "booking_id", "note", "created_at", "balance_after"],
            select(
                w.c.id,
                bindparam("w_kind", type_=types.kind.type),
                wallet_repo.DELTA,
                ctx.moved.c.id,
                bindparam("w_note", type_=types.note.type),
                ctx.now,
                w.c.balance,
            ).select_from(w.join(ctx.moved, true())),
        )
        .returning(types.id)
        .cte("l")
    )
    # Its journal entry, as ``wallet.repository`` writes one for every wallet move (docs/rules/statements.md#journal).
    journal = journal_effects.entry_fragment(
        "jw",
        values=(
            bindparam("w_kind", type_=journal_entries.c.kind.type),
            w.c.currency,
            ctx.moved.c.id,
            entry.c.id,
            bindparam("w_note", type_=journal_entries.c.note.type),
        ),
        over=w.join(ctx.moved, true()).join(entry, true()),
        now=ctx.now,
        legs=[
            (AccountKind.WALLET, w.c.id, wallet_repo.DELTA),
            (_COUNTER[LedgerKind.DEBIT_BOOKING], literal(0), -wallet_repo.DELTA),
        ],
    )
    return {"l": entry, **journal}


# The only wallet move of a fast statement is a creation's debit; its counter-account has owner 0.
_COUNTER = {LedgerKind.DEBIT_BOOKING: LedgerKind.DEBIT_BOOKING.counter_account.kind}


def ledger_params(change: Change, shape: FastShape) -> dict[str, Any]:
    move = ledger_move(change)
    if move is None:
        if shape.wallet:
            raise ValueError("the statement moves the wallet, the change moves no money")
        return {}
    if not shape.wallet:
        raise ValueError(f"the change moves money ({move.kind.value}), the statement has no wallet move")
    return {
        "w_client_id": move.client_id,
        "w_kind": move.kind.value,
        "w_note": move.note,
        "w_delta": signed_amount(move.kind, move.amount),
    }
