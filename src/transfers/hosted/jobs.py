"""The hosted partners' scheduled job (docs/rules/hosted-partners.md): a booking nobody accepted in time is declined.

A hosted partner's new booking waits in the portal's ``New`` list. Still not accepted
``TRANSFERS_HOSTED_ACCEPT_HOURS`` (4) after its creation, or ``2 h`` before pickup, it is DECLINED
and the client refunded (``partner_updates.decline`` through ``lifecycle``: the refund and the seat
given back commit with the status change), so a client never waits for a ride nobody will drive.
"""

from __future__ import annotations

from datetime import timedelta

from transfers.bookings import partner_updates
from transfers.bookings.lifecycle import ConcurrentChange
from transfers.bookings.state import BookingStatus
from transfers.hosted import repository as repo
from transfers.services import Services

ACTOR = "system:jobs"
BATCH = 100
WAITING = [BookingStatus.PENDING.value, BookingStatus.PENDING_APPROVAL.value]


async def auto_decline(svc: Services) -> int:
    now = svc.clock.now()
    settings = svc.settings
    created_before = now - timedelta(hours=settings.hosted_accept_hours)
    pickup_before = now + timedelta(hours=settings.hosted_accept_before_pickup_hours)
    declined = 0
    async with svc.db.write() as conn:
        for booking in await repo.lock_unaccepted(
            conn, WAITING, created_before=created_before, pickup_before=pickup_before, limit=BATCH
        ):
            reason = (
                f"not accepted within {settings.hosted_accept_hours:g} h"
                if booking.created_at <= created_before
                else f"not accepted by {settings.hosted_accept_before_pickup_hours:g} h before pickup"
            )
            try:
                async with conn.begin_nested():
                    await partner_updates.decline(conn, booking, reason, actor=ACTOR, now=now)
                declined += 1
            except ConcurrentChange:
                continue
    return declined
