"""The driver page's one large button (docs/rules/ride.md#driver-page): the next step of the ride from its
stage, in the words a driver reads at a glance; the flight, the pickup and the drop-off as the driver needs
them (a link to the phone's maps). Pure.

The no-show is never the large button: it is a second, smaller one at the pickup, because pressing it by
mistake ends the ride (docs/rules/ride.md#event-effects)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from transfers.bookings.trip import Place, Trip
from transfers.flights.news import flight_news
from transfers.reference.airports import local_time

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


# --- what the driver needs to find the passenger and the way (docs/rules/ride.md#driver-page) ---------------
MAPS_SEARCH = "https://www.google.com/maps/search/"


def maps_url(query: str) -> str:
    """A link that opens the phone's maps at ``query`` (coordinates ``"lat,lng"`` or a place's name).

    Google Maps' documented cross-platform URL (``api=1``): it opens the Google Maps app on Android and on
    iPhones that have it, and maps in the browser elsewhere. A ``geo:`` URI was not taken: iPhones'
    browsers do nothing with it. Nothing is loaded until the driver taps it, and the page's no-referrer
    keeps the link's token from the maps' host."""
    return f"{MAPS_SEARCH}?{urlencode({'api': '1', 'query': query})}"


@dataclass(frozen=True, slots=True)
class Stop:
    """One end of the ride as the driver page shows it: what to read, and where the maps link points."""

    text: str
    maps: str


def stop(place: Place, point: tuple[float, float] | None, terminal: str | None = None) -> Stop:
    """An airport by its name (and terminal, when the flight says it): the airport's reference point is
    often a runway, and a maps search for "Heathrow Terminal 5" finds the terminal. A point by its
    coordinates, the exact spot that was booked (its name may be a hotel a map does not know)."""
    if place.type == "AIRPORT":
        name = place.label + (f", terminal {terminal}" if terminal else "")
        return Stop(name, maps_url(name))
    if point is None:
        return Stop(place.label, maps_url(place.label))
    coordinates = f"{point[0]:.5f},{point[1]:.5f}"
    text = place.name or f"The booked spot ({point[0]:.5f}, {point[1]:.5f})"
    return Stop(text, maps_url(coordinates))


@dataclass(frozen=True, slots=True)
class FlightFacts:
    """The flight as a driver needs it: when it is expected and where."""

    number: str | None
    arrival: str  # "10:45 (expected)", "10:40 (landed)", "10:00 (scheduled)", or "" when not known
    terminal: str | None
    news: str  # "Delayed 45 min; lands 10:45", or ""


def flight_facts(trip: Trip) -> FlightFacts | None:
    """None when the pickup is not an airport. The arrival is the best one known: landed, else the
    airline's estimate, else the timetable's; the times are the airport's clock."""
    news = flight_news(trip)
    if news is None:
        return None
    state = trip.flight.state or {}
    arrival = ""
    for key, word in (
        ("actual_arrival", "landed"),
        ("estimated_arrival", "expected"),
        ("scheduled_arrival", "scheduled"),
    ):
        raw = state.get(key)
        if isinstance(raw, str) and raw:
            try:
                moment = datetime.fromisoformat(raw)
            except ValueError:
                continue
            if moment.tzinfo is None:
                continue
            local = local_time(trip.route.airport_iata, moment)
            same_day = local.date() == trip.local_pickup.date()
            arrival = f"{local:%H:%M}" + ("" if same_day else f" on {local:%a} {local.day} {local:%b}") + f" ({word})"
            break
    return FlightFacts(trip.flight.number, arrival, news.terminal, news.line)
