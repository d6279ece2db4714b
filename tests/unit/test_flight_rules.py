"""docs/rules/flights.md as tables: flight numbers, the 10-minute threshold, shifts within the partner's
limit, cumulative shifts, back on time, beyond the limit, cancelled, diverted, no data, DST, bad data, and
the watch schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from transfers.flights.rules import (
    NO_DATA,
    Decision,
    FlightReport,
    Outcome,
    Watched,
    decide,
    delay_minutes,
    next_check,
)
from transfers.reference.flights import FlightStatus, is_trackable, normalise

T0 = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
M = timedelta(minutes=1)


@pytest.mark.parametrize(
    ("raw", "normalised", "trackable"),
    [
        ("ba 0123", "BA123", True),
        ("BA123", "BA123", True),
        ("  ba-0123 ", "BA123", True),
        ("u2 0007", "U27", True),
        ("BAW0123", "BAW123", True),
        ("ZZ1045", "ZZ1045", True),
        ("zz2030", "ZZ2030", True),
        ("BA0", "BA0", True),
        ("BA0000", "BA0", True),
        ("4U9525A", "4U9525A", True),
        ("ABC12345", "ABC12345", False),  # 8 characters: accepted, untracked
        ("BA12345", "BA12345", False),
        ("BA\t0123\n", "BA123", True),
        ("✈️ BA123", "✈️BA123", False),
        ("BA😀1", "BA😀1", False),
        ("", "", False),
        ("--", "", False),
        ("B", "B", False),
        ("X" * 10_000, "X" * 10_000, False),
        ("ﬀ12", "FF12", True),  # unicode upper-casing: what upper() gives is what is stored and checked
    ],
)
def test_flight_numbers(raw: str, normalised: str, trackable: bool) -> None:
    assert normalise(raw) == normalised
    assert is_trackable(normalise(raw)) is trackable


def test_none_stays_none() -> None:
    assert normalise(None) is None
    assert is_trackable(None) is False


def _watched(shift_min: int = 0, limit: int = 180, disrupted: bool = False, offset_min: int = 0) -> Watched:
    """A booking whose pickup was booked ``offset_min`` after the scheduled arrival T0, now shifted by ``shift_min``."""
    original = T0 + offset_min * M
    return Watched(original, original + shift_min * M, T0, limit, disrupted)


def _at(minutes: int, status: FlightStatus = FlightStatus.SCHEDULED) -> FlightReport:
    return FlightReport(status, T0, T0 + minutes * M)


# (current shift, partner limit, already disrupted, report, expected outcome, expected total shift in minutes)
DECISIONS: list[tuple[str, int, int, bool, FlightReport, Outcome, int | None]] = [
    ("on time", 0, 180, False, _at(0), Outcome.NOTHING, None),
    ("9 min late: under the threshold", 0, 180, False, _at(9), Outcome.NOTHING, None),
    (
        "9 min 59 s late",
        0,
        180,
        False,
        FlightReport(FlightStatus.SCHEDULED, T0, T0 + timedelta(seconds=599)),
        Outcome.NOTHING,
        None,
    ),
    ("10 min late: the threshold", 0, 180, False, _at(10), Outcome.SHIFT, 10),
    ("10 min early", 0, 180, False, _at(-10), Outcome.SHIFT, -10),
    ("45 min late", 0, 180, False, _at(45), Outcome.SHIFT, 45),
    ("180 min late: the limit is inclusive", 0, 180, False, _at(180), Outcome.SHIFT, 180),
    ("181 min late: beyond", 0, 180, False, _at(181), Outcome.DISRUPTED, None),
    ("181 min early: beyond", 0, 180, False, _at(-181), Outcome.DISRUPTED, None),
    ("cumulative: +15 then +30", 15, 180, False, _at(30), Outcome.SHIFT, 30),
    ("cumulative: +15 then +20 is under the threshold", 15, 180, False, _at(20), Outcome.NOTHING, None),
    ("cumulative: +15 then +6 moves back 9: nothing", 15, 180, False, _at(6), Outcome.NOTHING, None),
    ("back to on time after +45", 45, 180, False, _at(0), Outcome.SHIFT, 0),
    ("from +45 to -30", 45, 180, False, _at(-30), Outcome.SHIFT, -30),
    ("from +170 to +200 with a limit of 180", 170, 180, False, _at(200), Outcome.DISRUPTED, None),
    ("limit 0: 10 min late is beyond", 0, 0, False, _at(10), Outcome.DISRUPTED, None),
    ("limit 0: 5 min late is nothing", 0, 0, False, _at(5), Outcome.NOTHING, None),
    ("limit 1440: 24 h late follows", 0, 1440, False, _at(1440), Outcome.SHIFT, 1440),
    ("cancelled", 0, 180, False, FlightReport(FlightStatus.CANCELLED, T0), Outcome.DISRUPTED, None),
    ("diverted", 0, 180, False, FlightReport(FlightStatus.DIVERTED, T0, T0 + 30 * M), Outcome.DISRUPTED, None),
    (
        "cancelled, already disrupted: said once",
        0,
        180,
        True,
        FlightReport(FlightStatus.CANCELLED, T0),
        Outcome.NOTHING,
        None,
    ),
    ("beyond, already disrupted", 0, 180, True, _at(300), Outcome.NOTHING, None),
    ("disrupted, then back within the limit: follows", 0, 180, True, _at(40), Outcome.SHIFT, 40),
    ("no data", 0, 180, False, NO_DATA, Outcome.NOTHING, None),
    ("scheduled without an estimate", 0, 180, False, FlightReport(FlightStatus.SCHEDULED, T0), Outcome.NOTHING, None),
    ("en route, 20 min late", 0, 180, False, _at(20, FlightStatus.EN_ROUTE), Outcome.SHIFT, 20),
    (
        "landed 25 min late (actual arrival)",
        0,
        180,
        False,
        FlightReport(FlightStatus.LANDED, T0, T0 + 20 * M, T0 + 25 * M),
        Outcome.SHIFT,
        25,
    ),
    ("estimate 25 h late: bad data, ignored", 0, 1440, False, _at(25 * 60), Outcome.IGNORED, None),
    ("estimate 3 days early: bad data, ignored", 0, 180, False, _at(-3 * 24 * 60), Outcome.IGNORED, None),
    (
        "naive estimate: unparsable, ignored",
        0,
        180,
        False,
        FlightReport(FlightStatus.SCHEDULED, T0, datetime(2026, 7, 1, 13, 0)),
        Outcome.IGNORED,
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "shift", "limit", "disrupted", "report", "outcome", "total"), DECISIONS, ids=[d[0] for d in DECISIONS]
)
def test_decide(
    case: str, shift: int, limit: int, disrupted: bool, report: FlightReport, outcome: Outcome, total: int | None
) -> None:
    for offset in (0, 35):  # the booked offset to the arrival is kept, whatever it is
        watched = _watched(shift, limit, disrupted, offset)
        decision = decide(watched, report)
        assert decision.outcome is outcome, case
        if total is None:
            assert decision.new_pickup_at is None
        else:
            assert decision.new_pickup_at == watched.original_pickup_at + total * M
            expected_reason = "FLIGHT_DELAY" if decision.new_pickup_at > watched.pickup_at else "FLIGHT_EARLY"
            assert decision.reason == expected_reason


def test_disruption_reasons() -> None:
    assert decide(_watched(), FlightReport(FlightStatus.CANCELLED, T0)) == Decision(
        Outcome.DISRUPTED, None, "CANCELLED"
    )
    assert decide(_watched(), FlightReport(FlightStatus.DIVERTED, T0)).reason == "DIVERTED"
    assert decide(_watched(), _at(500)).reason == "BEYOND_LIMIT"
    assert decide(_watched(), _at(0)).changes_booking is False
    assert decide(_watched(), _at(30)).changes_booking is True


def test_dst_change_between_booking_and_landing() -> None:
    """London leaves GMT for BST at 01:00 UTC on 2026-03-29. A flight scheduled 00:30 UTC (00:30 local) that
    lands at 01:00 UTC (02:00 local) is 30 minutes late, not 90: the pickup moves 30 minutes, and its local
    wall-clock time shows the new offset."""
    london = ZoneInfo("Europe/London")
    scheduled = datetime(2026, 3, 29, 0, 30, tzinfo=UTC)
    booked = scheduled + 15 * M
    watched = Watched(booked, booked, scheduled, 180, False)
    estimate = datetime(2026, 3, 29, 2, 0, tzinfo=london)  # as a provider gives it: local, with its offset
    decision = decide(watched, FlightReport(FlightStatus.SCHEDULED, scheduled, estimate))
    assert decision.outcome is Outcome.SHIFT
    assert decision.new_pickup_at == booked + 30 * M
    assert decision.new_pickup_at.astimezone(london).strftime("%H:%M %Z") == "02:15 BST"
    assert booked.astimezone(london).strftime("%H:%M %Z") == "00:45 GMT"
    # and the other way in autumn (BST -> GMT at 01:00 UTC on 2026-10-25): scheduled 01:10 UTC (01:10 GMT), the
    # estimate 01:50 BST (the first 01:50 of that night) is 00:50 UTC, 20 minutes early, though its wall-clock
    # time reads 40 minutes later
    scheduled = datetime(2026, 10, 25, 1, 10, tzinfo=UTC)
    watched = Watched(scheduled, scheduled, scheduled, 180, False)
    early = datetime(2026, 10, 25, 1, 50, tzinfo=london)
    decision = decide(watched, FlightReport(FlightStatus.SCHEDULED, scheduled, early))
    assert (decision.outcome, decision.reason) == (Outcome.SHIFT, "FLIGHT_EARLY")
    assert decision.new_pickup_at == scheduled - 20 * M


SCHEDULE = [
    ("at creation, days ahead: wait for 6 h before", T0 - timedelta(days=3), FlightStatus.SCHEDULED, T0 - 6 * 60 * M),
    ("exactly 6 h before: next in 30 min", T0 - 6 * 60 * M, FlightStatus.SCHEDULED, T0 - 330 * M),
    ("1 h 10 before: the 1 h slot comes first", T0 - 70 * M, FlightStatus.SCHEDULED, T0 - 60 * M),
    ("1 h before: every 5 min", T0 - 60 * M, FlightStatus.SCHEDULED, T0 - 55 * M),
    ("after the arrival, not landed: every 5 min", T0 + 30 * M, FlightStatus.EN_ROUTE, T0 + 35 * M),
    ("1 h 58 after: the last slot at 2 h", T0 + 118 * M, FlightStatus.UNKNOWN, T0 + 120 * M),
    ("2 h after: over", T0 + 120 * M, FlightStatus.SCHEDULED, None),
    ("landed: over", T0 - 10 * M, FlightStatus.LANDED, None),
    ("cancelled: over", T0 - 300 * M, FlightStatus.CANCELLED, None),
    ("diverted: over", T0, FlightStatus.DIVERTED, None),
]


@pytest.mark.parametrize(("case", "now", "status", "expected"), SCHEDULE, ids=[s[0] for s in SCHEDULE])
def test_watch_schedule(case: str, now: datetime, status: FlightStatus, expected: datetime | None) -> None:
    assert next_check(now, T0, status) == expected, case


def test_delay_minutes() -> None:
    assert delay_minutes(_at(45), T0) == 45
    assert delay_minutes(_at(-20), T0) == -20
    assert delay_minutes(NO_DATA, T0) is None
    assert delay_minutes(_at(5), None) is None
