"""A booking's flight news in words (docs/rules/flights.md#in-words): what every page that shows a flight says
of it, from the booking's trip alone, so the traveller's page, the agency portal, the partner portal and the
console cannot tell it differently. Pure: no SQL, no HTTP; times in the airport's local clock. In English
for the operators' and partners' pages; the traveller's page asks for the traveller's language
(docs/rules/messages.md#page-language).

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
from transfers.i18n.catalogs import Words
from transfers.i18n.dates import clock, short_date
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

    language: str = "en"

    @property
    def text(self) -> str:
        """The line with the terminal: "Delayed 45 min; lands 15:15, terminal 1"."""
        words = Words(self.language)
        if self.line and self.terminal:
            return words("%(line)s, terminal %(terminal)s", line=self.line, terminal=self.terminal)
        return self.line or (words("Terminal %(terminal)s", terminal=self.terminal) if self.terminal else "")


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


def _clock(moment: datetime, iata: str, day_of: datetime, words: Words) -> str:
    """ "15:15" at the airport, with the day when it is not the booked pickup's ("01:10 on Thu 10 Dec")."""
    local = local_time(iata, moment)
    if local.date() == local_time(iata, day_of).date():
        return clock(local, words.language)
    return words("%(time)s on %(date)s", time=clock(local, words.language), date=short_date(local, words.language))


def _line(
    status: str, delay: int | None, arrival: datetime | None, landed: bool, iata: str, day_of: datetime, words: Words
) -> str:
    if status == FlightStatus.CANCELLED.value:
        return words.in_context("flight", "Cancelled")
    if status == FlightStatus.DIVERTED.value:
        return words("Diverted to another airport")
    if status == FlightStatus.UNKNOWN.value:
        return words("No news of this flight from the airline yet")
    if arrival is None:
        return "" if status == FlightStatus.UNTRACKED.value else words("No news yet")
    when = _clock(arrival, iata, day_of, words)
    if landed:
        if delay and delay > 0:
            return words("Landed %(time)s (%(duration)s late)", time=when, duration=duration(delay))
        if delay and delay < 0:
            return words("Landed %(time)s (%(duration)s early)", time=when, duration=duration(delay))
        return words("Landed %(time)s", time=when)
    in_the_air = status == FlightStatus.EN_ROUTE.value
    if delay and delay > 0:
        if in_the_air:
            return words("In the air, delayed %(duration)s; lands %(time)s", duration=duration(delay), time=when)
        return words("Delayed %(duration)s; lands %(time)s", duration=duration(delay), time=when)
    if delay and delay < 0:
        if in_the_air:
            return words("In the air, early by %(duration)s; lands %(time)s", duration=duration(delay), time=when)
        return words("Early by %(duration)s; lands %(time)s", duration=duration(delay), time=when)
    if in_the_air:
        return words("In the air, on time; lands %(time)s", time=when)
    return words("On time; lands %(time)s", time=when)


def flight_news(trip: Trip, booking_status: str | None = None, language: str = "en") -> FlightNews | None:
    """The news of ``trip``'s flight; None when the pickup is not an airport (no flight is followed).
    ``booking_status``: a disruption is reported only while the booking waits for its ride (None: always).
    ``language``: the words' (one of ``i18n.LANGUAGES``; the traveller's page)."""
    words = Words(language)
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
    line = _line(status, delay, arrival, actual is not None, iata, trip.original_pickup_at, words)
    terminal = state.get("terminal")
    moved_from = None
    moved = ""
    if trip.pickup_at != trip.original_pickup_at:
        moved_from = local_time(iata, trip.original_pickup_at)
        was = _clock(trip.original_pickup_at, iata, trip.pickup_at, words)
        if trip.pickup_at > trip.original_pickup_at:
            moved = words("Moved from %(time)s because the flight is late", time=was)
        else:
            moved = words("Moved from %(time)s because the flight is early", time=was)
    disruption = None
    if trip.flight.disrupted_at is not None and (booking_status is None or booking_status in LIVE):
        if status == FlightStatus.CANCELLED.value:
            what = words("was cancelled")
        elif status == FlightStatus.DIVERTED.value:
            what = words("was diverted to another airport")
        elif delay is not None and delay < 0:
            what = words("lands %(duration)s early", duration=duration(delay))
        elif delay:
            what = words("is %(duration)s late", duration=duration(delay))
        else:
            what = words("changed more than the pickup can follow")
        disruption = Disruption(what, trip.flight.disrupted_at)
    early_pickup = ""
    scheduled = _moment(state.get("scheduled_arrival"))
    if scheduled is not None and trip.original_pickup_at < scheduled:
        # for the operators and partners (never on the traveller's page): in English
        english = Words("en")
        early_pickup = (
            f"The booked pickup ({_clock(trip.original_pickup_at, iata, scheduled, english)}) is before the flight's "
            f"scheduled arrival ({_clock(scheduled, iata, trip.original_pickup_at, english)}): the driver would wait "
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
        words.language,
    )
