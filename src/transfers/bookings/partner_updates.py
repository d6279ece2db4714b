"""What a partner's word does to a booking: create answers, reverse-API updates, info syncs.

Every function runs inside the caller's write transaction on a locked booking row and goes
through ``lifecycle.transition``. Repeats are harmless: the same status again changes nothing
(an APPROVED repeat may refresh the driver details), and a refund can only happen once.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.cancel import Actor, CancelRefused, CancelRequest, cancel_locked
from transfers.bookings.fast_paths import ACKNOWLEDGED_REASON
from transfers.bookings.lifecycle import driver_fields, transition, transition_unread, update_details
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus, can_transition
from transfers.errors import Refused
from transfers.partners.wire import WireDriver
from transfers.reference.airports import country_of
from transfers.reference.phones import PhoneUnreadable, e164

S = BookingStatus


class UpdateRefused(Refused):
    """The partner asked for something the state machine does not allow (answered 422)."""


def driver_phone(typed: str, airport_iata: str) -> str:
    """The driver's phone as a partner typed it, as E.164 (docs/rules/partners.md#driver-phone): without
    its country code it is read in the pickup airport's country, so the traveller's Call button works
    from any SIM. Raises ``PhoneUnreadable`` with the reason."""
    return e164(typed, region=country_of(airport_iata))


async def approve(
    conn: AsyncConnection,
    booking: Booking,
    driver: WireDriver,
    meeting_point: str | None,
    *,
    actor: str,
    now: datetime,
    phone_as_sent: bool = False,
) -> Booking:
    """APPROVED with the driver's details, or the details refreshed on an APPROVED booking. The phone is
    stored as E.164; one that cannot be read refuses the update with the reason (UpdateRefused), except
    with ``phone_as_sent`` (a partner server's create answer or info sync: the driver is assigned
    whatever the spelling, and there is no one to tell), where it is kept as sent."""
    current = booking.status
    fields = driver_fields(driver, meeting_point)
    try:
        fields["driver_phone"] = driver_phone(driver.phone, booking.airport_iata)
    except PhoneUnreadable as unreadable:
        if not phone_as_sent:
            raise UpdateRefused(f"driver_info.phone: {unreadable.reason}") from None
    if current is S.APPROVED:
        if any(getattr(booking, k) != v for k, v in fields.items()):
            await update_details(conn, booking, fields, actor=actor, reason="driver details updated", now=now)
        return booking
    if not can_transition(current, S.APPROVED):
        raise UpdateRefused(f"a {current.value} booking cannot be approved")
    return await transition(conn, booking, S.APPROVED, actor=actor, reason="driver assigned", now=now, fields=fields)


async def cancel(
    conn: AsyncConnection,
    booking: Booking,
    reason: str | None,
    *,
    actor: str,
    now: datetime,
    by: Actor = Actor.PARTNER,
) -> Booking:
    """The partner's cancellation (reverse API, info sync; ``by=Actor.HOSTED_PORTAL`` from the hosted
    partner's portal): the one cancel use case (``bookings/cancel.py``), refunded in full
    (docs/rules/cancellation.md); a repeat changes nothing."""
    request = CancelRequest(by, actor, reason or "cancelled by partner", note=reason)
    try:
        return (await cancel_locked(conn, booking, request, now=now)).booking
    except CancelRefused as refused:
        raise UpdateRefused(refused.message) from None


async def acknowledge(
    conn: AsyncConnection, booking: Booking, *, actor: str, now: datetime, partner_reference: str | None = None
) -> Booking:
    """The partner accepted the booking without a driver yet: PENDING -> PENDING_APPROVAL."""
    reference = {"partner_reference": partner_reference} if partner_reference else None
    if booking.status is S.PENDING:  # the reference rides on the status change's UPDATE
        return await transition(
            conn, booking, S.PENDING_APPROVAL, actor=actor, reason=ACKNOWLEDGED_REASON, now=now, fields=reference
        )
    if reference:
        await repo.update_fields(conn, booking.id, reference)
        booking = booking.moved(reference)
    return booking


async def acknowledge_pending(
    conn: AsyncConnection, booking_id: int, *, actor: str, now: datetime, partner_reference: str | None = None
) -> Booking | None:
    """``acknowledge`` for the usual case, a create answer for a booking still PENDING, without
    reading the booking first (one UPDATE ... RETURNING instead of SELECT ... FOR UPDATE + UPDATE).
    None when the booking is not PENDING (nothing written): use ``lock_booking`` + ``acknowledge``."""
    return await transition_unread(
        conn,
        booking_id,
        S.PENDING,
        S.PENDING_APPROVAL,
        actor=actor,
        reason=ACKNOWLEDGED_REASON,
        now=now,
        fields={"partner_reference": partner_reference} if partner_reference else None,
    )


async def decline(conn: AsyncConnection, booking: Booking, reason: str, *, actor: str, now: datetime) -> Booking:
    if can_transition(booking.status, S.DECLINED):
        return await transition(conn, booking, S.DECLINED, actor=actor, reason=reason, now=now)
    return booking


async def fail(conn: AsyncConnection, booking: Booking, reason: str, *, actor: str, now: datetime) -> Booking:
    if can_transition(booking.status, S.FAILED):
        return await transition(conn, booking, S.FAILED, actor=actor, reason=reason, now=now)
    return booking


async def apply_reported_status(
    conn: AsyncConnection,
    booking: Booking,
    status: str,
    driver: WireDriver | None,
    meeting_point: str | None,
    *,
    actor: str,
    now: datetime,
) -> Booking:
    """A status the partner reported in a create answer or an info sync (not the reverse API)."""
    if status == "APPROVED" and driver is not None:
        if can_transition(booking.status, S.APPROVED) or booking.status is S.APPROVED:
            return await approve(conn, booking, driver, meeting_point, actor=actor, now=now, phone_as_sent=True)
        return booking
    if status in ("PENDING", "PENDING_APPROVAL", "APPROVED"):
        return await acknowledge(conn, booking, actor=actor, now=now)
    if status == "CANCELLED" and can_transition(booking.status, S.CANCELLED):
        return await cancel(conn, booking, "cancelled by partner (sync)", actor=actor, now=now)
    if status == "DECLINED":
        return await decline(conn, booking, "declined by partner", actor=actor, now=now)
    return booking


async def complete(conn: AsyncConnection, booking: Booking, *, actor: str, now: datetime) -> Booking:
    return await transition(conn, booking, S.COMPLETED, actor=actor, reason="pickup + 12 h passed", now=now)
