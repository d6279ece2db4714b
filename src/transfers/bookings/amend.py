"""Amendments (docs/rules/cancellation.md): the client asks, the partner confirms, the booking changes.

``request_amendment`` (``PATCH /booking``) validates the changes, and in one write transaction,
on the booking's locked row, checks that the booking may be amended now (PENDING_APPROVAL or
APPROVED, pickup ahead, cancelling still free: else ``AMENDMENT_NOT_ALLOWED``; one at a time: else
``AMENDMENT_IN_PROGRESS``), records the amendment as PENDING and writes the partner's
``PUT /booking/update`` ``"status": "AMENDED"`` (the changes and the whole new trip) to the outbox.
Nothing about the trip changes yet.

``settle`` is the outbox's effect of that message (``bookings/partner_answers.py``): the partner's
Success applies the changes (``APPLIED``); an ``Error`` body, another 4xx, or no delivery before
the message's deadline rejects them (``REJECTED``, with the partner's message); the booking is
then as it was. A cancellation while it is pending rejects it (``cancel_rules.cancellation_fields``)
and withdraws the message if it has not gone out yet (``withdraw``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import hosted_capacity, partner_payloads
from transfers.bookings.amend_rules import (
    AmendmentStatus,
    Changes,
    columns_of,
    decided,
    is_pending,
    parse_changes,
    requested,
)
from transfers.bookings.cancel_rules import quote
from transfers.bookings.client_queries import client_booking
from transfers.bookings.hooks import HOOKS
from transfers.bookings.lifecycle import lock_booking, update_details
from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus
from transfers.clients.models import ClientPrincipal, Permission
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import delivery_deadline
from transfers.errors import Code, Conflict, ErrorCode, NotFound, Refused
from transfers.partners.calls import MessageKind
from transfers.partners.wire import WireResult
from transfers.search.service import limits
from transfers.services import Services

AMENDABLE_STATUSES = frozenset({BookingStatus.PENDING_APPROVAL, BookingStatus.APPROVED})
EXPIRED_MESSAGE = "the partner could not be reached before the amendment's delivery deadline"


async def request_amendment(
    svc: Services, client: ClientPrincipal, reservation_no: str | None, body: dict[str, Any]
) -> Booking:
    """``PATCH /booking?reservation_no=``: 1100 (the ``booking.create`` permission: amending is
    booking), 1400/1401 for the reservation as on GET, the fields' SPEC codes, then the state checks
    under the row lock. Returns the booking with its pending amendment (the route answers it, HTTP 202)."""
    if not client.may(Permission.BOOKING_CREATE):
        raise Refused(Code.CREATION_PERMISSION_DENIED)
    found = await client_booking(
        svc,
        client,
        reservation_no,
        required=Code.BOOKING_INFO_RESERVATION_REQUIRED,
        not_found=Code.BOOKING_INFO_RESERVATION_NOT_FOUND,
    )
    search_limits = limits(svc)
    parse_changes(body, found, svc.clock.now(), search_limits)  # bad input: its code, nothing written
    settings = svc.settings
    async with svc.db.write() as conn:
        booking = await lock_booking(conn, found.id)
        if booking is None:
            raise NotFound(Code.BOOKING_INFO_RESERVATION_NOT_FOUND)
        now = svc.clock.now()
        check_amendable(booking, now)
        changes = parse_changes(body, booking, now, search_limits)  # against the row as locked
        await check_rate_card(conn, booking, changes.columns.get("pickup_at"), now)
        after = booking.moved(changes.columns)
        deadline = delivery_deadline(
            now,
            min(booking.pickup_at, after.pickup_at),
            hours_after_creation=settings.delivery_deadline_hours,
            hours_before_pickup=settings.delivery_deadline_before_pickup_hours,
        )
        message = outbox_repo.new_message(
            partner_id=booking.partner_id,
            kind=MessageKind.AMEND.value,
            payload=amended_payload(after, changes),
            now=now,
            deadline=max(deadline, now),
            not_before=None,
            lease_until=None,
        )
        amendment = {**requested(changes, now), "message_id": message.webhook_id}
        moved = await update_details(
            conn,
            booking,
            {"amendment": amendment},
            actor=f"client:{client.client_id}",
            reason=f"amendment requested: {_fields(changes)}",
            now=now,
            messages=(message,),
        )
    return moved


def check_amendable(booking: Booking, now: datetime) -> None:
    status = booking.status
    if status not in AMENDABLE_STATUSES or booking.pickup_at <= now:
        raise Refused(
            ErrorCode.AMENDMENT_NOT_ALLOWED,
            f"A {status.value} booking cannot be amended: only PENDING_APPROVAL and APPROVED "
            "bookings whose pickup is ahead.",
        )
    if quote(booking, now).fee > 0:
        raise Refused(
            ErrorCode.AMENDMENT_NOT_ALLOWED,
            "The free cancellation window of this booking has passed, and with it the time for "
            "amendments; cancel (a fee applies) and book again, or ask the partner.",
        )
    if is_pending(booking):
        raise Conflict(ErrorCode.AMENDMENT_IN_PROGRESS)


async def check_rate_card(
    conn: AsyncConnection, booking: Booking, new_pickup_at: datetime | None, now: datetime
) -> None:
    """docs/rules/hosted-partners.md#amendments: a hosted partner's booking moves only to a pickup its rate
    card would sell at the booking's price (``hosted_capacity.amendment_refusal``); else 422
    ``AMENDMENT_NOT_ALLOWED`` with the card's reason. Nothing for other changes or a server partner."""
    if new_pickup_at is None:
        return
    why = await hosted_capacity.amendment_refusal(conn, booking, new_pickup_at, now)
    if why is not None:
        raise Refused(
            ErrorCode.AMENDMENT_NOT_ALLOWED,
            f"This partner's rate card does not sell the new pickup: {why}. The booking and its price stay "
            "as they are; choose another time, or cancel and book again.",
        )


