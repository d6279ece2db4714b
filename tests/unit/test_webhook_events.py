"""Which client events a booking change yields (``client_events/events.py``), table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import booking_row
from transfers.bookings.models import Booking
from transfers.client_events.events import EventType, events_of, matches

T = EventType
DRIVER = {"driver_name": "Jo", "driver_phone": "+33612345679", "driver_plate": "AB-1", "meeting_point": None}
NO_DRIVER = dict.fromkeys(DRIVER)


@pytest.mark.parametrize(
    ("booking", "from_status", "to_status", "previous", "expected"),
    [
        ({}, None, "PENDING", None, [(T.BOOKING_CREATED, None)]),
        ({}, "PENDING", "PENDING_APPROVAL", None, [(T.BOOKING_STATUS_CHANGED, "PENDING")]),
        (
            DRIVER,
            "PENDING_APPROVAL",
            "APPROVED",
            NO_DRIVER,
            [(T.BOOKING_STATUS_CHANGED, "PENDING_APPROVAL"), (T.BOOKING_DRIVER_UPDATED, None)],
        ),
        ({**DRIVER, "driver_plate": "ZZ-9"}, "APPROVED", "APPROVED", DRIVER, [(T.BOOKING_DRIVER_UPDATED, None)]),
        (DRIVER, "APPROVED", "APPROVED", DRIVER, []),  # a repeat of the same driver: nothing
        (DRIVER, "APPROVED", "CANCELLED", DRIVER, [(T.BOOKING_STATUS_CHANGED, "APPROVED")]),
        ({"amendment": {"status": "PENDING"}}, "APPROVED", "APPROVED", {"amendment": None}, []),
        (
            {"amendment": {"status": "APPLIED"}},
            "APPROVED",
            "APPROVED",
            {"amendment": {"status": "PENDING"}},
            [(T.BOOKING_AMENDMENT_APPLIED, None)],
        ),
        (
            {"amendment": {"status": "REJECTED"}},
            "APPROVED",
            "CANCELLED",
            {"amendment": {"status": "PENDING"}},
            [(T.BOOKING_STATUS_CHANGED, "APPROVED"), (T.BOOKING_AMENDMENT_REJECTED, None)],
        ),
        (
            {"amendment": {"status": "APPLIED"}},
            "APPROVED",
            "COMPLETED",
            {"amendment": {"status": "APPLIED"}},
            [(T.BOOKING_STATUS_CHANGED, "APPROVED")],
        ),
    ],
)
def test_events_of_a_change(
    booking: dict[str, Any],
    from_status: str | None,
    to_status: str,
    previous: dict[str, Any] | None,
    expected: list[tuple[EventType, str | None]],
) -> None:
    def typed(columns: dict[str, Any]) -> Booking:
        return Booking.new({**booking_row(), **NO_DRIVER, "amendment": None, **columns}, 7)

    moved, before = typed(booking), None if previous is None else typed(previous)
    assert [(e.type, e.previous_status) for e in events_of(moved, from_status, to_status, before)] == expected


def test_subscriptions() -> None:
    assert matches(["*"], "booking.created") and matches(["booking.created"], "booking.created")
    assert not matches(["booking.status_changed"], "booking.created")
    assert matches(["booking.created"], "ping")  # a test ping reaches whatever the endpoint chose


def test_the_sdk_knows_exactly_the_services_event_types() -> None:
    """A new client event type is added to the SDK too (docs/architecture/how-to-add.md)."""
    from transfers_sdk.webhooks import EVENT_TYPES

    assert set(EVENT_TYPES) == {event.value for event in EventType}
