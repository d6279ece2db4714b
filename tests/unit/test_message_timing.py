"""Messages' timing, pure (docs/rules/messages.md#timing): quiet hours at the pickup airport's wall clock
(daylight-saving nights included), the 12 h exception, the reminder's due time and who gets one, the
expiry per template, the revisions and the dedupe key, the SMS limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from transfers.messages import timing
from transfers.reference.airports import find_airport

LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")
FAR = datetime(2027, 6, 1, 12, 0, tzinfo=UTC)  # a pickup far enough that quiet hours always wait


def utc(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_the_airports_reference_gives_the_zone() -> None:
    airport = find_airport("LHR")
    assert airport is not None and airport.tz == LONDON


@pytest.mark.parametrize(
    ("due", "tz", "expected"),
    [
        # summer, London (UTC+1): 21:59 local is daytime, 22:00 local waits for 07:00 local = 06:00 UTC
        (utc(2026, 7, 1, 20, 59), LONDON, utc(2026, 7, 1, 20, 59)),
        (utc(2026, 7, 1, 21, 0), LONDON, utc(2026, 7, 2, 6, 0)),
        (utc(2026, 7, 2, 3, 0), LONDON, utc(2026, 7, 2, 6, 0)),  # 04:00 local: the same night's end
        (utc(2026, 7, 2, 5, 59), LONDON, utc(2026, 7, 2, 6, 0)),
        (utc(2026, 7, 2, 6, 0), LONDON, utc(2026, 7, 2, 6, 0)),  # 07:00 local: day
        # winter, London (UTC+0)
        (utc(2026, 1, 10, 22, 0), LONDON, utc(2026, 1, 11, 7, 0)),
        # the night clocks go back (25 Oct 2026, 02:00 BST -> 01:00 GMT): 23:30 BST waits until 07:00 GMT
        (utc(2026, 10, 24, 22, 30), LONDON, utc(2026, 10, 25, 7, 0)),
        # the night clocks go forward (29 Mar 2026, 01:00 GMT -> 02:00 BST): 00:30 GMT waits until 07:00 BST
        (utc(2026, 3, 29, 0, 30), LONDON, utc(2026, 3, 29, 6, 0)),
        (utc(2026, 3, 28, 22, 30), LONDON, utc(2026, 3, 29, 6, 0)),
        # New York's spring-forward night (8 Mar 2026): 23:00 EST (04:00 UTC) -> 07:00 EDT (11:00 UTC)
        (utc(2026, 3, 8, 4, 0), NEW_YORK, utc(2026, 3, 8, 11, 0)),
        # an airport without a zone: no quiet hours rather than guessed ones
        (utc(2026, 7, 1, 23, 0), None, utc(2026, 7, 1, 23, 0)),
    ],
)
def test_quiet_hours_wait_for_seven_at_the_airport(due: datetime, tz: ZoneInfo | None, expected: datetime) -> None:
    assert timing.after_quiet_hours(due, tz, FAR) == expected


def test_sent_at_once_when_seven_is_later_than_12_hours_before_pickup() -> None:
    due = utc(2026, 7, 1, 22, 0)  # 23:00 in London; 07:00 there is 06:00 UTC
    assert timing.after_quiet_hours(due, LONDON, utc(2026, 7, 2, 17, 59)) == due  # 12 h before: 05:59
    assert timing.after_quiet_hours(due, LONDON, utc(2026, 7, 2, 18, 0)) == utc(2026, 7, 2, 6, 0)  # exactly 12 h


@pytest.mark.parametrize(
    ("template", "event_at", "expected"),
    [
        ("confirmed", utc(2026, 7, 1, 22, 0), utc(2026, 7, 2, 6, 0)),  # quiet hours
        ("confirmed", utc(2026, 7, 1, 12, 0), utc(2026, 7, 1, 12, 0)),
        ("driver_changed", utc(2026, 7, 1, 22, 0), utc(2026, 7, 1, 22, 2)),  # 2 min later, at any hour
        ("pickup_moved", utc(2026, 7, 1, 23, 0), utc(2026, 7, 1, 23, 0)),
        ("driver_arrived", utc(2026, 7, 1, 23, 0), utc(2026, 7, 1, 23, 0)),
        ("cancelled", utc(2026, 7, 1, 23, 0), utc(2026, 7, 1, 23, 0)),
        ("feedback", utc(2026, 7, 1, 23, 0), utc(2026, 7, 2, 0, 0)),  # 1 h after the drop-off
        ("reminder", utc(2026, 7, 1, 23, 0), FAR - timedelta(hours=24)),
    ],
)
def test_due_per_template(template: str, event_at: datetime, expected: datetime) -> None:
    assert timing.due_at(template, event_at=event_at, pickup_at=FAR, tz=LONDON) == expected


def test_the_reminder() -> None:
    pickup = utc(2026, 7, 10, 12, 0)  # 13:00 in London
    assert timing.reminder_due(pickup, LONDON) == utc(2026, 7, 9, 12, 0)
    night = utc(2026, 7, 10, 2, 0)  # 03:00 in London: 24 h before is in the night, 07:00 the day before waits
    assert timing.reminder_due(night, LONDON) == utc(2026, 7, 9, 6, 0)
    assert timing.reminder_wanted(created_at=pickup - timedelta(hours=24, seconds=1), pickup_at=pickup)
    assert not timing.reminder_wanted(created_at=pickup - timedelta(hours=24), pickup_at=pickup)
    assert not timing.reminder_wanted(created_at=pickup - timedelta(hours=3), pickup_at=pickup)


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("driver_arrived", utc(2026, 7, 1, 10, 30)),
        ("feedback", utc(2026, 7, 8, 10, 0)),
        ("pickup_moved", FAR),
        ("confirmed", FAR),
        ("reminder", FAR),
        ("driver_changed", FAR),
        ("cancelled", FAR),
    ],
)
def test_expiry_per_template(template: str, expected: datetime) -> None:
    assert timing.expires_at(template, event_at=utc(2026, 7, 1, 10, 0), pickup_at=FAR) == expected


def test_revisions_and_the_dedupe_key() -> None:
    args = {"driver_name": "Ana", "driver_plate": "AB 123"}
    assert timing.revision("pickup_moved", pickup_at=utc(2026, 7, 1, 14, 5), **args) == "202607011405"
    moved = timing.revision(
        "pickup_moved", pickup_at=datetime(2026, 7, 1, 16, 5, tzinfo=ZoneInfo("Europe/Paris")), **args
    )
    assert moved == "202607011405"  # the same instant in another zone is the same revision
    first = timing.revision("driver_changed", pickup_at=FAR, **args)
    assert first == timing.revision("driver_changed", pickup_at=FAR, driver_name=" ana ", driver_plate="ab  123")
    assert first != timing.revision("driver_changed", pickup_at=FAR, driver_name="Ana", driver_plate="AB 124")
    assert "Ana" not in first and len(first) == 16
    for template in ("confirmed", "reminder", "driver_arrived", "cancelled", "feedback"):
        assert timing.revision(template, pickup_at=FAR, **args) == "1"
    assert timing.dedupe_key(42, "reminder", "sms", "1") == "42:reminder:sms:1"


def test_at_most_8_sms_per_booking() -> None:
    assert not timing.sms_over_limit(["sent"] * 7)
    assert timing.sms_over_limit(["sent"] * 8)
    assert timing.sms_over_limit(["sent"] * 4 + ["delivered", "failed", "scheduled"], planned_now=1)
    assert not timing.sms_over_limit(["sent"] * 7 + ["skipped", "suppressed", "expired"] * 3)
