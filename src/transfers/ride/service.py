"""The ride's use cases (docs/rules/ride.md): record a driver event, record positions.

One function each, usable in-process by any edge with an actor: the reverse API (``partner:<id>``),
and the hosted partner's portal buttons and driver page (their own actor). Each runs in one write
transaction with what it causes: the event's row (``ride_events``, whose ``UNIQUE (booking_id,
type)`` records two identical events sent at once only once), the booking's ride columns, the
audit row and the client's ``booking.driver_event`` (``lifecycle.update_details``: the change's
events are written by ``bookings/effects.py``), and the completion a drop-off or a no-show causes
(``lifecycle.transition``: ``booking.status_changed`` follows the driver event, one ``sequence`` later).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.lifecycle import lock_booking, retry_concurrent, transition, update_details
from transfers.bookings.models import Booking
from transfers.bookings.reverse import BookingNotFound
from transfers.bookings.ride_field import Milestone, Position, RideEventType
from transfers.bookings.state import BookingStatus
from transfers.client_events import positions_repository as position_pushes
from transfers.ride import repository as ride_repo
from transfers.ride.hooks import RIDE_HOOKS
from transfers.ride.rules import (
    BookingFacts,
    EventReport,
    PositionsReport,
    RideRefused,
    Verdict,
    check_event,
    check_positions,
    compressed,
    ends_ride,
)
from transfers.services import Services

S = BookingStatus

_ENDED_BY = {
    RideEventType.DRIVER_ARRIVED_AT_DROPOFF: "the driver arrived at the drop-off",
    RideEventType.CUSTOMER_NO_SHOW: "the customer did not show up",
}


@dataclass(frozen=True, slots=True)
class EventRecorded:
    """What recording a driver event did: ``recorded`` False for a harmless repeat; ``booking`` as it is now."""

    recorded: bool
    booking: Booking


def partner_actor(partner_id: int) -> str:
    return f"partner:{partner_id}"


async def record_event(
    svc: Services, partner_id: int, report: EventReport, *, actor: str | None = None
) -> EventRecorded:
    """Record a driver event for a booking the partner holds (docs/rules/ride.md#event-rules), and
    what it causes (docs/rules/ride.md#event-effects). Raises BookingNotFound, ``rules.RideRefused``
    or, when the booking kept changing concurrently, ``lifecycle.ConcurrentChange``."""
    by = actor or partner_actor(partner_id)

    async def attempt() -> EventRecorded:
        now = svc.clock.now()
        async with svc.db.write() as conn:
            booking = await _locked_for_partner(conn, partner_id, report.reservation_no)
            facts = await _facts(conn, booking, now)
            if check_event(facts, report, now) is Verdict.REPEAT:
                return EventRecorded(False, booking)
            milestone = Milestone(report.type, report.occurred_at.astimezone(UTC), report.lat, report.lng, now)
            if not await ride_repo.insert_event(conn, booking.id, milestone, actor=by):
                return EventRecorded(False, booking)  # recorded by a request that got there first
            ride = booking.trip.ride.with_event(milestone)
            moved = await update_details(
                conn,
                booking,
                {"ride_milestones": ride.stored_events()},
                actor=by,
                reason=f"driver event {report.type.value}",
                now=now,
            )
            if ends_ride(report.type) and moved.status is S.APPROVED:
                # docs/rules/ride.md#event-effects: nothing is refunded; the pickup + 12 h job stays the fallback.
                # docs/rules/incidents.md#customer-no-show: a no-show's incident is opened below, in this transaction.
                moved = await transition(conn, moved, S.COMPLETED, actor=by, reason=_ENDED_BY[report.type], now=now)
            if report.type is RideEventType.CUSTOMER_NO_SHOW:
                await RIDE_HOOKS.no_show(conn, moved, now)  # the incidents' (ride/hooks.py), in this transaction
            return EventRecorded(True, moved)

    return await retry_concurrent(attempt)


async def record_positions(svc: Services, partner_id: int, report: PositionsReport, *, actor: str | None = None) -> int:
    """Record a batch of positions for a booking the partner holds (docs/rules/ride.md#positions):
    every position kept, the newest shown on the booking, and pushed to the client's endpoints that
    name ``booking.driver_position`` (docs/rules/ride.md#client-events). Answers how many were
    accepted. Raises BookingNotFound or ``rules.RideRefused``."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        booking = await repo.get_for_partner(conn, partner_id, report.reservation_no)
        if booking is None:
            raise BookingNotFound()
        try:
            check_positions(_facts_now(booking), now)
        except RideRefused:
            if not await ride_repo.is_sandbox_partner(conn, partner_id):
                raise
            check_positions(await _sandbox_facts(booking, _facts_now(booking), now), now)
        await ride_repo.insert_positions(conn, booking.id, report.positions, received_at=now)
        latest = max(report.positions, key=lambda p: p.at)
        if await ride_repo.set_latest_position(conn, booking.id, latest) and await ride_repo.wants_positions(
            conn, booking.client_id
        ):
            await _push_position(conn, booking, latest, now)
    return len(report.positions)


async def _push_position(conn: AsyncConnection, booking: Booking, position: Position, now: datetime) -> None:
    """The client's ``booking.driver_position`` (``client_events/positions_repository.push``): a delivery per
    endpoint naming the type, tried once, coalesced (a newer position replaces a pending older one)
    and due at most every 15 s per booking, so a burst of positions costs the client one request per
    15 s and never waits behind retries."""
    await position_pushes.push(
        conn,
        booking_id=booking.id,
        client_id=booking.client_id,
        reservation_no=booking.reservation_no,
        position=position.stored(),
        now=now,
    )


async def _locked_for_partner(conn: AsyncConnection, partner_id: int, reservation_no: str) -> Booking:
    found = await repo.get_for_partner(conn, partner_id, reservation_no)
    booking = await lock_booking(conn, found.id) if found is not None else None
    if booking is None:
        raise BookingNotFound()
    return booking


def _facts_now(booking: Booking, completed_at: datetime | None = None) -> BookingFacts:
    trip = booking.trip
    return BookingFacts(booking.status.value, trip.pickup_at, trip.free_wait_until, completed_at, trip.ride.types)


async def _facts(conn: AsyncConnection, booking: Booking, now: datetime) -> BookingFacts:
    """The rules' facts; when the booking is COMPLETED, when it became so (late events are accepted for 24 h)."""
    completed_at = None
    if booking.status is S.COMPLETED:
        completed_at = max(
            (
                t.created_at
                for t in await repo.transitions_of(conn, booking.id)
                if t.to_status == S.COMPLETED.value != t.from_status
            ),
            default=None,
        )
    facts = _facts_now(booking, completed_at)
    if await ride_repo.is_sandbox_partner(conn, booking.partner_id):
        return await _sandbox_facts(booking, facts, now)
    return facts


async def _sandbox_facts(booking: Booking, facts: BookingFacts, now: datetime) -> BookingFacts:
    """docs/rules/sandbox.md#ride: the sandbox partner's compressed clock."""
    arrived = [m.occurred_at for m in booking.trip.ride.events if m.type is RideEventType.DRIVER_ARRIVED_AT_PICKUP]
    return compressed(
        facts, arrived_at=arrived[0] if arrived else None, now=now, free_wait_minutes=booking.trip.free_wait_minutes
    )
