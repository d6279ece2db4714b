"""Bookings moved through the real domain code without HTTP, for the journal's tests: each helper
is one write transaction of the status writer every path uses (``lifecycle``/``cancel``), so the
journal entries they leave are the ones production writes."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.helpers import booking_row
from transfers.bookings import fast_paths, lifecycle
from transfers.bookings.cancel import Actor, CancelRequest, cancel_locked
from transfers.bookings.models import Booking
from transfers.bookings.reservation import new_reservation_no
from transfers.bookings.state import BookingStatus
from transfers.clock import Clock
from transfers.db.engine import Database
from transfers.delivery import repository as outbox_repo
from transfers.incidents import service as incidents
from transfers.incidents.models import Incident
from transfers.incidents.rules import IncidentType, Reporter
from transfers.partners.calls import MessageKind

S = BookingStatus
FEE_20 = [{"hours_before_pickup": 0, "fee_percent": 20}]


def values(
    client_id: int,
    partner_id: int,
    now: datetime,
    *,
    total: str,
    net: str,
    pay_type: str = "wallet",
    policy: Any = None,
    currency: str = "EUR",
) -> dict[str, Any]:
    row = booking_row(
        client_id=client_id,
        partner_id=partner_id,
        search_vehicle_id=None,
        reservation_no=new_reservation_no(),
        status="PENDING",
        pay_type=pay_type,
        pickup_at=now + timedelta(days=3),
        total=Decimal(total),
        net_total=Decimal(net),
        currency=currency,
        created_at=now,
        updated_at=now,
        event_sequence=1,
        cancellation_policy=policy,
        tracking_token=secrets.token_urlsafe(16),  # docs/rules/ride.md#tracking-page: one per booking
    )
    unset = {
        "id",
        "partner_reference",
        "driver_name",
        "driver_phone",
        "driver_plate",
        "meeting_point",
        "cancellation_reason_id",
        "cancel_note",
        "synced_at",
        "cancel_idempotency_key",
        "cancellation_fee",
        "cancellation_refund",
        "cancelled_at",
        "cancelled_by",
        "amendment",
    }
    return {k: v for k, v in row.items() if k not in unset}


async def book(db: Database, row: dict[str, Any], now: datetime, *, general: bool = False) -> int:
    """Create the booking as ``bookings.service`` does (the fast statement on PostgreSQL unless ``general``)."""
    message = outbox_repo.new_message(
        partner_id=row["partner_id"],
        kind=MessageKind.CREATE.value,
        payload={"reservation_no": row["reservation_no"]},
        now=now,
        deadline=now + timedelta(hours=24),
        not_before=now + timedelta(seconds=3),
        lease_until=now + timedelta(seconds=60),
    )

    async def nothing(conn: Any) -> None:
        """Forces the general path."""

    booking_id, stored = await fast_paths.store_created(
        db, row, actor="tests", message=message, before=nothing if general else None
    )
    # No partner server hears of it: the message is finished, so no worker of another test tries it.
    async with db.write() as conn:
        await outbox_repo.finish(conn, stored, status=outbox_repo.DELIVERED, now=now)
    return booking_id


async def move(db: Database, booking_id: int, target: BookingStatus, now: datetime) -> Booking:
    async with db.write() as conn:
        booking = await lifecycle.lock_booking(conn, booking_id)
        assert booking is not None
        return await lifecycle.transition(conn, booking, target, actor="tests", reason="tests", now=now)


async def complete(db: Database, booking_id: int, now: datetime) -> Booking:
    """PENDING -> PENDING_APPROVAL -> APPROVED -> COMPLETED, as far as it still has to go."""
    async with db.read() as conn:
        booking = await lifecycle.lock_booking(conn, booking_id)
    assert booking is not None
    path = [S.PENDING_APPROVAL, S.APPROVED, S.COMPLETED]
    for target in path[path.index(booking.status) + 1 if booking.status in path else 0 :]:
        booking = await move(db, booking_id, target, now)
    return booking


async def cancel(db: Database, booking_id: int, now: datetime, actor: Actor = Actor.CLIENT) -> Booking:
    async with db.write() as conn:
        booking = await lifecycle.lock_booking(conn, booking_id)
        assert booking is not None
        done = await cancel_locked(
            conn, booking, CancelRequest(actor, who=f"{actor.value}:tests", reason="tests"), now=now
        )
        return done.booking


async def incident(
    db: Database, clock: Clock, booking_id: int, kind: IncidentType, *, responsible: str, refund: str
) -> Incident:
    """An incident opened on the booking (as a report does, the window not checked: the model's
    clock is its own) and resolved by an operator through ``incidents.service.resolve``, the use
    case of the console and the CLI."""
    async with db.write() as conn:
        booking = await lifecycle.lock_booking(conn, booking_id)
        assert booking is not None
        opened = await incidents._open(conn, booking, kind, Reporter.CLIENT, "model", clock.now())
    return await incidents.resolve(
        db, clock, opened.public_id, responsible=responsible, refund=refund, note="model", actor="op:model"
    )
