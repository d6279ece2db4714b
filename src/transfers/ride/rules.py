"""What a driver report must look like and when it is accepted (docs/rules/ride.md#event-rules,
docs/rules/ride.md#positions). Pure: the booking's facts come in as ``BookingFacts``, the time as ``now``.

Every refusal names its rule in its message, which the reverse API answers as 422
``{"status": "Error", "message"}``: a partner's developer reads what to change, not a code to look up.
Bad input is ``RideInvalid``; a well-formed report the booking's state refuses is ``RideRefused``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from transfers.bookings.ride_field import DROPOFF_SIDE, ENDING, Position, RideEventType
from transfers.errors import Invalid, Refused

E = RideEventType

MAX_AHEAD = timedelta(minutes=5)  # a report's time at most this far ahead of the service's clock
EARLIEST_BEFORE_PICKUP = timedelta(hours=24)  # an event's time not earlier than this before pickup
DROPOFF_EARLIEST_BEFORE_PICKUP = timedelta(minutes=60)  # a ride cannot end hours before it starts
LATE_AFTER_COMPLETED = timedelta(hours=24)  # events still accepted this long after COMPLETED
POSITIONS_FROM = timedelta(hours=2)  # positions accepted from this long before pickup
MAX_POSITIONS = 100
_MAX_TEXT = 64  # longer than any ISO 8601 time or reservation number
TYPES_TEXT = ", ".join(t.value for t in RideEventType)


class RideInvalid(Invalid):
    """A driver report that breaks the shape of docs/rules/ride.md (answered 422, naming the rule)."""


class RideRefused(Refused):
    """A well-formed driver report the booking's present state refuses (answered 422, naming the rule)."""


@dataclass(frozen=True, slots=True)
class EventReport:
    """``POST /reverse/booking/events``, parsed."""

    reservation_no: str
    type: RideEventType
    occurred_at: datetime
    lat: float | None
    lng: float | None


@dataclass(frozen=True, slots=True)
class PositionsReport:
    """``POST /reverse/booking/positions``, parsed (1..100 positions, in the order sent)."""

    reservation_no: str
    positions: tuple[Position, ...]


@dataclass(frozen=True, slots=True)
class BookingFacts:
    """What the rules read of a booking: its status, pickup, free wait, when it became COMPLETED
    (None unless it is) and the event types already recorded."""

    status: str
    pickup_at: datetime
    free_wait_until: datetime
    completed_at: datetime | None
    recorded: frozenset[RideEventType]


class Verdict(Enum):
    RECORD = "record"
    REPEAT = "repeat"  # recorded already: Success, nothing changes


# --- shape ---------------------------------------------------------------------------------------------


def parse_event(body: Mapping[str, Any], now: datetime) -> EventReport:
    """The event report in ``body`` (unknown keys ignored); raises RideInvalid naming the first
    broken rule. ``now``: the service's clock (an ``occurred_at`` more than 5 min ahead is refused)."""
    reservation_no = _reservation_no(body)
    kind = body.get("type")
    if not isinstance(kind, str) or kind not in RideEventType.__members__:
        raise RideInvalid(f"type: must be one of {TYPES_TEXT}")
    occurred_at = _instant(body.get("occurred_at"), "occurred_at", now)
    lat, lng = _pair(body.get("lat"), body.get("lng"), "")
    return EventReport(reservation_no, RideEventType(kind), occurred_at, lat, lng)


def parse_positions(body: Mapping[str, Any], now: datetime) -> PositionsReport:
    """The positions report in ``body``; one invalid item refuses the whole batch (RideInvalid naming
    the item and its rule)."""
    reservation_no = _reservation_no(body)
    items = body.get("positions")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_POSITIONS:
        raise RideInvalid(f"positions: must be a list of 1 to {MAX_POSITIONS} positions")
    return PositionsReport(
        reservation_no, tuple(_position(item, f"positions[{i}]", now) for i, item in enumerate(items))
    )


def _reservation_no(body: Mapping[str, Any]) -> str:
    value = body.get("reservation_no")
    if not isinstance(value, str) or not value.strip() or len(value) > 255 or "\x00" in value:
        raise RideInvalid("reservation_no: must be a non-empty string")
    return value


