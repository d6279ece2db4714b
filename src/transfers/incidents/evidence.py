"""The ride's evidence an incident is decided on (docs/rules/incidents.md#driver-no-show, #resolve): whether
the driver's arrival at the pickup is on record, and what an operator sees before resolving: the
driver events, the positions around the pickup time with their distance from the pickup point, and
the flight. Read from the ride's own repository (``transfers.ride``), never written here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.bookings.resource import flight_view
from transfers.bookings.ride_field import Position, RideEventType
from transfers.bookings.trip import Place
from transfers.incidents.rules import COVERAGE_WINDOW
from transfers.reference.airports import find_airport, great_circle_km
from transfers.ride import repository as ride_repo
from transfers.ride.repository import RecordedEvent

# The positions an operator weighs: from an hour before the pickup time until two hours after it
# (a driver who says he waited shows up near the pickup point in that span, or not at all).
AROUND_BEFORE = timedelta(hours=1)
AROUND_AFTER = timedelta(hours=2)
MAX_POSITIONS = 200


@dataclass(frozen=True, slots=True)
class NearPickup:
    """A position and how far it was from the pickup point (None: the point has no coordinates)."""

    position: Position
    km_from_pickup: float | None


@dataclass(frozen=True, slots=True)
class Evidence:
    events: list[RecordedEvent]
    positions: list[NearPickup]
    pickup_at: datetime
    flight: dict[str, Any] | None  # the BookingResource's ``flight`` (docs/rules/flights.md#booking-fields)

    @property
    def arrived_at_pickup(self) -> bool:
        return any(e.milestone.type is RideEventType.DRIVER_ARRIVED_AT_PICKUP for e in self.events)


async def recorded_types(conn: AsyncConnection, booking_id: int) -> frozenset[RideEventType]:
    """The driver event types recorded for the booking (whenever sent: a late event is evidence too)."""
    return frozenset(e.milestone.type for e in await ride_repo.events_of(conn, booking_id))


async def partner_coverage(conn: AsyncConnection, partner_id: int, now: datetime) -> ride_repo.Coverage:
    """The partner's driver-event coverage over the rules' window, as the console shows it
    (docs/rules/incidents.md#driver-no-show)."""
    return await ride_repo.coverage(conn, partner_id, since=now - COVERAGE_WINDOW, until=now)


def pickup_point(place: Place) -> tuple[float, float] | None:
    """A route end's coordinates: a point's own, an airport's from the reference data."""
    if place.lat is not None and place.lng is not None:
        return float(place.lat), float(place.lng)
    airport = find_airport(place.iata_code) if place.iata_code else None
    return None if airport is None else (airport.lat, airport.lng)


async def of_booking(conn: AsyncConnection, booking: Booking) -> Evidence:
    trip = booking.trip
    point = pickup_point(trip.route.pickup)
    start, end = booking.pickup_at - AROUND_BEFORE, booking.pickup_at + AROUND_AFTER
    near = [
        NearPickup(p, None if point is None else round(great_circle_km(p.lat, p.lng, *point), 2))
        for p in await ride_repo.positions_of(conn, booking.id, limit=5000)
        if start <= p.at <= end
    ][:MAX_POSITIONS]
    return Evidence(
        events=await ride_repo.events_of(conn, booking.id),
        positions=near,
        pickup_at=booking.pickup_at,
        flight=flight_view(trip),
    )
