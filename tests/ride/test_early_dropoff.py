"""A ride cannot end hours before it starts (docs/rules/ride.md#event-rules): the two drop-off-side events
more than 60 min before the booking's current pickup are refused through the reverse API, with the rule's
422 and nothing written: the booking stays APPROVED, the client may still cancel, and the partner's
statement gets no ``RIDE`` line. The driver page's door is tested beside the page
(tests/ride_pages/test_early_dropoff_page.py); the sandbox partner's compressed rides, played days before
the pickup, stay accepted (tests/ride/test_sandbox_ride.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from tests.conftest import bearer
from tests.ride.conftest import Ride
from tests.ride.test_reverse_events import SUCCESS, rows_of
from transfers.db.engine import Database
from transfers.db.tables import bookings, journal_entries

DROPOFF_SIDE = ("DRIVER_DEPARTED_TO_DROPOFF", "DRIVER_ARRIVED_AT_DROPOFF")


async def ride_lines(db: Database, reservation_no: str) -> int:
    """The booking's ``RIDE`` journal entries: the partner's statement line for a completed ride."""
    async with db.read() as conn:
        found = await conn.execute(
            select(func.count())
            .select_from(journal_entries.join(bookings, bookings.c.id == journal_entries.c.booking_id))
            .where(bookings.c.reservation_no == reservation_no, journal_entries.c.kind == "RIDE")
        )
        return int(found.scalar_one())


@pytest.mark.parametrize("kind", DROPOFF_SIDE)
async def test_a_drop_off_side_event_hours_before_the_pickup_is_refused(ride: Ride, db: Database, kind: str) -> None:
    ride.at(-timedelta(hours=3))
    refused = await ride.event(kind)
    assert refused.status_code == 422
    when = ride.pickup_at.isoformat()
    assert refused.json() == {
        "status": "Error",
        "message": f"{kind}: occurred_at must not be more than 60 min before the pickup ({when})",
    }
    booking = await ride.booking()
    assert booking["status"] == "APPROVED" and booking["ride"]["stage"] == "NOT_STARTED"
    assert (await rows_of(db, ride.reservation_no))[0] == []
    assert await ride_lines(db, ride.reservation_no) == 0


async def test_the_limit_is_60_minutes_before_the_pickup_by_occurred_at(ride: Ride, db: Database) -> None:
    """Judged on ``occurred_at``, not on when it is received: a queued report sent late keeps its time."""
    ride.at(timedelta(minutes=5))
    early = ride.pickup_at - timedelta(minutes=60, seconds=1)
    refused = await ride.event("DRIVER_ARRIVED_AT_DROPOFF", early)
    assert refused.status_code == 422 and "60 min before the pickup" in refused.json()["message"]
    assert (await ride.event("DRIVER_DEPARTED_TO_DROPOFF", ride.pickup_at - timedelta(minutes=60))).json() == SUCCESS
    assert (await ride.booking())["status"] == "APPROVED"
    ended = await ride.event("DRIVER_ARRIVED_AT_DROPOFF", ride.pickup_at - timedelta(minutes=59))
    assert ended.json() == SUCCESS
    assert (await ride.booking())["status"] == "COMPLETED"
    assert await ride_lines(db, ride.reservation_no) == 1


async def test_the_pickup_side_events_keep_the_24_hour_window(ride: Ride) -> None:
    """Only the drop-off side moved: a driver may leave for the pickup hours before it."""
    ride.at(-timedelta(hours=3))
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).json() == SUCCESS
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).json() == SUCCESS
    assert (await ride.booking())["ride"]["stage"] == "AT_PICKUP"


async def test_the_client_may_still_cancel_after_a_refused_drop_off(ride: Ride) -> None:
    ride.at(-timedelta(hours=3))
    assert (await ride.event("DRIVER_ARRIVED_AT_DROPOFF")).status_code == 422
    quote = await ride.http.get(
        "/api/v1/booking-api/booking/cancellation-quote",
        params={"reservation_no": ride.reservation_no},
        headers=bearer(ride.client_key),
    )
    assert quote.status_code == 200 and quote.json()["cancelable"] is True, quote.text
