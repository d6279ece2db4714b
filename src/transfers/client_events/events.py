"""Which client events a booking change produces, and the body every delivery of one sends. Pure.

A change (``lifecycle.Change``) yields, in this order:

* ``booking.created`` for the creation (sequence 1);
* ``booking.status_changed`` for every status change after it (``previous_status`` set);
* ``booking.driver_updated`` when the driver's details (name, phone, plate, meeting point) are
  set or changed, with or without a status change (an approval that names the driver yields
  ``status_changed`` and then ``driver_updated``);
* ``booking.amendment_applied`` / ``booking.amendment_rejected`` when the partner settles an
  amendment (docs/rules/cancellation.md);
* ``booking.pickup_time_changed`` when the flight watch moves the pickup (its ``flight_state`` carries a
  new ``shifted_at``; ``data`` adds ``previous_pickup_datetime`` and ``reason``), and
  ``booking.flight_disrupted`` when the booking is first marked disrupted (docs/rules/flights.md);
* ``booking.driver_event`` once per driver event recorded (docs/rules/ride.md#client-events), with
  the event in ``data.event``.

``booking.driver_position`` is not a change's event: the positions use case pushes it as a
delivery tried once, only to endpoints that name it (``webhooks/positions.py``).

Each event takes the booking's next ``sequence`` (one per event), so a receiver keeps the highest
it has seen and drops older ones.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

import orjson


class EventType(StrEnum):
    BOOKING_CREATED = "booking.created"
    BOOKING_STATUS_CHANGED = "booking.status_changed"
    BOOKING_DRIVER_UPDATED = "booking.driver_updated"
    BOOKING_AMENDMENT_APPLIED = "booking.amendment_applied"
    BOOKING_AMENDMENT_REJECTED = "booking.amendment_rejected"
    # docs/rules/incidents.md#client-events: written by the incident use cases, with ``data.incident``
    BOOKING_INCIDENT_OPENED = "booking.incident_opened"
    BOOKING_INCIDENT_RESOLVED = "booking.incident_resolved"
    BOOKING_PICKUP_TIME_CHANGED = "booking.pickup_time_changed"  # docs/rules/flights.md#pickup-moves
    BOOKING_FLIGHT_DISRUPTED = "booking.flight_disrupted"  # docs/rules/flights.md#disruption
    BOOKING_DRIVER_EVENT = "booking.driver_event"  # docs/rules/ride.md#client-events
    BOOKING_DRIVER_POSITION = "booking.driver_position"  # only to endpoints that name it, never "*"
    # docs/rules/messages.md#sending: a message the traveller may be waiting for failed, in ``data.message``
    BOOKING_MESSAGE_FAILED = "booking.message_failed"
    PING = "ping"


EVERY_EVENT = "*"
# docs/rules/ride.md#client-events: sent only to endpoints that name them ("*" does not include them).
NAMED_ONLY = frozenset({EventType.BOOKING_DRIVER_POSITION})
DRIVER_KEYS = ("driver_name", "driver_phone", "driver_plate", "meeting_point")
_AMENDMENT_EVENTS = {"APPLIED": EventType.BOOKING_AMENDMENT_APPLIED, "REJECTED": EventType.BOOKING_AMENDMENT_REJECTED}


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One event a change produces: its type and, for a status change, the status it left."""

    type: EventType
    previous_status: str | None = None
    data: dict[str, Any] | None = None  # what the event's ``data`` carries besides the booking and sequence


def new_event_id() -> str:
    return f"evt_{os.urandom(16).hex()}"


class ChangedBooking(Protocol):
    """What the events of a change read of a booking (``bookings.models.Booking`` has it): the
    driver's details and the latest amendment."""

    @property
    def driver_name(self) -> str | None: ...
    @property
    def driver_phone(self) -> str | None: ...
    @property
    def driver_plate(self) -> str | None: ...
    @property
    def meeting_point(self) -> str | None: ...
    @property
    def amendment(self) -> dict[str, Any] | None: ...
    @property
    def flight_state(self) -> dict[str, Any] | None: ...
    @property
    def flight_disrupted_at(self) -> datetime | None: ...
    @property
    def ride_milestones(self) -> list[dict[str, Any]] | None: ...


def events_of(
    booking: ChangedBooking | None, from_status: str | None, to_status: str, previous: ChangedBooking | None
) -> list[EventSpec]:
    """The events of one change of ``booking`` (as moved) from ``from_status`` (None: created) to
    ``to_status``; ``previous`` is the booking before the change, when the path read it (without
    it only the status part is known: the one-statement paths change nothing else; the
    acknowledgement's reads not even ``booking``, None)."""
    if from_status is None:
        return [EventSpec(EventType.BOOKING_CREATED)]
    found = []
    if from_status != to_status:
        found.append(EventSpec(EventType.BOOKING_STATUS_CHANGED, from_status))
    if previous is not None and booking is not None:
        if booking.driver_name and any(getattr(booking, k) != getattr(previous, k) for k in DRIVER_KEYS):
            found.append(EventSpec(EventType.BOOKING_DRIVER_UPDATED))
        settled = _amendment_status(booking)
        if settled in _AMENDMENT_EVENTS and settled != _amendment_status(previous):
            found.append(EventSpec(_AMENDMENT_EVENTS[settled]))
        shift = _shift(booking)
        if shift is not None and shift.get("shifted_at") != (_shift(previous) or {}).get("shifted_at"):
            found.append(
                EventSpec(
                    EventType.BOOKING_PICKUP_TIME_CHANGED,
                    data={
                        "previous_pickup_datetime": shift.get("previous_pickup_datetime"),
                        "reason": shift.get("reason"),
                    },
                )
            )
        if booking.flight_disrupted_at is not None and previous.flight_disrupted_at is None:
            found.append(EventSpec(EventType.BOOKING_FLIGHT_DISRUPTED))
        seen = {m["type"] for m in previous.ride_milestones or ()}
        found += [
            EventSpec(EventType.BOOKING_DRIVER_EVENT, data={"event": m})
            for m in booking.ride_milestones or ()
            if m["type"] not in seen
        ]
    return found


def _shift(booking: ChangedBooking) -> Mapping[str, Any] | None:
    state = booking.flight_state
    shift = state.get("shift") if isinstance(state, Mapping) else None
    return shift if isinstance(shift, Mapping) else None


def _amendment_status(booking: ChangedBooking) -> str | None:
    amendment = booking.amendment
    return amendment.get("status") if isinstance(amendment, Mapping) else None


def matches(subscribed: list[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to ``subscribed`` receives ``event_type`` (a ping always)."""
    if event_type == EventType.PING or event_type in subscribed:
        return True
    return EVERY_EVENT in subscribed and event_type not in NAMED_ONLY


def body(event_id: str, event_type: str, created_at: datetime, data: dict[str, Any]) -> bytes:
    """The exact bytes every delivery of the event sends (and signs)."""
    return orjson.dumps({"id": event_id, "type": event_type, "created_at": created_at.isoformat(), "data": data})


def booking_data(
    booking: dict[str, Any],
    event_type: str,
    sequence: int | None,
    previous_status: str | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {"booking": booking}
    if event_type == EventType.BOOKING_STATUS_CHANGED:
        data["previous_status"] = previous_status
    if extra:
        data.update(extra)
    data["sequence"] = sequence
    return data
