"""The wallet's money of every status change, the ``ledger`` entry of ``effects.EFFECTS``
(docs/rules/accounts.md#payment, docs/rules/cancellation.md): a wallet-paid booking is debited when
it is created and refunded when it enters a REFUNDING status; a ``reverse_api`` client pays the
partner directly and moves no wallet. Each move is the wallet's conditional UPDATE, a ``ledger_entries``
row and its balanced journal entry (``ledger_rows``, written by both paths: ``bookings/effect_rows.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

from transfers.accounting.journal import AccountKind
from transfers.bookings import cancel_rules, journal_effects
from transfers.bookings.effect_rows import BOOKING_ID, NOW, Insert, Of, Step, WalletMove
from transfers.bookings.state import REFUNDING, BookingStatus
from transfers.clients.models import REVERSE_API_PAY_TYPE
from transfers.wallet.ledger import LedgerKind, signed_amount

if TYPE_CHECKING:
    from transfers.bookings.effects import Change


@dataclass(frozen=True, slots=True)
class LedgerMove:
    client_id: int
    currency: str  # the booking's: the wallet of that currency moves (docs/rules/wallet.md#currencies)
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
        kind, note = LedgerKind.CREDIT_REFUND, cancel_rules.refund_note(change.to_status.value, change.reason)
    else:
        return None  # a change that moves no money, a fast acknowledgement (no booking read) among them
    if booking.pay_type == REVERSE_API_PAY_TYPE:
        return None
    amount: Decimal = booking.total if change.from_status is None else cancel_rules.refund_due(booking)
    # docs/rules/cancellation.md: a client's cancel keeps the fee; no entry when nothing is refunded
    # (nor when incidents refunded the whole price already: docs/rules/incidents.md#resolve)
    if amount <= 0:
        return None
    if change.to_status is BookingStatus.CANCELLED and booking.cancellation_refund is not None:
        note = cancel_rules.ledger_note(booking, change.reason)
    return LedgerMove(booking.client_id, booking.currency, kind, amount, note)


def ledger_rows(change: Change) -> list[Step]:
    """The change's wallet move (``ledger_move``): the wallet's conditional UPDATE (a debit that does
    not fit writes nothing: InsufficientBalance, or no row from a fast statement), its
    ``ledger_entries`` row with the balance after it, and that row's journal entry, wallet against
    its counter-account, as ``wallet.repository`` writes one for every wallet move
    (docs/rules/statements.md#journal)."""
    move = ledger_move(change)
    if move is None:
        return []
    delta = signed_amount(move.kind, move.amount)
    wallet = WalletMove(move.client_id, move.currency, delta)
    wallet_id = Of(wallet, "id")
    entry = Insert(
        "ledger_entries",
        {"kind": move.kind.value, "note": move.note},
        {
            "wallet_id": wallet_id,
            "amount": Of(wallet, "delta"),
            "booking_id": BOOKING_ID,
            "created_at": NOW,
            "balance_after": Of(wallet, "balance"),
        },
    )
    counter = move.kind.counter_account
    journal = journal_effects.entry_rows(
        move.kind.value,
        Of(wallet, "currency"),
        [(AccountKind.WALLET, wallet_id, delta, None), (counter.kind, counter.owner_id, -delta, None)],
        booking_id=BOOKING_ID,
        ledger_entry_id=Of(entry, "id"),
        note=move.note,
        now=change.now,
    )
    return [wallet, entry, *journal]
