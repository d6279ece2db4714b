"""A booking's flight news in words (docs/rules/flights.md#in-words): what every page that shows a flight says
of it, from the booking's trip alone, so the traveller's page, the agency portal, the partner portal and the
console cannot tell it differently. Pure: no SQL, no HTTP; times in the airport's local clock.

* ``line``: what happened to the flight, "Delayed 45 min; lands 15:15", "Landed 15:15 (45 min late)",
  "Cancelled"; never "On schedule" for a late flight.
* ``moved``: the pickup followed the flight: "Moved from 14:30 because the flight is late".
* ``disruption``: the flight is cancelled, diverted or later (or earlier) than the partner's limit; the pickup
  did not move and cancelling is free from then on (docs/rules/flights.md#disruption).
* ``early_pickup``: the booked pickup is before the flight's scheduled arrival: a driver sent then waits for
  a traveller still in the air (a booking mistake worth a look).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from transfers.bookings.trip import Trip
from transfers.reference.airports import local_time
from transfers.reference.flights import FlightStatus, is_trackable

# Statuses in which the booking still waits for its ride: a disruption is news only then.
LIVE = frozenset({"PENDING", "PENDING_APPROVAL", "APPROVED"})


@dataclass(frozen=True, slots=True)
class Disruption:
    """Why the pickup did not follow the flight, in words: "was cancelled", "was diverted", "is 4 h late"."""

    what: str
    since: datetime  # when the booking was marked disrupted (UTC)


@dataclass(frozen=True, slots=True)
class FlightNews:
    number: str
    status: str  # the BookingResource's ``flight.status``
    line: str  # what happened, "" when there is nothing to say (an untracked number)
    terminal: str | None
    moved_from: datetime | None  # the pickup as booked (airport time) when the flight moved it
    moved: str  # "Moved from 14:30 because the flight is late", or ""
    disruption: Disruption | None
    early_pickup: str  # "The booked pickup (09:00) is before the flight's scheduled arrival (10:00)", or ""

    @property
    def text(self) -> str:
        """The line with the terminal: "Delayed 45 min; lands 15:15, terminal 1"."""
        if self.line and self.terminal:
            return f"{self.line}, terminal {self.terminal}"
        return self.line or (f"Terminal {self.terminal}" if self.terminal else "")


def duration(minutes: int) -> str:
    """ "45 min", "2 h", "4 h 10 min"."""
    minutes = abs(minutes)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h" if rest == 0 else f"{hours} h {rest} min"


def _moment(raw: object) -> datetime | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _clock(moment: datetime, iata: str, day_of: datetime) -> str:
    """ "15:15" at the airport, with the day when it is not the booked pickup's ("01:10 on Thu 10 Dec")."""
    local = local_time(iata, moment)
    if local.date() == local_time(iata, day_of).date():
        return f"{local:%H:%M}"
    return f"{local:%H:%M} on {local:%a} {local.day} {local:%b}"


def _line(status: str, delay: int | None, arrival: datetime | None, landed: bool, iata: str, day_of: datetime) -> str:
    if status == FlightStatus.CANCELLED.value:
        return "Cancelled"
    if status == FlightStatus.DIVERTED.value:
        return "Diverted to another airport"
    if status == FlightStatus.UNKNOWN.value:
        return "No news of this flight from the airline yet"
    if arrival is None:
        return "" if status == FlightStatus.UNTRACKED.value else "No news yet"
    when = _clock(arrival, iata, day_of)
    if landed:
        if delay and delay > 0:
            return f"Landed {when} ({duration(delay)} late)"
        if delay and delay < 0:
            return f"Landed {when} ({duration(delay)} early)"
        return f"Landed {when}"
    prefix = "In the air, " if status == FlightStatus.EN_ROUTE.value else ""
    if delay and delay > 0:
        words = f"delayed {duration(delay)}; lands {when}"
    elif delay and delay < 0:
        words = f"early by {duration(delay)}; lands {when}"
    else:
        words = f"on time; lands {when}"
    text = prefix + words
    return text[0].upper() + text[1:]


def flight_news(trip: Trip, booking_status: str | None = None) -> FlightNews | None:
    """The news of ``trip``'s flight; None when the pickup is not an airport (no flight is followed).
    ``booking_status``: a disruption is reported only while the booking waits for its ride (None: always)."""
    route = trip.route
    if route.pickup.type != "AIRPORT":
        return None
    iata = route.airport_iata
    state = trip.flight.state or {}
    number = trip.flight.number
    status = str(state.get("status") or "")
    if not status:
        status = FlightStatus.SCHEDULED.value if is_trackable(number) else FlightStatus.UNTRACKED.value
    raw_delay = state.get("delay_minutes")
    delay = raw_delay if isinstance(raw_delay, int) else None
    actual = _moment(state.get("actual_arrival"))
    arrival = actual or _moment(state.get("estimated_arrival"))
    line = _line(status, delay, arrival, actual is not None, iata, trip.original_pickup_at)
    terminal = state.get("terminal")
    moved_from = None
    moved = ""
    if trip.pickup_at != trip.original_pickup_at:
        moved_from = local_time(iata, trip.original_pickup_at)
        why = "late" if trip.pickup_at > trip.original_pickup_at else "early"
        moved = f"Moved from {_clock(trip.original_pickup_at, iata, trip.pickup_at)} because the flight is {why}"
    disruption = None
    if trip.flight.disrupted_at is not None and (booking_status is None or booking_status in LIVE):
        if status == FlightStatus.CANCELLED.value:
            what = "was cancelled"
        elif status == FlightStatus.DIVERTED.value:
            what = "was diverted to another airport"
        elif delay is not None and delay < 0:
            what = f"lands {duration(delay)} early"
        elif delay:
            what = f"is {duration(delay)} late"
        else:
            what = "changed more than the pickup can follow"
        disruption = Disruption(what, trip.flight.disrupted_at)
    early_pickup = ""
    scheduled = _moment(state.get("scheduled_arrival"))
    if scheduled is not None and trip.original_pickup_at < scheduled:
        early_pickup = (
            f"The booked pickup ({_clock(trip.original_pickup_at, iata, scheduled)}) is before the flight's "
            f"scheduled arrival ({_clock(scheduled, iata, trip.original_pickup_at)}): the driver would wait "
            "for a traveller still in the air"
        )
    return FlightNews(
        number,
        status,
        line,
        terminal if isinstance(terminal, str) else None,
        moved_from,
        moved,
        disruption,
        early_pickup,
    )