def _fields(changes: Changes) -> str:
    names = [
        f"{section}.{field}" if isinstance(value, dict) else section
        for section, value in changes.public.items()
        for field in (value if isinstance(value, dict) else [None])
    ]
    return ", ".join(names)


def amended_payload(booking: Booking, changes: Changes) -> dict[str, Any]:
    """``PUT /booking/update`` with ``"status": "AMENDED"`` (docs/partners/index.md): the changes, and the
    whole trip as it will be, shaped like the create's (``partner_payloads``)."""
    trip = booking.trip
    return {
        "reservation_no": booking.reservation_no,
        "status": "AMENDED",
        "changes": changes.public,
        "vehicle_id": trip.vehicle.partner_vehicle_id,
        "passenger_info": trip.passenger.contact(),
        "flight_info": partner_payloads.flight_info(trip),
        "trip": partner_payloads.trip_payload(trip),
        "extras": partner_payloads.extras_payload(booking),
    }


async def settle(
    conn: AsyncConnection,
    message: OutboxMessage,
    *,
    accepted: bool,
    partner_message: str | None,
    actor: str,
    now: datetime,
) -> Booking | None:
    """The partner's verdict on an amendment message: applied, or rejected with its message. None
    when nothing changed: the booking's amendment is not this message's any more (rejected by a
    cancellation meanwhile), or the booking is gone."""
    booking = await lock_booking(conn, message.booking)
    amendment = booking.amendment if booking is not None else None
    if (
        booking is None
        or amendment is None
        or not is_pending(booking)
        or amendment.get("message_id") != message.webhook_id
    ):
        return None
    new_pickup_at = columns_of(amendment["changes"]).get("pickup_at")
    if accepted and new_pickup_at is not None:
        # checked again as it is applied: the card, the day's seats or the clock may have moved since the request
        why = await hosted_capacity.amendment_refusal(conn, booking, new_pickup_at, now, lock=True)
        if why is not None:
            accepted, partner_message = False, f"the partner's rate card no longer sells the new pickup: {why}"
    if accepted:
        fields = {
            **columns_of(amendment["changes"]),
            "amendment": decided(amendment, AmendmentStatus.APPLIED, partner_message or None, now),
        }
        # what the features change with it, in this transaction (the flight's watch restarts: flights/enrolment.py)
        fields.update(await HOOKS.amended(conn, booking, fields, now))
        return await update_details(conn, booking, fields, actor=actor, reason="amendment applied", now=now)
    reason = partner_message or "refused by the partner"
    return await update_details(
        conn,
        booking,
        {"amendment": decided(amendment, AmendmentStatus.REJECTED, reason, now)},
        actor=actor,
        reason=f"amendment rejected: {reason}",
        now=now,
    )


def accepted(answer: Any) -> bool:
    return isinstance(answer, WireResult) and answer.status == "Success"


async def withdraw(conn: AsyncConnection, booking: Booking, now: datetime) -> None:
    """A cancellation overtakes a pending amendment: its message, if not sent yet, is never sent."""
    if is_pending(booking):
        await outbox_repo.withdraw_pending(
            conn,
            booking.id,
            MessageKind.AMEND.value,
            now=now,
            reason="withdrawn: the booking was cancelled before it was delivered",
        )
