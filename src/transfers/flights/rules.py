"""What a flight report does to a booking, as pure functions (docs/rules/flights.md).

Everything here works on aware datetimes (UTC instants), never on local wall-clock times: an airport
whose offset changes between booking and landing (a DST switch) moves nothing by itself, a 30-minute
delay across the switch is 30 minutes (docs/rules/flights.md#pickup-moves). The watcher, the CLI's
``flights check`` and the tests all go through ``decide`` and ``next_check``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from transfers.reference.flights import FlightStatus

FINAL = frozenset({FlightStatus.LANDED, FlightStatus.CANCELLED, FlightStatus.DIVERTED})
# docs/rules/flights.md#pickup-moves: a change smaller than this moves nothing.
THRESHOLD = timedelta(minutes=10)
# A shift needs an estimate within this of the scheduled arrival; anything further is bad data.
PLAUSIBLE = timedelta(hours=24)
# docs/rules/flights.md#watching
FIRST_SLOT_BEFORE = timedelta(hours=6)
CLOSE_SLOT_BEFORE = timedelta(hours=1)
FAR_EVERY = timedelta(minutes=30)
CLOSE_EVERY = timedelta(minutes=5)
WATCH_AFTER = timedelta(hours=2)


@dataclass(frozen=True, slots=True)
class FlightReport:
    """One provider's answer for one flight on one date, already mapped to our statuses.

    ``estimated_arrival`` is the provider's revised or predicted arrival (or the actual one once landed);
    every time is an aware datetime or None."""

    status: FlightStatus
    scheduled_arrival: datetime | None = None
    estimated_arrival: datetime | None = None
    actual_arrival: datetime | None = None
    terminal: str | None = None


NO_DATA = FlightReport(FlightStatus.UNKNOWN)


@dataclass(frozen=True, slots=True)
class Watched:
    """What the watch knows of one booking before a check."""

    original_pickup_at: datetime  # as booked
    pickup_at: datetime  # current
    scheduled_arrival: datetime  # the arrival the booked pickup was based on
    follow_minutes: int  # the partner's limit, 0..1440
    disrupted: bool  # already marked (the mark stays: docs/rules/flights.md#disruption)


class Outcome(StrEnum):
    NOTHING = "NOTHING"  # no new estimate, or a change under the threshold
    SHIFT = "SHIFT"  # the pickup moves (docs/rules/flights.md#pickup-moves)
    DISRUPTED = "DISRUPTED"  # newly disrupted (docs/rules/flights.md#disruption)
    IGNORED = "IGNORED"  # an estimate the rules refuse to act on (bad data): logged, nothing moves


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: Outcome
    new_pickup_at: datetime | None = None  # with SHIFT
    reason: str | None = None  # with SHIFT: FLIGHT_DELAY | FLIGHT_EARLY; with DISRUPTED/IGNORED: why

    @property
    def changes_booking(self) -> bool:
        return self.outcome in (Outcome.SHIFT, Outcome.DISRUPTED)


def arrival_of(report: FlightReport) -> datetime | None:
    """The arrival a report predicts: the actual one once landed, else the estimate."""
    if report.actual_arrival is not None:
        return report.actual_arrival
    return report.estimated_arrival


def usable(report: FlightReport, scheduled: datetime) -> datetime | None:
    """The report's arrival when the rules may act on it: present, aware and within 24 h of the
    scheduled arrival (a shift needs that, docs/rules/flights.md#pickup-moves); None otherwise."""
    arrival = arrival_of(report)
    if arrival is None or arrival.tzinfo is None or arrival.utcoffset() is None:
        return None
    if abs(arrival - scheduled) > PLAUSIBLE:
        return None
    return arrival


def decide(watched: Watched, report: FlightReport) -> Decision:
    """What one check does (docs/rules/flights.md#pickup-moves, #disruption).

    The pickup keeps its booked offset to the arrival: the current pickup is based on the arrival
    ``scheduled + (pickup - original)``; an estimate 10 minutes or more from that moves the pickup to
    ``original + (estimate - scheduled)`` when that total shift is within the partner's limit
    (inclusive), else the booking is disrupted. A cancelled or diverted flight disrupts. No data, or
    an estimate that is missing, unparsable or further than 24 h from the schedule, changes nothing."""
    if report.status in (FlightStatus.CANCELLED, FlightStatus.DIVERTED):
        if watched.disrupted:
            return Decision(Outcome.NOTHING)
        return Decision(Outcome.DISRUPTED, reason=report.status.value)
    if report.status in (FlightStatus.UNKNOWN, FlightStatus.UNTRACKED):
        return Decision(Outcome.NOTHING)
    if arrival_of(report) is None:
        return Decision(Outcome.NOTHING)
    arrival = usable(report, watched.scheduled_arrival)
    if arrival is None:
        return Decision(Outcome.IGNORED, reason="estimate more than 24 h from the scheduled arrival")
    basis = watched.scheduled_arrival + (watched.pickup_at - watched.original_pickup_at)
    if abs(arrival - basis) < THRESHOLD:
        return Decision(Outcome.NOTHING)
    total = arrival - watched.scheduled_arrival
    if abs(total) > timedelta(minutes=watched.follow_minutes):
        if watched.disrupted:
            return Decision(Outcome.NOTHING)
        return Decision(Outcome.DISRUPTED, reason="BEYOND_LIMIT")
    new_pickup = watched.original_pickup_at + total
    reason = "FLIGHT_DELAY" if new_pickup > watched.pickup_at else "FLIGHT_EARLY"
    return Decision(Outcome.SHIFT, new_pickup_at=new_pickup, reason=reason)


def next_check(now: datetime, arrival: datetime, status: FlightStatus) -> datetime | None:
    """When to check next (docs/rules/flights.md#watching), from the expected arrival (the estimate when
    there is one, else the schedule). None: the watch is over (landed, cancelled, diverted, or 2 h after
    the arrival)."""
    if status in FINAL:
        return None
    end = arrival + WATCH_AFTER
    if now >= end:
        return None
    first = arrival - FIRST_SLOT_BEFORE
    if now < first:
        return first
    close = arrival - CLOSE_SLOT_BEFORE
    if now < close:
        return min(now + FAR_EVERY, close)
    return min(now + CLOSE_EVERY, end)


def delay_minutes(report: FlightReport, scheduled: datetime | None) -> int | None:
    """``flight.delay_minutes``: the expected arrival minus the scheduled one, in whole minutes (negative
    when early); None without both."""
    arrival = arrival_of(report)
    if arrival is None or scheduled is None:
        return None
    return round((arrival - scheduled).total_seconds() / 60)
