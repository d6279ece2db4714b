"""The journal side of every booking status change (docs/rules/statements.md): registered once in
``bookings/effects.EFFECTS`` as the ``journal`` effect, so every path that moves a booking (the
client's cancel, the partner's answers, the operator's actions, incidents, return trips, paths not
written yet) writes these entries in the same transaction, without knowing about the journal.

What it writes (a wallet's own movements are journaled by ``wallet.repository``, the one place a
wallet moves):

* a ``reverse_api`` booking (a third party pays, docs/rules/accounts.md#payment): the price comes
  from the world into the platform when created, and a refund goes back the same way, amount as a
  wallet refund would be (``cancelling.refund_due``);
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
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, ColumnElement, FromClause, bindparam, cast, insert, literal, null, select, true, union_all
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money
from transfers.accounting import earnings
from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import (
    PLATFORM,
    THIRD_PARTY_PAYMENT,
    THIRD_PARTY_REFUND,
    WORLD,
    AccountKind,
    NewEntry,
    PartnerLine,
    partner,
    transfer,
)
from transfers.accounting.periods import period_of
from transfers.bookings import cancelling
from transfers.bookings.incidents import repository as incidents_repo
from transfers.bookings.models import Booking
from transfers.bookings.state import REFUNDING, BookingStatus
from transfers.clients.models import REVERSE_API_PAY_TYPE
from transfers.db.tables import journal_entries, journal_lines

if TYPE_CHECKING:
    from transfers.bookings.effects import Change, FastContext, FastShape

S = BookingStatus
ZERO = Decimal("0.00")


def _third_party_refund(booking: Booking, to_status: BookingStatus) -> Decimal:
    """What a refunding change gives back (0.00: nothing), as ``ledger_effects.ledger_move`` for a wallet."""
    amount = cancelling.refund_due(booking)
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
            note = f"{change.to_status.value.lower()}: {change.reason or ''}"
            entries.append(
                transfer(
                    THIRD_PARTY_REFUND, booking.currency, PLATFORM, WORLD, refund, booking_id=booking.id, note=note
                )
            )
    account = partner(booking.partner_id)
    if change.from_status is not None and moved_status and change.to_status is S.COMPLETED:
        entries.append(
            transfer(
                PartnerLine.RIDE.value,
                booking.currency,
                PLATFORM,
                account,
                earnings.ride(booking.net_total),
                booking_id=booking.id,
            )
        )
    fee = booking.cancellation_fee
    if moved_status and change.to_status is S.CANCELLED and fee is not None and fee > 0:
        share = earnings.cancellation_fee(fee, booking.net_total, booking.total, booking.currency)
        if share != 0:
            entries.append(
                transfer(
                    PartnerLine.CANCELLATION_FEE.value,
                    booking.currency,
                    PLATFORM,
                    account,
                    share,
                    booking_id=booking.id,
                    note=f"fee {money.text(fee, booking.currency)} of {money.text(booking.total, booking.currency)}",
                )
            )
    return entries


async def journal_write(conn: AsyncConnection, change: Change) -> None:
    await journal_repo.post_many(conn, planned_entries(change), change.now)
    await _recoveries(conn, change)


async def journal_write_many(conn: AsyncConnection, changes: Sequence[Change]) -> None:
    """``journal_write`` of several changes (all at the same ``now``), their planned entries in one post."""
    await journal_repo.post_many(
        conn, [entry for change in changes for entry in planned_entries(change)], changes[0].now
    )
    for change in changes:
        await _recoveries(conn, change)


async def _recoveries(conn: AsyncConnection, change: Change) -> None:
    booking = change.booking
    if (
        booking is not None
        and change.from_status in (S.APPROVED, S.COMPLETED)
        and change.from_status is not change.to_status
        and change.to_status in REFUNDING
    ):
        await _give_back_recoveries(conn, booking, change)


async def _give_back_recoveries(conn: AsyncConnection, booking: Booking, change: Change) -> None:
    """A booking that ends without its RIDE keeps no RECOVERY (docs/rules/statements.md#earnings), but for
    the part of a client's kept fee that the partner's incident refunds took back
    (docs/rules/incidents.md#refund-then-cancel)."""
    if await journal_repo.booking_kind_total(conn, booking.id, PartnerLine.RIDE.value, booking.partner_id) is not None:
        return
    recovered = await journal_repo.booking_kind_total(conn, booking.id, PartnerLine.RECOVERY.value, booking.partner_id)
    if recovered is None or recovered == 0:
        return
    kept = max(recovered, await _recovery_kept(conn, booking, change))  # both <= 0: never keep more than taken
    if kept == recovered:
        return
    entry = transfer(
        PartnerLine.RECOVERY.value,
        booking.currency,
        PLATFORM,
        partner(booking.partner_id),
        kept - recovered,
        booking_id=booking.id,
        note="recovery given back: the booking ended without its ride"
        + (
            f" (kept {money.text(-kept, booking.currency)}: the partner's incidents refunded part of the kept fee)"
            if kept
            else ""
        ),
    )
    await journal_repo.post(conn, entry, change.now)


async def _recovery_kept(conn: AsyncConnection, booking: Booking, change: Change) -> Decimal:
    """The RECOVERY a client's fee-keeping cancel leaves (0.00 or negative). The client paid
    ``total - incident refunds - the cancel's refund`` = ``min(fee, total - incident refunds)``: when the
    incidents refunded more than the cancel would have (``fee + refunded - total`` > 0), that part of the
    fee never reached the platform. The partner still earns ``CANCELLATION_FEE`` on the whole fee, and
    carries its share (net / total) of the part its own incidents (responsible ``partner``) took back, in
    proportion to their refunds among all the incidents'; the rest is the platform's, as those refunds were."""
    fee = booking.cancellation_fee
    refunded = booking.incident_refunded or ZERO
    if change.to_status is not S.CANCELLED or fee is None or fee <= 0 or refunded <= 0:
        return ZERO
    taken = fee + refunded - booking.total
    if taken <= 0:
        return ZERO
    theirs = await incidents_repo.partner_refunds(conn, booking.id)
    if theirs <= 0:
        return ZERO
    return earnings.recovery(taken * theirs / refunded, booking.net_total, booking.total, booking.currency)


# --- the fast statements (PostgreSQL) ----------------------------------------------------------------


def entry_fragment(
    name: str,
    *,
    values: tuple[ColumnElement[Any], ...],
    over: FromClause,
    now: ColumnElement[Any],
    legs: list[tuple[AccountKind, ColumnElement[Any], ColumnElement[Any]]],
) -> dict[str, CTE]:
    """A journal entry and its lines as two CTEs (``name``, ``name + "l"``) of a fast statement.

    ``values``: the entry's kind, currency, booking id, ledger entry id and note, read over
    ``over`` (one row: the CTEs they name, joined); each leg is (account kind, owner id, signed
    amount), also read over ``over``. The lines' ``period`` is the bind ``jr_period`` (``fast_params``)."""
    entry = (
        insert(journal_entries)
        .from_select(
            ["kind", "currency", "booking_id", "ledger_entry_id", "note", "created_at"],
            select(*values, now).select_from(over),
        )
        .returning(journal_entries.c.id, journal_entries.c.currency)
        .cte(name)
    )
    period = bindparam("jr_period", type_=journal_lines.c.period.type)
    account_type, owner_type = journal_lines.c.account.type, journal_lines.c.owner_id.type
    rows = [
        select(
            entry.c.id,
            literal(account.value, account_type),
            cast(owner, owner_type),
            entry.c.currency,
            cast(amount, journal_lines.c.amount.type),
            period,
            now,
        ).select_from(entry.join(over, true()))
        for account, owner, amount in legs
    ]
    lines = (
        insert(journal_lines)
        .from_select(
            ["entry_id", "account", "owner_id", "currency", "amount", "period", "created_at"], union_all(*rows)
        )
        .cte(f"{name}l")
    )
    return {name: entry, f"{name}l": lines}


def journal_fragment(ctx: FastContext) -> dict[str, CTE]:
    """A fast creation of a third party's booking: its payment, world -> platform. (A wallet
    payer's debit is journaled with its wallet move, ``ledger_effects.ledger_fragment``.) No fast statement
    completes or ends a booking, so no partner line is ever due here."""
    shape = ctx.shape
    if shape.to_status is S.COMPLETED or shape.to_status in REFUNDING:
        raise NotImplementedError("no fast path completes or ends a booking: use the general path")
    if shape.from_status is not None or shape.wallet:
        return {}
    moved, types = ctx.moved.c, journal_entries.c
    return entry_fragment(
        "jt",
        values=(
            literal(THIRD_PARTY_PAYMENT, types.kind.type),
            moved.currency,
            moved.id,
            null(),
            null(),
        ),
        over=ctx.moved,
        now=ctx.now,
        legs=[(AccountKind.WORLD, literal(0), -moved.total), (AccountKind.PLATFORM, literal(0), moved.total)],
    )


def journal_params(change: Change, shape: FastShape) -> dict[str, Any]:
    """The lines' month, for the journal CTEs of a fast creation (this effect's or the wallet's)."""
    return {"jr_period": period_of(change.now)} if shape.from_status is None else {}
