"""The BookingResource of docs/rules/booking.md#booking-resource (plus docs/rules/booking.md's driver, meeting_point,
created_at and
docs/rules/cancellation.md's cancellation_policy, cancellation and amendment)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transfers.bookings.models import VIEW_FIELDS, Booking, BookingView
from transfers.bookings.state import DRIVER_VISIBLE, is_cancelable
from transfers.cancellation.views import amendment_view, cancellation_view, policy_view, stored_policy
from transfers.search.airports import local_time

# The stored fields the resource is built from (``BookingView``'s): GET booking reads only these.
RESOURCE_FIELDS = VIEW_FIELDS


def booking_resource(b: Booking | BookingView, now: datetime) -> dict[str, Any]:
    """The resource of a booking row (or of its view: the resource reads nothing else)."""
    status = b.status
    local_pickup = local_time(b.airport_iata, b.pickup_at)
    driver = None
    if status in DRIVER_VISIBLE and b.driver_name:
        driver = {"name": b.driver_name, "phone": b.driver_phone, "plate": b.driver_plate}
    return {
        "reservation_no": b.reservation_no,
        "status": status.value,
        "pickup_location": _location(b.pickup_location),
        "dropoff_location": _location(b.dropoff_location),
        "pickup_datetime": local_pickup.isoformat(),
        "flight_number": b.flight_number,
        "passengers": {"adult": b.adult, "children": b.children, "infant": b.infant},
        "passenger": {
            "name": b.passenger_name,
            "surname": b.passenger_surname,
            "email": b.passenger_email,
            "phone": b.passenger_phone,
        },
        "vehicle": {"make": b.vehicle_make, "model": b.vehicle_model, "type": b.vehicle_type},
        "price": {"total": f"{b.total:.2f}", "currency": b.currency},
        "distance_km": b.distance_km if b.distance_km is not None else 0,
        "booking_type": b.booking_type,
        "is_cancelable": is_cancelable(status, b.pickup_at, now),
        "extra_services": [extra["label"] for extra in b.extras],
        "driver": driver,
        "meeting_point": b.meeting_point if status in DRIVER_VISIBLE else None,
        "created_at": b.created_at.isoformat(),
        # docs/rules/cancellation.md: the policy it was sold with, what its cancellation cost, its latest amendment
        "cancellation_policy": policy_view(
            stored_policy(b.cancellation_policy), pickup_at=b.pickup_at, now=now, iata=b.airport_iata
        ),
        "cancellation": cancellation_view(b),
        "amendment": amendment_view(b),
    }


def _location(stored: dict[str, Any]) -> dict[str, Any]:
    return {"name": stored.get("name"), "type": stored["type"]}
