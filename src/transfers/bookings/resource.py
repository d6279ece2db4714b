"""The BookingResource of SPEC.md 2.6 (plus DECISIONS 5's driver, meeting_point, created_at and
DECISIONS 14's cancellation_policy, cancellation and amendment)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transfers.bookings.state import DRIVER_VISIBLE, BookingStatus, is_cancelable
from transfers.cancellation.views import amendment_view, cancellation_view, policy_view, stored_policy
from transfers.search.airports import local_time

# The stored fields the resource is built from: GET booking reads only these (decoding the other
# columns of a booking row was measurable on that path).
RESOURCE_FIELDS = (
    "reservation_no", "status", "pickup_location", "dropoff_location", "pickup_at", "airport_iata",
    "flight_number", "adult", "children", "infant", "passenger_name", "passenger_surname", "passenger_email",
    "passenger_phone", "vehicle_make", "vehicle_model", "vehicle_type", "total", "currency", "distance_km",
    "booking_type", "extras", "driver_name", "driver_phone", "driver_plate", "meeting_point", "created_at",
    # DECISIONS 14
    "cancellation_policy", "cancellation_fee", "cancellation_refund", "cancelled_at", "cancelled_by", "amendment",
)


def booking_resource(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    status = BookingStatus(row["status"])
    pickup_at: datetime = row["pickup_at"]
    local_pickup = local_time(row["airport_iata"], pickup_at)
    driver = None
    if status in DRIVER_VISIBLE and row["driver_name"]:
        driver = {"name": row["driver_name"], "phone": row["driver_phone"], "plate": row["driver_plate"]}
    return {
        "reservation_no": row["reservation_no"],
        "status": status.value,
        "pickup_location": _location(row["pickup_location"]),
        "dropoff_location": _location(row["dropoff_location"]),
        "pickup_datetime": local_pickup.isoformat(),
        "flight_number": row["flight_number"],
        "passengers": {"adult": row["adult"], "children": row["children"], "infant": row["infant"]},
        "passenger": {
            "name": row["passenger_name"], "surname": row["passenger_surname"],
            "email": row["passenger_email"], "phone": row["passenger_phone"],
        },
        "vehicle": {"make": row["vehicle_make"], "model": row["vehicle_model"], "type": row["vehicle_type"]},
        "price": {"total": f"{row['total']:.2f}", "currency": row["currency"]},
        "distance_km": row["distance_km"] if row["distance_km"] is not None else 0,
        "booking_type": row["booking_type"],
        "is_cancelable": is_cancelable(status, pickup_at, now),
        "extra_services": [extra["label"] for extra in row["extras"]],
        "driver": driver,
        "meeting_point": row["meeting_point"] if status in DRIVER_VISIBLE else None,
        "created_at": row["created_at"].isoformat(),
        # DECISIONS 14: the policy it was sold with, what its cancellation cost, its latest amendment
        "cancellation_policy": policy_view(stored_policy(row["cancellation_policy"]), pickup_at=pickup_at, now=now,
                                           iata=row["airport_iata"]),
        "cancellation": cancellation_view(row),
        "amendment": amendment_view(row),
    }


def _location(stored: dict[str, Any]) -> dict[str, Any]:
    return {"name": stored.get("name"), "type": stored["type"]}