def _position(item: Any, where: str, now: datetime) -> Position:
    if not isinstance(item, dict):
        raise RideInvalid(f"{where}: must be an object with lat, lng and at")
    lat, lng = _pair(item.get("lat"), item.get("lng"), f"{where}.")
    if lat is None or lng is None:
        raise RideInvalid(f"{where}: lat and lng are required")
    at = _instant(item.get("at"), f"{where}.at", now)
    heading = item.get("heading")
    if heading is not None and (not _is_number(heading) or not 0 <= heading <= 359):
        raise RideInvalid(f"{where}.heading: must be a number from 0 to 359, or null")
    speed = item.get("speed_kmh")
    if speed is not None and (not _is_number(speed) or speed < 0):
        raise RideInvalid(f"{where}.speed_kmh: must be a number of at least 0, or null")
    return Position(
        float(lat), float(lng), at, None if heading is None else int(heading), None if speed is None else float(speed)
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _pair(lat: Any, lng: Any, prefix: str) -> tuple[float | None, float | None]:
    """docs/rules/ride.md#event-rules: ``lat`` and ``lng`` both or neither, in range."""
    if (lat is None) != (lng is None):
        raise RideInvalid(f"{prefix}lat, {prefix}lng: both or neither")
    if lat is None:
        return None, None
    if not _is_number(lat) or not -90 <= lat <= 90:
        raise RideInvalid(f"{prefix}lat: must be a number from -90 to 90")
    if not _is_number(lng) or not -180 <= lng <= 180:
        raise RideInvalid(f"{prefix}lng: must be a number from -180 to 180")
    return float(lat), float(lng)


def _instant(value: Any, where: str, now: datetime) -> datetime:
    if not isinstance(value, str) or len(value) > _MAX_TEXT:
        raise RideInvalid(f"{where}: must be an ISO 8601 time with an offset, e.g. 2026-05-01T09:30:00+01:00")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RideInvalid(f"{where}: must be an ISO 8601 time with an offset, e.g. 2026-05-01T09:30:00+01:00") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise RideInvalid(f"{where}: must carry an offset (Z or +HH:MM)")
    if parsed > now + MAX_AHEAD:
        raise RideInvalid(f"{where}: must be at most 5 minutes ahead of the service's clock")
    return parsed


# --- when ------------------------------------------------------------------------------------------------


def check_event(facts: BookingFacts, report: EventReport, now: datetime) -> Verdict:
    """docs/rules/ride.md#event-rules, in this order: the booking accepts events at all, the time is
    within its window, a type recorded already is a harmless repeat, a drop-off-side event no earlier
    than 60 min before the pickup, then the order rules of the no-show.

    ``facts.pickup_at`` is the current pickup (it follows the flight); for the sandbox partner it is the
    compressed one (``compressed``), which is how its rides, played within a minute of booking whatever
    the pickup, stay exempt from the 60 min rule."""
    if facts.status == "COMPLETED":
        if facts.completed_at is None or now > facts.completed_at + LATE_AFTER_COMPLETED:
            raise RideRefused("events are accepted for APPROVED bookings and until 24 h after one became COMPLETED")
    elif facts.status != "APPROVED":
        raise RideRefused(f"events are accepted for APPROVED bookings only; this booking is {facts.status}")
    if report.occurred_at < facts.pickup_at - EARLIEST_BEFORE_PICKUP:
        raise RideRefused("occurred_at: must not be earlier than 24 h before the pickup")
    if report.type in facts.recorded:
        return Verdict.REPEAT
    if report.type in DROPOFF_SIDE and report.occurred_at < facts.pickup_at - DROPOFF_EARLIEST_BEFORE_PICKUP:
        # docs/rules/ride.md#event-rules: a drop-off hours before the pickup would complete the booking at
        # once, end the client's right to cancel and book the fare on the partner's statement.
        pickup = facts.pickup_at.isoformat()
        raise RideRefused(f"{report.type.value}: occurred_at must not be more than 60 min before the pickup ({pickup})")
    if report.type is E.CUSTOMER_NO_SHOW:
        if E.DRIVER_ARRIVED_AT_PICKUP not in facts.recorded:
            raise RideRefused("CUSTOMER_NO_SHOW needs a recorded DRIVER_ARRIVED_AT_PICKUP")
        if facts.recorded & DROPOFF_SIDE:
            raise RideRefused("CUSTOMER_NO_SHOW is refused once the passenger is on board or dropped off")
        if report.occurred_at < facts.free_wait_until:
            until = facts.free_wait_until.isoformat()
            raise RideRefused(f"CUSTOMER_NO_SHOW: occurred_at must be at or after free_wait_until ({until})")
    elif report.type in DROPOFF_SIDE and E.CUSTOMER_NO_SHOW in facts.recorded:
        raise RideRefused(f"{report.type.value} is refused after a CUSTOMER_NO_SHOW")
    return Verdict.RECORD


def ends_ride(event: RideEventType) -> bool:
    """docs/rules/ride.md#event-effects: the drop-off and the no-show complete an APPROVED booking."""
    return event in ENDING


def compressed(
    facts: BookingFacts, *, arrived_at: datetime | None, now: datetime, free_wait_minutes: int
) -> BookingFacts:
    """docs/rules/sandbox.md#ride: the sandbox partner plays a ride within a minute of booking, whenever
    the pickup is, so its reports are judged on a compressed clock: the pickup is when its driver
    arrived (now, until then) and the free wait lasts as many seconds as it has minutes. Every other
    rule holds as for any partner."""
    pickup = arrived_at or now
    return replace(facts, pickup_at=pickup, free_wait_until=pickup + timedelta(seconds=free_wait_minutes))


def check_positions(facts: BookingFacts, now: datetime) -> None:
    """docs/rules/ride.md#positions: APPROVED, from 2 h before pickup (by the time received) until the ride ends."""
    if facts.status != "APPROVED" or facts.recorded & ENDING:
        raise RideRefused(f"positions are accepted while the ride is on; this booking is {facts.status}")
    if now < facts.pickup_at - POSITIONS_FROM:
        raise RideRefused("positions are accepted from 2 h before the pickup")
