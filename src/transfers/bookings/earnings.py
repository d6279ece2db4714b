"""``RECOVERY``: the partner gives back its share of an incident's refund it is responsible for
(docs/rules/statements.md#earnings). The one function the incidents call; ``RIDE`` and
``CANCELLATION_FEE`` follow from status changes (``bookings/journal_effects.py``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting import earnings
from transfers.accounting import repository as journal_repo
from transfers.accounting.journal import PLATFORM, PartnerLine, partner, transfer
from transfers.bookings.models import Booking
from transfers.bookings.state import REFUNDING

ZERO = Decimal("0.00")


async def recover_partner_share(
    conn: AsyncConnection, booking: Booking, refund: Decimal, *, now: datetime, note: str | None = None
) -> Decimal:
    """Write the ``RECOVERY`` of ``refund`` (the client's money given back for an incident that is
    the partner's responsibility) in the caller's transaction, the one that refunds; answers the
    line's amount (negative), or 0.00 when none is due.

    ``booking``: the booking as the refund leaves it. Due on a booking that earned its ``RIDE``, or
    will earn it (not ended yet); a booking refunded in full before it was COMPLETED never earns a
    ``RIDE`` and owes nothing back. Should an earlier partial recovery be followed by the booking
    ending without its ride, the journal effect gives that recovery back."""
    if refund <= 0:
        return ZERO
    amount = earnings.recovery(refund, booking.net_total, booking.total, booking.currency)
    if amount == 0:
        return ZERO
    rode = await journal_repo.booking_kind_total(conn, booking.id, PartnerLine.RIDE.value, booking.partner_id)
    if rode is None and booking.status in REFUNDING:
        return ZERO
    entry = transfer(
        PartnerLine.RECOVERY.value,
        booking.currency,
        partner(booking.partner_id),
        PLATFORM,
        -amount,
        booking_id=booking.id,
        note=note,
    )
    await journal_repo.post(conn, entry, now)
    return amount
