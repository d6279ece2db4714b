"""Which messages an event calls for, pure (docs/rules/messages.md#templates): every template's trigger
and its channels, who cancelled, the first approval, the settings and the booking's switches, the
address checks, opt-outs, expiry at planning, the SMS limit, the superseded move or driver, feedback."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from transfers.messages import planning
from transfers.messages.planning import BookingFacts, Event, Settings

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # 13:00 in London
PICKUP = NOW + timedelta(days=3)
APPROVED_AT = NOW - timedelta(hours=1)
BOTH = Settings(frozenset({"email", "sms"}))
BOOKING = BookingFacts(
    id=7,
    client_id=3,
    pickup_at=PICKUP,
    created_at=NOW - timedelta(days=5),
    tz=ZoneInfo("Europe/London"),
    email="Ann@Example.com",
    phone="+447911123456",
    language="de",
    approved_at=APPROVED_AT,
    status="APPROVED",
    driver_name="Ana",
    driver_plate="AB 123",
)


def status(to: str, before: str, at: datetime = NOW) -> Event:
    return Event(1, planning.STATUS_CHANGED, at, status=to, previous_status=before)


def driver_event(kind: str, occurred: datetime = NOW) -> Event:
    return Event(
        1,
        planning.DRIVER_EVENT,
        NOW,
        status="APPROVED",
        data={"event": {"type": kind, "occurred_at": occurred.isoformat()}},
    )


def plan(
    event: Event, booking: BookingFacts = BOOKING, settings: Settings = BOTH, **kw: Any
) -> list[tuple[str, str, str]]:
    rows = planning.plan_event(event, booking, settings, now=NOW, **kw)
    return [(r.template, r.channel, r.status if r.reason is None else f"{r.status}:{r.reason}") for r in rows]


@pytest.mark.parametrize(
    ("event", "booking", "expected"),
    [
        # confirmed: the approval, e-mail only
        (status("APPROVED", "PENDING_APPROVAL"), {}, [("confirmed", "email", "scheduled")]),
        (status("APPROVED", "PENDING"), {}, [("confirmed", "email", "scheduled")]),
        (status("PENDING_APPROVAL", "PENDING"), {"approved_at": None}, []),
        # cancelled: by the partner or an operator after the approval; never the client's own
        (
            status("CANCELLED", "APPROVED"),
            {"cancelled_by": "partner"},
            [("cancelled", "email", "scheduled"), ("cancelled", "sms", "scheduled")],
        ),
        (
            status("CANCELLED", "APPROVED"),
            {"cancelled_by": "operator"},
            [("cancelled", "email", "scheduled"), ("cancelled", "sms", "scheduled")],
        ),
        (status("CANCELLED", "APPROVED"), {"cancelled_by": "client"}, []),
        # ... and not before the booking was ever approved (the agency rebooks)
        (status("CANCELLED", "PENDING_APPROVAL"), {"cancelled_by": "partner", "approved_at": None}, []),
        (status("DECLINED", "PENDING_APPROVAL"), {"approved_at": None}, []),
        (status("FAILED", "PENDING"), {"approved_at": None}, []),
        # DECLINED / FAILED after a first approval (the rule, whatever path got there)
        (
            status("DECLINED", "PENDING_APPROVAL"),
            {},
            [("cancelled", "email", "scheduled"), ("cancelled", "sms", "scheduled")],
        ),
        (status("FAILED", "PENDING"), {}, [("cancelled", "email", "scheduled"), ("cancelled", "sms", "scheduled")]),
        (status("COMPLETED", "APPROVED"), {}, []),
        # driver_changed: after the first approval only (the approval's own driver is in ``confirmed``)
        (
            Event(1, planning.DRIVER_UPDATED, NOW),
            {},
            [("driver_changed", "email", "scheduled"), ("driver_changed", "sms", "scheduled")],
        ),
        (Event(1, planning.DRIVER_UPDATED, APPROVED_AT), {}, []),
        (Event(1, planning.DRIVER_UPDATED, NOW), {"approved_at": None}, []),
        # pickup_moved: after the first approval
        (
            Event(1, planning.PICKUP_MOVED, NOW, pickup_at=PICKUP),
            {},
            [("pickup_moved", "email", "scheduled"), ("pickup_moved", "sms", "scheduled")],
        ),
        (Event(1, planning.PICKUP_MOVED, NOW), {"approved_at": None}, []),
        # driver events: the arrival by SMS; others nothing (feedback: its switch, below)
        (driver_event("DRIVER_ARRIVED_AT_PICKUP"), {}, [("driver_arrived", "sms", "scheduled")]),
        (driver_event("DRIVER_DEPARTED_TO_PICKUP"), {}, []),
        (driver_event("DRIVER_ARRIVED_AT_DROPOFF"), {}, []),
        (Event(1, "booking.created", NOW), {}, []),
        (Event(1, "booking.amendment_applied", NOW), {}, []),
    ],
)
def test_triggers(event: Event, booking: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert plan(event, dataclasses.replace(BOOKING, **booking)) == expected


def test_a_row_carries_everything_it_is_written_with() -> None:
    (email, sms) = planning.plan_event(Event(1, planning.DRIVER_UPDATED, NOW), BOOKING, BOTH, now=NOW)
    assert (email.booking_id, email.client_id, email.language) == (7, 3, "de")
    assert email.to_address == "Ann@Example.com" and sms.to_address == "+447911123456"
    assert email.scheduled_for == NOW + timedelta(minutes=2) and email.expires_at == PICKUP
    assert email.dedupe_key == f"7:driver_changed:email:{email.revision}" and len(email.revision) == 16
    assert sms.dedupe_key == f"7:driver_changed:sms:{email.revision}"


def test_the_settings_and_the_bookings_switches() -> None:
    approved = status("CANCELLED", "APPROVED")
    booking = dataclasses.replace(BOOKING, cancelled_by="partner")
    assert plan(approved, booking, Settings(frozenset())) == []  # off: nothing written
    assert plan(approved, booking, Settings(frozenset({"sms"}))) == [("cancelled", "sms", "scheduled")]
    off = dataclasses.replace(booking, channels_off=frozenset({"email"}))
    assert plan(approved, off) == [("cancelled", "email", "skipped:channel_off"), ("cancelled", "sms", "scheduled")]
    no_phone = dataclasses.replace(booking, phone=" ")
    assert plan(approved, no_phone) == [("cancelled", "email", "scheduled"), ("cancelled", "sms", "skipped:no_address")]


def test_opted_out_addresses_are_suppressed() -> None:
    event = Event(1, planning.DRIVER_UPDATED, NOW)
    stopped = {("email", "ann@example.com")}
    assert plan(event, stopped=stopped) == [
        ("driver_changed", "email", "suppressed:opted_out"),
        ("driver_changed", "sms", "scheduled"),
    ]
    assert plan(event, stopped={("sms", "+447911123456")})[1] == ("driver_changed", "sms", "suppressed:opted_out")


def test_expired_when_planned_too_late() -> None:
    late = dataclasses.replace(BOOKING, pickup_at=NOW + timedelta(minutes=1))  # the driver change would go after pickup
    assert plan(Event(1, planning.DRIVER_UPDATED, NOW), late) == [
        ("driver_changed", "email", "expired"),
        ("driver_changed", "sms", "expired"),
    ]
    arrived = driver_event("DRIVER_ARRIVED_AT_PICKUP", occurred=NOW - timedelta(minutes=30))
    assert plan(arrived) == [("driver_arrived", "sms", "expired")]
    (row,) = planning.plan_event(
        driver_event("DRIVER_ARRIVED_AT_PICKUP", NOW - timedelta(minutes=5)), BOOKING, BOTH, now=NOW
    )
    assert row.expires_at == NOW + timedelta(minutes=25) and row.scheduled_for == NOW - timedelta(minutes=5)


def test_the_ninth_sms_is_skipped() -> None:
    event = driver_event("DRIVER_ARRIVED_AT_PICKUP")
    seven = dataclasses.replace(BOOKING, sms_statuses=("sent",) * 6 + ("failed", "skipped", "expired", "suppressed"))
    assert plan(event, seven) == [("driver_arrived", "sms", "scheduled")]
    eight = dataclasses.replace(BOOKING, sms_statuses=("sent", "delivered") * 3 + ("scheduled", "failed"))
    assert plan(event, eight) == [("driver_arrived", "sms", "skipped:sms_limit")]


def test_only_the_latest_move_or_driver_is_news() -> None:
    older = Event(1, planning.PICKUP_MOVED, NOW, pickup_at=PICKUP - timedelta(minutes=40))
    assert plan(older) == []
    (email, _) = planning.plan_event(Event(2, planning.PICKUP_MOVED, NOW, pickup_at=PICKUP), BOOKING, BOTH, now=NOW)
    assert email.revision == PICKUP.strftime("%Y%m%d%H%M") and email.expires_at == PICKUP and email.scheduled_for == NOW
    replaced = Event(1, planning.DRIVER_UPDATED, NOW, driver_name="Bob", driver_plate="X 1")
    assert plan(replaced) == []
    current = Event(1, planning.DRIVER_UPDATED, NOW, driver_name="Ana", driver_plate="AB 123")
    assert len(plan(current)) == 2
    assert plan(Event(1, planning.DRIVER_UPDATED, NOW), dataclasses.replace(BOOKING, driver_name=None)) == []


def test_feedback_follows_its_own_switch() -> None:
    dropped = driver_event("DRIVER_ARRIVED_AT_DROPOFF", occurred=NOW - timedelta(minutes=10))
    assert plan(dropped, settings=Settings(frozenset({"email", "sms"}), feedback=False)) == []
    assert plan(dropped, settings=Settings(frozenset(), feedback=True)) == [("feedback", "email", "scheduled")]
    (row,) = planning.plan_event(dropped, BOOKING, Settings(frozenset(), feedback=True), now=NOW)
    assert row.scheduled_for == NOW + timedelta(minutes=50) and row.expires_at == NOW + timedelta(days=7, minutes=-10)
    off = dataclasses.replace(BOOKING, channels_off=frozenset({"email"}))
    assert plan(dropped, off, Settings(frozenset(), feedback=True)) == [("feedback", "email", "skipped:channel_off")]


def test_confirmed_waits_for_the_morning() -> None:
    night = datetime(2026, 7, 1, 22, 30, tzinfo=UTC)  # 23:30 in London
    (row,) = planning.plan_event(status("APPROVED", "PENDING", at=night), BOOKING, BOTH, now=night)
    assert row.scheduled_for == datetime(2026, 7, 2, 6, 0, tzinfo=UTC)


def test_the_reminder() -> None:
    rows = planning.plan_reminder(BOOKING, BOTH, now=NOW)
    assert [(r.template, r.channel, r.status, r.revision) for r in rows] == [
        ("reminder", "email", "scheduled", "1"),
        ("reminder", "sms", "scheduled", "1"),
    ]
    assert rows[0].scheduled_for == PICKUP - timedelta(hours=24) and rows[0].expires_at == PICKUP
    late = dataclasses.replace(BOOKING, created_at=PICKUP - timedelta(hours=20))
    assert planning.plan_reminder(late, BOTH, now=NOW) == []


def test_every_template_has_its_channels() -> None:
    assert planning.CHANNELS == {
        "confirmed": ("email",),
        "reminder": ("email", "sms"),
        "driver_changed": ("email", "sms"),
        "pickup_moved": ("email", "sms"),
        "driver_arrived": ("sms",),
        "cancelled": ("email", "sms"),
        "feedback": ("email",),
    }
    assert {"driver_changed", "pickup_moved", "driver_arrived", "cancelled"} == planning.FAILURE_REPORTED
