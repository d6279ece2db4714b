"""Amendment rules (docs/rules/cancellation.md). Pure: the request body and the booking row in, changes out.

What may change: ``pickup_datetime``, ``passenger.{name,surname,email,phone}`` and
``travel_details.{flight_number,extra_requests}``, as partial objects (a field not sent stays as it
is), validated with the SPEC codes of those fields (the pickup time with 1316/1317 and 1317's
window, local to the airport when it has no offset). Route, party, vehicle, luggage and extras are
not amendable (``FIELD_NOT_AMENDABLE``, naming the field): the price never changes.

Checks, in order: the body's keys (an unamendable or unknown field first, since nothing about the
request can be trusted then), then ``pickup_datetime``, then ``passenger`` (1005-1011 in the 7.2
table's order), then ``travel_details`` (1012-1013). Values equal to the booking's are dropped; an
amendment that changes nothing is refused (``AMENDMENT_EMPTY``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from transfers.bookings.models import Booking
from transfers.bookings.rules import (
    MAX_FLIGHT,
    email_address,
    phone_number,
    requests_text,
    required_text,
    stored_flight_number,
)
from transfers.errors import Code, ErrorCode, Invalid
from transfers.reference.airports import find_airport, local_time
from transfers.search.rules import SearchLimits, pickup_instant

AMENDABLE = ("pickup_datetime", "passenger", "travel_details")
PASSENGER = {
    "name": "passenger_name",
    "surname": "passenger_surname",
    "email": "passenger_email",
    "phone": "passenger_phone",
}
TRAVEL = {"flight_number": "flight_number", "extra_requests": "extra_requests"}
NOT_AMENDABLE = (
    "search_id",
    "vehicle_id",
    "pickup_location",
    "dropoff_location",
    "travelers",
    "passengers",
    "suitcase",
    "small_bags",
    "extra_services",
    "price",
    "vehicle",
    "booking_type",
)
WHAT_MAY_CHANGE = (
    "pickup_datetime, passenger.{name, surname, email, phone}, travel_details.{flight_number, extra_requests}"
)


class AmendmentStatus(StrEnum):
    PENDING = "PENDING"
    APPLIED = "APPLIED"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class Changes:
    """The fields that change: ``public`` as the BookingResource and the partner show them,
    ``columns`` as the booking row stores them."""

    public: dict[str, Any]
    columns: dict[str, Any]


def _not_amendable(field: str) -> Invalid:
    if field in NOT_AMENDABLE or field.split(".")[0] in NOT_AMENDABLE:
        return Invalid(
            ErrorCode.FIELD_NOT_AMENDABLE,
            f"'{field}' cannot be amended: route, party, vehicle, luggage and extras stay as "
            f"booked and the price never changes (cancel and book again). "
            f"Amendable: {WHAT_MAY_CHANGE}.",
        )
    return Invalid(
        ErrorCode.FIELD_NOT_AMENDABLE, f"'{field[:100]}' is not an amendable field. Amendable: {WHAT_MAY_CHANGE}."
    )


def parse_changes(body: Mapping[str, Any], booking: Booking, now: datetime, limits: SearchLimits) -> Changes:
    """The changes ``body`` asks of ``booking`` (see the module docstring for the order of checks)."""
    for key in body:
        if key not in AMENDABLE:
            raise _not_amendable(key)
    for key, fields in (("passenger", PASSENGER), ("travel_details", TRAVEL)):
        part = body.get(key)
        if isinstance(part, dict):
            for sub in part:
                if sub not in fields:
                    raise _not_amendable(f"{key}.{sub}")
    public: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    if "pickup_datetime" in body:
        airport = find_airport(booking.airport_iata)
        pickup_at = pickup_instant(body["pickup_datetime"], airport, now, limits)
        if pickup_at != booking.pickup_at:
            columns["pickup_at"] = pickup_at
            public["pickup_datetime"] = local_time(booking.airport_iata, pickup_at).isoformat()
    if "passenger" in body:
        passenger = body["passenger"]
        if not isinstance(passenger, dict):
            raise Invalid(Code.PASSENGER_REQUIRED)
        given = {
            "name": lambda v: required_text(v, Code.PASSENGER_NAME_REQUIRED),
            "surname": lambda v: required_text(v, Code.PASSENGER_SURNAME_REQUIRED),
            "phone": phone_number,
            "email": email_address,
        }
        for field in ("name", "surname", "phone", "email"):  # the 7.2 table's order
            if field in passenger:
                _change(
                    public.setdefault("passenger", {}),
                    columns,
                    field,
                    PASSENGER[field],
                    given[field](passenger[field]),
                    booking,
                )
        if not public.get("passenger"):
            public.pop("passenger", None)
    if "travel_details" in body:
        travel = body["travel_details"]
        if not isinstance(travel, dict):
            raise Invalid(Code.TRAVEL_DETAILS_REQUIRED)
        section = public.setdefault("travel_details", {})
        if "extra_requests" in travel:  # a travel_details failure: ahead of 1013 in the table
            _change(
                section, columns, "extra_requests", "extra_requests", requests_text(travel["extra_requests"]), booking
            )
        if "flight_number" in travel:
            _change(
                section,
                columns,
                "flight_number",
                "flight_number",
                stored_flight_number(required_text(travel["flight_number"], Code.FLIGHT_NUMBER_REQUIRED, MAX_FLIGHT)),
                booking,
            )
        if not section:
            public.pop("travel_details")
    if not columns:
        raise Invalid(
            ErrorCode.AMENDMENT_EMPTY, "The amendment changes nothing: every field sent already has that value."
        )
    return Changes(public, columns)


def _change(
    section: dict[str, Any], columns: dict[str, Any], field: str, column: str, value: Any, booking: Booking
) -> None:
    if value != getattr(booking, column):
        section[field] = value
        columns[column] = value


def columns_of(public: Mapping[str, Any]) -> dict[str, Any]:
    """The booking columns of stored (public) changes, to apply them once the partner agreed."""
    columns: dict[str, Any] = {}
    if "pickup_datetime" in public:
        columns["pickup_at"] = datetime.fromisoformat(public["pickup_datetime"])
    for section, names in (("passenger", PASSENGER), ("travel_details", TRAVEL)):
        for field, value in public.get(section, {}).items():
            columns[names[field]] = value
    return columns


def requested(changes: Changes, now: datetime) -> dict[str, Any]:
    """The booking's ``amendment`` while the partner has not answered."""
    return {
        "status": AmendmentStatus.PENDING.value,
        "changes": changes.public,
        "message": None,
        "requested_at": now.isoformat(),
        "decided_at": None,
    }


def decided(
    amendment: Mapping[str, Any], status: AmendmentStatus, message: str | None, now: datetime
) -> dict[str, Any]:
    return {**amendment, "status": status.value, "message": message, "decided_at": now.isoformat()}


def is_pending(booking: Booking) -> bool:
    amendment = booking.amendment
    return amendment is not None and amendment.get("status") == AmendmentStatus.PENDING.value


def rejected_by_cancel(booking: Booking, now: datetime) -> dict[str, Any]:
    """The ``amendment`` column of a booking being cancelled: a pending amendment is rejected with it."""
    if booking.amendment is None or not is_pending(booking):
        return {}
    return {
        "amendment": decided(
            booking.amendment, AmendmentStatus.REJECTED, "the booking was cancelled before the partner answered", now
        )
    }
