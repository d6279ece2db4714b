"""A partner's lines of a booking (docs/rules/statements.md#earnings), in the partner's own currency
(docs/rules/fx.md#books): ``RIDE`` and ``CANCELLATION_FEE`` follow from status changes
(``bookings/journal_effects.py``); ``RECOVERY`` is written here, by the one function the incidents call.

A booking converted from the partner's currency keeps both nets: ``net_total`` (the converted net lines,
in the booking's currency) and ``own_net_total`` (the partner's own price, in ``own_currency``). A
share of the client's money (a kept fee, an incident's refund) is the same ratio of each: ``amount x net
/ total``, the ratio has no currency, rounded in each side's own currency. The partner's account gets
the one, the platform gives the other, and the FX accounts change the one into the other."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting import earnings
from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import NewEntry, PartnerLine, to_partner, whole_partner_line
from transfers.bookings.models import Booking
from transfers.bookings.state import REFUNDING

ZERO = Decimal("0.00")


def ride_line(booking: Booking) -> NewEntry:
    """``RIDE``: the net, when the booking becomes COMPLETED (a customer no-show included)."""
    return whole_partner_line(
        PartnerLine.RIDE.value,
        booking.partner_id,
        (earnings.ride(booking.net_total), booking.currency),
        (earnings.ride(booking.own_net_total), booking.own_currency),
        booking_id=booking.id,
    )


def shares(booking: Booking, amount: Decimal) -> tuple[tuple[Decimal, str], tuple[Decimal, str]]:
    """The partner's share of ``amount`` of the client's money (in the booking's currency): (the platform's
    side, in the booking's currency; the partner's, in its own), each ``amount x net / total`` half-up."""
    paid = earnings.partner_share(amount, booking.net_total, booking.total, booking.currency)
    earned = earnings.partner_share(amount, booking.own_net_total, booking.total, booking.own_currency)
    return (paid, booking.currency), (earned, booking.own_currency)


def share_line(kind: PartnerLine, booking: Booking, amount: Decimal, *, sign: int, note: str | None) -> NewEntry | None:
    """A ``CANCELLATION_FEE`` (``sign`` 1) or ``RECOVERY`` (-1) of ``amount``; None when it rounds to nothing."""
    (paid, paid_in), (earned, earned_in) = shares(booking, amount)
    return to_partner(
        kind.value,
        booking.partner_id,
        (sign * paid, paid_in),
        (sign * earned, earned_in),
        booking_id=booking.id,
        note=note,
    )


async def recover_partner_share(
    conn: AsyncConnection, booking: Booking, refund: Decimal, *, now: datetime, note: str | None = None
) -> Decimal:
    """Write the ``RECOVERY`` of ``refund`` (the client's money given back for an incident that is
    the partner's responsibility) in the caller's transaction, the one that refunds; answers the
    line's amount in the partner's currency (negative), or 0 when none is due.

    ``booking``: the booking as the refund leaves it. Due on a booking that earned its ``RIDE``, or
    will earn it (not ended yet); a booking refunded in full before it was COMPLETED never earns a
    ``RIDE`` and owes nothing back. Should an earlier partial recovery be followed by the booking
    ending without its ride, the journal effect gives that recovery back."""
    if refund <= 0:
        return ZERO
    entry = share_line(PartnerLine.RECOVERY, booking, refund, sign=-1, note=note)
    if entry is None:
        return ZERO
    rode = await journal_repo.booking_kind_total(conn, booking.id, PartnerLine.RIDE.value, booking.partner_id)
    if rode is None and booking.status in REFUNDING:
        return ZERO
    await journal_repo.post(conn, entry, now)
    return -shares(booking, refund)[1][0]
