"""The journal side of every booking status change (docs/rules/statements.md): registered once in
``bookings/effects.EFFECTS`` as the ``journal`` effect, so every path that moves a booking (the
client's cancel, the partner's answers, the operator's actions, incidents, return trips, paths not
written yet) writes these entries in the same transaction, without knowing about the journal.

What it writes (a wallet's own movements are journaled by ``wallet.repository``, the one place a
wallet moves):

* a ``reverse_api`` booking (a third party pays, docs/rules/accounts.md#payment): the price comes
  from the world into the platform when created, and a refund goes back the same way, amount as a
  wallet refund would be (``cancel_rules.refund_due``);
* ``RIDE`` = net when the booking becomes COMPLETED (docs/rules/statements.md#earnings);
* ``CANCELLATION_FEE`` = fee x net / total when a client's cancel keeps a fee;
* a booking that ends refunded or cancelled without a ``RIDE`` gives back any ``RECOVERY`` taken
  from the partner before (an incident's partial refund on a booking then never completed): the
  partner was simply not paid for it, so it owes nothing back; but a client's fee-keeping cancel keeps
  the partner's share of the part of the fee its incidents refunded (docs/rules/incidents.md#refund-then-cancel).

``RECOVERY`` itself is written by ``bookings.earnings.recover_partner_share``, which an incident's
resolution calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import (
    PLATFORM,
    THIRD_PARTY_PAYMENT,
    THIRD_PARTY_REFUND,
    WORLD,
    AccountKind,
    NewEntry,
    PartnerLine,
    to_partner,
    transfer,
)
from transfers.accounting.periods import period_of
from transfers.bookings import cancel_rules
from transfers.bookings import earnings as earned
from transfers.bookings.effect_rows import BOOKING_ID, NOW, Call, Insert, Of, OpenPeriod, Step
from transfers.bookings.hooks import HOOKS
from transfers.bookings.models import Booking
from transfers.bookings.state import REFUNDING, BookingStatus
from transfers.clients.models import REVERSE_API_PAY_TYPE

if TYPE_CHECKING:
    from transfers.bookings.effects import Change

S = BookingStatus
ZERO = Decimal("0.00")


def _third_party_refund(booking: Booking, to_status: BookingStatus) -> Decimal:
    """What a refunding change gives back (0.00: nothing), as ``ledger_effects.ledger_move`` for a wallet."""
    amount = cancel_rules.refund_due(booking)
    if to_status is S.CANCELLED and booking.cancellation_refund is not None and amount <= 0:
        return Decimal("0.00")
    return amount


def planned_entries(change: Change) -> list[NewEntry]:
    """The entries a change writes that need no reading of the journal. Pure."""
    if change.booking is None:
        return []
    booking, entries = change.booking, []
    moved_status = change.from_status is not change.to_status
    third_party = booking.pay_type == REVERSE_API_PAY_TYPE
    if change.from_status is None and third_party:
        entries.append(
            transfer(THIRD_PARTY_PAYMENT, booking.currency, WORLD, PLATFORM, booking.total, booking_id=booking.id)
        )
    if change.from_status is not None and moved_status and change.to_status in REFUNDING and third_party:
        refund = _third_party_refund(booking, change.to_status)
        if refund > 0:
            note = cancel_rules.refund_note(change.to_status.value, change.reason)
            entries.append(
                transfer(
                    THIRD_PARTY_REFUND, booking.currency, PLATFORM, WORLD, refund, booking_id=booking.id, note=note
                )
            )
    if change.from_status is None or not moved_status:
        return entries  # a creation, or a change of details: no partner line
    if change.to_status is S.COMPLETED:
        entries.append(earned.ride_line(booking))
    fee = booking.cancellation_fee
    if change.to_status is S.CANCELLED and fee is not None and fee > 0:
        note = f"fee {money.text(fee, booking.currency)} of {money.text(booking.total, booking.currency)}"
        line = earned.share_line(PartnerLine.CANCELLATION_FEE, booking, fee, sign=1, note=note)
        if line is not None:
            entries.append(line)
    return entries


def journal_rows(change: Change) -> list[Step]:
    """The change's journal entries (``planned_entries``) and, for a booking that ends refunded or
    cancelled from APPROVED or COMPLETED, the recoveries it gives back, which read the journal first
    (a ``Call``: no fast statement ends a booking)."""
    steps = [
        step for entry in planned_entries(change) for step in entry_steps(entry, change.now, booking_id=BOOKING_ID)
    ]
    booking = change.booking
    if (
        booking is not None
        and change.from_status in (S.APPROVED, S.COMPLETED)
        and change.from_status is not change.to_status
        and change.to_status in REFUNDING
    ):
        steps.append(Call(lambda conn: _give_back_recoveries(conn, booking, change)))
    return steps


def entry_steps(entry: NewEntry, now: datetime, *, booking_id: Any = None) -> list[Step]:
    """``entry`` as the rows ``journal_repo.post`` writes (``booking_id``: instead of the entry's own)."""
    return entry_rows(
        entry.kind,
        entry.currency,
        [(leg.account.kind, leg.account.owner_id, leg.amount, leg.currency) for leg in entry.legs],
        booking_id=entry.booking_id if booking_id is None else booking_id,
        ledger_entry_id=entry.ledger_entry_id,
        note=entry.note,
        reference=entry.reference,
        actor=entry.actor,
        now=now,
    )


def entry_rows(
    kind: str,
    currency: Any,
    legs: Sequence[tuple[AccountKind, Any, Decimal, str | None]],
    *,
    booking_id: Any,
    now: datetime,
    ledger_entry_id: Any = None,
    note: str | None = None,
    reference: str | None = None,
    actor: str | None = None,
) -> list[Step]:
    """One journal entry and its lines (balanced: ``journal.NewEntry`` checks it for a plain entry)
    as ``journal_repo.post_many`` writes them; ``currency``, an owner, the booking's and the ledger
    entry's id may be values the write makes (``Of``: a wallet move's). A leg's currency: its own, or
    None for the entry's (docs/rules/fx.md#books). A partner's line counts in its open month
    (``OpenPeriod``, read: the general path only), the others in ``now``'s."""
    known: dict[str, Any] = {"kind": kind, "note": note, "reference": reference, "actor": actor}
    made: dict[str, Of] = {"created_at": NOW}
    for column, value in (("currency", currency), ("booking_id", booking_id), ("ledger_entry_id", ledger_entry_id)):
        if type(value) is Of:
            made[column] = value
        else:
            known[column] = value
    entry = Insert("journal_entries", known, made)
    steps: list[Step] = [entry]
    month = period_of(now)
    entry_id = Of(entry, "id")
    for account, owner_id, amount, own_currency in legs:
        line: dict[str, Any] = {"account": account.value, "amount": amount}
        leg_currency = currency if own_currency is None else own_currency
        line_made: dict[str, Of] = {"entry_id": entry_id, "created_at": NOW}
        if type(owner_id) is Of:
            line_made["owner_id"] = owner_id
        else:
            line["owner_id"] = owner_id
        if type(leg_currency) is Of:
            line_made["currency"] = leg_currency
        else:
            line["currency"] = leg_currency
        if account is AccountKind.PARTNER:
            opened = OpenPeriod(owner_id, leg_currency)
            steps.insert(0, opened)
            line_made["period"] = Of(opened, "period")
        else:
            line["period"] = month
        steps.append(Insert("journal_lines", line, line_made))
    return steps


async def _give_back_recoveries(conn: AsyncConnection, booking: Booking, change: Change) -> list[Step]:
    """A booking that ends without its RIDE keeps no RECOVERY (docs/rules/statements.md#earnings), but for
    the part of a client's kept fee that the partner's incident refunds took back
    (docs/rules/incidents.md#refund-then-cancel). Both sides of a converted booking's recoveries
    (docs/rules/fx.md#books): the partner's, in its currency, and the platform's, in the booking's."""
    if await journal_repo.booking_kind_total(conn, booking.id, PartnerLine.RIDE.value, booking.partner_id) is not None:
        return []
    sums = await journal_repo.booking_kind_sums(conn, booking.id, PartnerLine.RECOVERY.value)
    recovered = sums.get((AccountKind.PARTNER.value, booking.own_currency), ZERO)
    recovered_paid = -sums.get((AccountKind.PLATFORM.value, booking.currency), ZERO)
    if recovered == 0 and recovered_paid == 0:
        return []
    kept_paid, kept = await _recovery_kept(conn, booking, change)
    kept, kept_paid = max(recovered, kept), max(recovered_paid, kept_paid)  # all <= 0: never keep more than taken
    shown = f" (kept {money.text(-kept, booking.own_currency)}: the partner's incidents refunded part of the kept fee)"
    entry = to_partner(
        PartnerLine.RECOVERY.value,
        booking.partner_id,
        (kept_paid - recovered_paid, booking.currency),
        (kept - recovered, booking.own_currency),
        booking_id=booking.id,
        note="recovery given back: the booking ended without its ride" + (shown if kept else ""),
    )
    return [] if entry is None else entry_steps(entry, change.now)


async def _recovery_kept(conn: AsyncConnection, booking: Booking, change: Change) -> tuple[Decimal, Decimal]:
    """The RECOVERY a client's fee-keeping cancel leaves (0 or negative; the platform's side, in the
    booking's currency, and the partner's, in its own). The client paid
    ``total - incident refunds - the cancel's refund`` = ``min(fee, total - incident refunds)``: when the
    incidents refunded more than the cancel would have (``fee + refunded - total`` > 0), that part of the
    fee never reached the platform. The partner still earns ``CANCELLATION_FEE`` on the whole fee, and
    carries its share (net / total) of the part its own incidents (responsible ``partner``) took back, in
    proportion to their refunds among all the incidents'; the rest is the platform's, as those refunds were."""
    fee = booking.cancellation_fee
    refunded = booking.incident_refunded or ZERO
    if change.to_status is not S.CANCELLED or fee is None or fee <= 0 or refunded <= 0:
        return ZERO, ZERO
    taken = fee + refunded - booking.total
    if taken <= 0:
        return ZERO, ZERO
    theirs = await HOOKS.refunded_by_partner(conn, booking.id)  # the incidents' (bookings/hooks.py)
    if theirs <= 0:
        return ZERO, ZERO
    (paid, _), (earned_share, _) = earned.shares(booking, taken * theirs / refunded)
    return -paid, -earned_share
