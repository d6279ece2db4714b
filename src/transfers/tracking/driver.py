"""The driver page's one large button (docs/rules/ride.md#driver-page): the next step of the ride from its
stage, in the words a driver reads at a glance. Pure.

The no-show is never the large button: it is a second, smaller one at the pickup, because pressing it by
mistake ends the ride (docs/rules/ride.md#event-effects)."""

from __future__ import annotations

from dataclasses import dataclass

DEPARTED = "DRIVER_DEPARTED_TO_PICKUP"
ARRIVED = "DRIVER_ARRIVED_AT_PICKUP"
ON_BOARD = "DRIVER_DEPARTED_TO_DROPOFF"
DROPPED = "DRIVER_ARRIVED_AT_DROPOFF"
NO_SHOW = "CUSTOMER_NO_SHOW"
EVENT_TYPES = (DEPARTED, ARRIVED, ON_BOARD, DROPPED, NO_SHOW)

# The portal's five buttons (docs/rules/ride.md#driver-page), in ride order.
EVENT_LABELS = {
    DEPARTED: "Driver left for the pickup",
    ARRIVED: "Driver at the pickup",
    ON_BOARD: "Passenger on board",
    DROPPED: "Arrived at the drop-off",
    NO_SHOW: "Passenger did not show up",
}


# The stage as a dispatcher reads it (the portal's ride section).
STAGE_LABELS = {
    "NOT_STARTED": "Not started",
    "EN_ROUTE_TO_PICKUP": "Driver on the way to the pickup",
    "AT_PICKUP": "Driver at the pickup",
    "ON_BOARD": "Passenger on board",
    "DROPPED_OFF": "Dropped off",
    "CUSTOMER_NO_SHOW": "Passenger did not show up",
}


@dataclass(frozen=True, slots=True)
class Step:
    event: str
    label: str
    hint: str


_NEXT = {
    "NOT_STARTED": Step(DEPARTED, "I'm leaving for the pickup", "Press when you set off."),
    "EN_ROUTE_TO_PICKUP": Step(ARRIVED, "I'm at the pickup", "Press when you are at the meeting point."),
    "AT_PICKUP": Step(ON_BOARD, "Passenger on board", "Press when the passenger is in the car."),
    "ON_BOARD": Step(DROPPED, "Arrived at the drop-off", "Press when the passenger is out of the car."),
}
DONE_WORDS = {
    "DROPPED_OFF": "Ride finished. Thank you!",
    "CUSTOMER_NO_SHOW": "Reported: the passenger did not show up.",
}


def next_step(stage: str) -> Step | None:
    """The large button's step; None once the ride is over."""
    return _NEXT.get(stage)


def offers_no_show(stage: str) -> bool:
    """The smaller "Passenger did not show up" button: only while the driver waits at the pickup."""
    return stage == "AT_PICKUP"


# What the page says after a press (``?done=<event type>``: the form posts, then the page is read again).
DONE_NOTICES = {
    DEPARTED: "Sent: you are on your way.",
    ARRIVED: "Sent: you are at the pickup.",
    ON_BOARD: "Sent: the passenger is on board.",
    DROPPED: "Sent: the ride is finished.",
    NO_SHOW: "Sent: the passenger did not show up.",
}
_PLURALS = {"child": "children", "small bag": "small bags"}


def counted(count: int, noun: str) -> str:
    """``counted(1, "suitcase")`` is "1 suitcase"; ``counted(2, "child")`` is "2 children"."""
    return f"{count} {noun if count == 1 else _PLURALS.get(noun, noun + 's')}"
