"""The BookingResource of docs/rules/booking.md#booking-resource (plus docs/rules/booking.md's driver, meeting_point,
created_at,
docs/rules/cancellation.md's cancellation_policy, cancellation and amendment, and docs/rules/flights.md#booking-fields'
original_pickup_datetime, free_wait_until and flight)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transfers import money
from transfers.bookings import ride_field
from transfers.bookings.models import VIEW_FIELDS, Booking, BookingView
from transfers.bookings.rating_link import rating_url
from transfers.bookings.state import DRIVER_VISIBLE, BookingStatus, is_cancelable
from transfers.bookings.tracking_link import tracking_url
from transfers.bookings.trip import Place, Trip
from transfers.cancellation.views import amendment_view, cancellation_view, policy_view, stored_policy
from transfers.reference.airports import local_time
from transfers.reference.flights import FlightStatus, is_trackable

# The stored fields the resource is built from (``BookingView``'s): GET booking reads only these.
RESOURCE_FIELDS = VIEW_FIELDS


def booking_resource(b: Booking | BookingView, now: datetime) -> dict[str, Any]:
    """The resource of a booking row (or of its view: the resource reads nothing else), its trip's
    part from ``Booking.trip``."""
    status = b.status
    trip = b.trip
    visible = status in DRIVER_VISIBLE
    pickup_datetime = trip.local_pickup.isoformat()
    # docs/rules/flights.md#booking-fields: until the watch moves the pickup, the original is the same instant
    original_pickup_datetime = (
        pickup_datetime
        if trip.original_pickup_at == trip.pickup_at
        else local_time(b.airport_iata, trip.original_pickup_at).isoformat()
    )
    return {
        "reservation_no": b.reservation_no,
        "status": status.value,
        "pickup_location": _location(trip.route.pickup),
        "dropoff_location": _location(trip.route.dropoff),
        "pickup_datetime": pickup_datetime,
        # docs/rules/return-trips.md#create: a way back booked without a flight has none (stored empty)
        "flight_number": trip.flight.number or None,
        "passengers": trip.party.passengers(),
        "passenger": trip.passenger.contact(),
        "vehicle": trip.vehicle.public(),
        "price": {"total": money.text(b.total, b.currency), "currency": b.currency, "fx": b.fx},
        "distance_km": trip.route.distance_km if trip.route.distance_km is not None else 0,
        "booking_type": trip.booking_type,
        "is_cancelable": is_cancelable(status, b.pickup_at, now),
        "extra_services": [extra["label"] for extra in b.extras],
        "driver": trip.driver.public() if visible and trip.driver is not None else None,
        "meeting_point": trip.meeting_point if visible else None,
        "created_at": b.created_at.isoformat(),
        # docs/rules/cancellation.md: the policy it was sold with, what its cancellation cost, its latest amendment
        "cancellation_policy": policy_view(
            stored_policy(b.cancellation_policy), pickup_at=b.pickup_at, now=now, iata=b.airport_iata
        ),
        "cancellation": cancellation_view(b),
        "amendment": amendment_view(b),
        # docs/rules/flights.md#booking-fields
        "original_pickup_datetime": original_pickup_datetime,
        "free_wait_until": local_time(b.airport_iata, trip.free_wait_until).isoformat(),
        "flight": flight_view(trip),
        # docs/rules/ride.md#ride-field, docs/rules/ride.md#tracking-page, docs/rules/ratings.md#rating-page: the
        # ride, the traveller's page and, from the drop-off, the rating page (the client's resource only)
        "ride": ride_field.view(
            trip.ride,
            approved=status is BookingStatus.APPROVED,
            tracking_url=tracking_url(b.tracking_token),
            rating_url=rating_url(b.reservation_no, trip.ride),
        ),
        # docs/rules/return-trips.md#legs: the return trip this booking is a leg of, or null
        "trip": trip.leg.public() if trip.leg is not None else None,
    }


FLIGHT_TIMES = ("scheduled_arrival", "estimated_arrival", "actual_arrival", "checked_at")


def flight_view(trip: Trip) -> dict[str, Any] | None:
    """``flight`` (docs/rules/flights.md#booking-fields): null when the pickup is not an airport; before any
    check, the number and ``SCHEDULED`` (or ``UNTRACKED``, never checked); the times in the airport's zone."""
    if trip.route.pickup.type != "AIRPORT":
        return None
    number = trip.flight.number
    state = trip.flight.state
    unchecked = FlightStatus.SCHEDULED.value if is_trackable(number) else FlightStatus.UNTRACKED.value
    if not state:  # never checked (most bookings): no times to convert (GET booking's hot path)
        return {"number": number, "status": unchecked, **_NO_FLIGHT_TIMES}
    status = state.get("status") or unchecked
    iata = trip.route.airport_iata
    times = {
        key: local_time(iata, datetime.fromisoformat(raw)).isoformat() if (raw := state.get(key)) else None
        for key in FLIGHT_TIMES
    }
    # the wire order: number, status, the three arrivals, delay_minutes, terminal, checked_at
    return {
        "number": number,
        "status": status,
        "scheduled_arrival": times["scheduled_arrival"],
        "estimated_arrival": times["estimated_arrival"],
        "actual_arrival": times["actual_arrival"],
        "delay_minutes": state.get("delay_minutes"),
        "terminal": state.get("terminal"),
        "checked_at": times["checked_at"],
    }


# ``flight`` after its number and status when the flight was never checked, in the wire order.
_NO_FLIGHT_TIMES: dict[str, None] = {
    "scheduled_arrival": None,
    "estimated_arrival": None,
    "actual_arrival": None,
    "delay_minutes": None,
    "terminal": None,
    "checked_at": None,
}


def _location(place: Place) -> dict[str, Any]:
    return {"name": place.name, "type": place.type}
