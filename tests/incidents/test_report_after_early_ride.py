"""An incident after a ride that ended before its booked pickup (docs/rules/incidents.md#report): the window
opens at the pickup time or at the moment the booking became COMPLETED, whichever is earlier, and still
closes 72 h after the pickup. The rule itself, table-driven, and the whole path over real HTTP on the
injected clock (a driver's ``DRIVER_ARRIVED_AT_DROPOFF`` 30 min before the pickup)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import row_of
from tests.incidents.helpers import approved_ride, at, counts, driver_event, report
from transfers.bookings.state import BookingStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.errors import Refused
from transfers.incidents.rules import check_reportable, report_opens

PICKUP = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
EARLY = PICKUP - timedelta(minutes=30)


@pytest.mark.parametrize(
    ("status", "completed_at", "now", "allowed"),
    [
        (BookingStatus.COMPLETED, EARLY, EARLY - timedelta(seconds=1), False),
        (BookingStatus.COMPLETED, EARLY, EARLY, True),
        (BookingStatus.COMPLETED, EARLY, PICKUP - timedelta(minutes=1), True),
        (BookingStatus.COMPLETED, EARLY, PICKUP + timedelta(hours=72), True),
        (BookingStatus.COMPLETED, EARLY, PICKUP + timedelta(hours=72, seconds=1), False),
        (BookingStatus.COMPLETED, PICKUP + timedelta(hours=1), PICKUP, True),  # completed late: from the pickup
        (BookingStatus.COMPLETED, PICKUP + timedelta(hours=1), PICKUP - timedelta(seconds=1), False),
        (BookingStatus.COMPLETED, None, PICKUP - timedelta(minutes=1), False),
        (BookingStatus.APPROVED, EARLY, PICKUP - timedelta(minutes=1), False),  # not COMPLETED: the pickup counts
        (BookingStatus.CANCELLED, EARLY, PICKUP + timedelta(hours=1), False),
    ],
    ids=[
        "before-completion",
        "at-completion",
        "after-completion-before-pickup",
        "72h-after-pickup",
        "past-72h",
        "late-completion-at-pickup",
        "late-completion-before-pickup",
        "completed-unknown-before-pickup",
        "approved-before-pickup",
        "cancelled",
    ],
)
def test_the_window_opens_at_the_earlier_of_pickup_and_completion(
    status: BookingStatus, completed_at: datetime | None, now: datetime, allowed: bool
) -> None:
    if allowed:
        check_reportable(status, PICKUP, now, completed_at)
    else:
        with pytest.raises(Refused):
            check_reportable(status, PICKUP, now, completed_at)


def test_report_opens_is_the_earlier_moment() -> None:
    assert report_opens(PICKUP, EARLY) == EARLY
    assert report_opens(PICKUP, PICKUP + timedelta(hours=2)) == PICKUP
    assert report_opens(PICKUP, None) == PICKUP


async def test_a_ride_completed_before_its_pickup_takes_an_incident_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, partner_key, reservation_no, row = await approved_ride(http, db, make_client, make_partner)
    body = {"type": "WRONG_VEHICLE", "description": "a small car came"}
    at(clock, row["pickup_at"], -timedelta(minutes=45))
    still_approved = await report(http, key, reservation_no, body)
    assert (still_approved.status_code, still_approved.json()["code"]) == (422, "INCIDENT_NOT_ALLOWED")
    before = await counts(db, row["id"], reservation_no)
    assert before["incidents"] == 0
    at(clock, row["pickup_at"], -timedelta(minutes=30))
    await driver_event(http, partner_key, reservation_no, "DRIVER_ARRIVED_AT_DROPOFF", clock.now())
    assert (await row_of(db, reservation_no))["status"] == "COMPLETED"
    at(clock, row["pickup_at"], -timedelta(minutes=20))
    answer = await report(http, key, reservation_no, body)
    assert answer.status_code == 201, answer.text
    assert (answer.json()["type"], answer.json()["status"]) == ("WRONG_VEHICLE", "OPEN")
    assert (await counts(db, row["id"], reservation_no))["incidents"] == 1
