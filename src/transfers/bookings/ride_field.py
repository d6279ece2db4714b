"""The booking's ``ride`` field: the ride's vocabulary and the ride as one value (docs/rules/ride.md),
read from the booking's own columns and shown in its resource. Pure: no HTTP, no SQL. The ride's
package (``ride/``: its rules, use cases and event tables) sits above the bookings and uses it.

The event names are those of the marketplaces' supplier APIs (docs/rules/ride.md#events), so a
partner sends what it sends elsewhere. A booking's ride is read from its stored columns
(``bookings.ride_milestones``, ``ride_position``), which the use cases of ``ride/service.py``
write in the transaction that records a report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class RideEventType(StrEnum):
    DRIVER_DEPARTED_TO_PICKUP = "DRIVER_DEPARTED_TO_PICKUP"
    DRIVER_ARRIVED_AT_PICKUP = "DRIVER_ARRIVED_AT_PICKUP"
    DRIVER_DEPARTED_TO_DROPOFF = "DRIVER_DEPARTED_TO_DROPOFF"  # the passenger is on board
    DRIVER_ARRIVED_AT_DROPOFF = "DRIVER_ARRIVED_AT_DROPOFF"
    CUSTOMER_NO_SHOW = "CUSTOMER_NO_SHOW"


class Stage(StrEnum):
    NOT_STARTED = "NOT_STARTED"
    EN_ROUTE_TO_PICKUP = "EN_ROUTE_TO_PICKUP"
    AT_PICKUP = "AT_PICKUP"
    ON_BOARD = "ON_BOARD"
    DROPPED_OFF = "DROPPED_OFF"
    CUSTOMER_NO_SHOW = "CUSTOMER_NO_SHOW"


E = RideEventType

# docs/rules/ride.md#ride-field: the milestones in ride order; the stage is the furthest one recorded.
MILESTONES: tuple[tuple[RideEventType, Stage], ...] = (
    (E.DRIVER_DEPARTED_TO_PICKUP, Stage.EN_ROUTE_TO_PICKUP),
    (E.DRIVER_ARRIVED_AT_PICKUP, Stage.AT_PICKUP),
    (E.DRIVER_DEPARTED_TO_DROPOFF, Stage.ON_BOARD),
    (E.DRIVER_ARRIVED_AT_DROPOFF, Stage.DROPPED_OFF),
)
# The four milestones a complete ride reports (the console's driver-event coverage).
FOUR_MILESTONES = frozenset(event for event, _ in MILESTONES)
# docs/rules/ride.md#event-rules: refused after a no-show (the passenger never boarded).
DROPOFF_SIDE = frozenset({E.DRIVER_DEPARTED_TO_DROPOFF, E.DRIVER_ARRIVED_AT_DROPOFF})
# docs/rules/ride.md#event-effects: the events that end the ride, and the booking with it.
ENDING = frozenset({E.DRIVER_ARRIVED_AT_DROPOFF, E.CUSTOMER_NO_SHOW})
# docs/rules/ride.md#ride-field: the stages during which the position is shown.
RIDE_ON = frozenset({Stage.EN_ROUTE_TO_PICKUP, Stage.AT_PICKUP, Stage.ON_BOARD})


@dataclass(frozen=True, slots=True)
class Milestone:
    """One recorded driver event, as the booking shows it."""

    type: RideEventType
    occurred_at: datetime
    lat: float | None
    lng: float | None
    received_at: datetime

    def stored(self) -> dict[str, Any]:
        """Its JSON (``bookings.ride_milestones`` items, the resource's ``ride.events``, a client event's ``event``)."""
        return {
            "type": self.type.value,
            "occurred_at": self.occurred_at.isoformat(),
            "lat": self.lat,
            "lng": self.lng,
            "received_at": self.received_at.isoformat(),
        }

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Milestone:
        return cls(
            RideEventType(stored["type"]),
            datetime.fromisoformat(stored["occurred_at"]),
            stored.get("lat"),
            stored.get("lng"),
            datetime.fromisoformat(stored["received_at"]),
        )


@dataclass(frozen=True, slots=True)
class Position:
    """Where the driver was at ``at``."""

    lat: float
    lng: float
    at: datetime
    heading: int | None = None
    speed_kmh: float | None = None

    def stored(self) -> dict[str, Any]:
        return {
            "lat": self.lat,
            "lng": self.lng,
            "at": self.at.isoformat(),
            "heading": self.heading,
            "speed_kmh": self.speed_kmh,
        }

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Position:
        return cls(
            stored["lat"],
            stored["lng"],
            datetime.fromisoformat(stored["at"]),
            stored.get("heading"),
            stored.get("speed_kmh"),
        )


def stage_of(types: Sequence[RideEventType] | frozenset[RideEventType]) -> Stage:
    """docs/rules/ride.md#ride-field: the furthest milestone recorded; a no-show is its own end."""
    if E.CUSTOMER_NO_SHOW in types:
        return Stage.CUSTOMER_NO_SHOW
    stage = Stage.NOT_STARTED
    for event, reached in MILESTONES:
        if event in types:
            stage = reached
    return stage


@dataclass(frozen=True, slots=True)
class Ride:
    """A booking's ride: the recorded events (by ``occurred_at``) and the latest position."""

    events: tuple[Milestone, ...] = ()
    position: Position | None = None

    @classmethod
    def from_stored(cls, milestones: Sequence[Mapping[str, Any]] | None, position: Mapping[str, Any] | None) -> Ride:
        if not milestones and position is None:
            return NO_RIDE
        return cls(
            tuple(Milestone.from_stored(m) for m in milestones or ()),
            Position.from_stored(position) if position is not None else None,
        )

    @property
    def types(self) -> frozenset[RideEventType]:
        return frozenset(m.type for m in self.events)

    @property
    def stage(self) -> Stage:
        if not self.events:  # most rides (every GET booking before the driver reports): nothing to fold
            return Stage.NOT_STARTED
        return stage_of(self.types)

    def is_on(self, approved: bool) -> bool:
        """The ride is on: the booking is APPROVED and the driver is on the way, waiting or driving."""
        return approved and self.stage in RIDE_ON

    def with_event(self, event: Milestone) -> Ride:
        """The ride with one more event, kept in ``occurred_at`` order (ties: in arrival order)."""
        events = sorted((*self.events, event), key=lambda m: m.occurred_at)
        return Ride(tuple(events), self.position)

    def stored_events(self) -> list[dict[str, Any]]:
        return [m.stored() for m in self.events]


NO_RIDE = Ride()


def view(
    ride: Ride, *, approved: bool, tracking_url: str | None = None, rating_url: str | None = None
) -> dict[str, Any]:
    """The BookingResource's ``ride`` (docs/rules/ride.md#ride-field). ``tracking_url``: the
    traveller's page, which the page's own code gives (docs/rules/ride.md#tracking-page); None until then.
    ``rating_url``: the traveller's rating page, from the drop-off (docs/rules/ratings.md#rating-page)."""
    return {
        "stage": ride.stage.value,
        "events": ride.stored_events(),
        "position": ride.position.stored() if ride.position is not None and ride.is_on(approved) else None,
        "tracking_url": tracking_url,
        "rating_url": rating_url,
    }


def partner_view(ride: Ride, *, approved: bool) -> dict[str, Any]:
    """The ``ride`` of a partner's booking info: the client's without ``rating_url`` (the traveller's rating
    link never reaches the partner it rates: docs/rules/ratings.md#rating-page)."""
    shown = view(ride, approved=approved)
    del shown["rating_url"]
    return shown
