"""docs/rules/incidents.md#driver-no-show: a client's DRIVER_NO_SHOW is refunded at once only when the ride's
record can be trusted to show a missing driver: nothing on record says the driver came (no arrival, no
passenger on board, no drop-off), and the partner reports its rides (at least 80 % of its completed rides
of the last 30 days with all four milestones, judged from five of them). A partner that sends no driver
events would otherwise pay back every ride a client called a no-show: its reports wait for an operator."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest

from tests.api.test_cancellation_policies import book, pickup_in
from tests.conftest import ClientFactory, PartnerFactory
from tests.fake_partner import default_vehicles
from tests.helpers import row_of
from tests.incidents.helpers import PRICE, at, driver_event, report
from transfers.bookings.ride_field import RideEventType
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.incidents.rules import IncidentType, driver_no_show_decided

E = RideEventType
FOUR = (
    "DRIVER_DEPARTED_TO_PICKUP",
    "DRIVER_ARRIVED_AT_PICKUP",
    "DRIVER_DEPARTED_TO_DROPOFF",
    "DRIVER_ARRIVED_AT_DROPOFF",
)


@pytest.mark.parametrize(
    ("recorded", "completed", "covered", "decided"),
    [
        (frozenset(), 0, 0, True),  # a partner too new to judge: the traveller's word, as before
        (frozenset(), 4, 0, True),
        (frozenset({E.DRIVER_DEPARTED_TO_PICKUP}), 10, 10, True),  # set off, never arrived
        (frozenset(), 5, 4, True),  # exactly 80 %
        (frozenset(), 5, 3, False),  # 60 %: a missing arrival proves nothing
        (frozenset(), 100, 79, False),
        (frozenset(), 5, 0, False),  # a partner that sends no events
        (frozenset({E.DRIVER_ARRIVED_AT_PICKUP}), 10, 10, False),
        (frozenset({E.DRIVER_DEPARTED_TO_DROPOFF}), 10, 10, False),  # the passenger was on board
        (frozenset({E.DRIVER_ARRIVED_AT_DROPOFF}), 0, 0, False),  # and dropped off
    ],
)
def test_when_the_record_decides(
    recorded: frozenset[RideEventType], completed: int, covered: int, decided: bool
) -> None:
    assert driver_no_show_decided(IncidentType.DRIVER_NO_SHOW, recorded, completed, covered) is decided
    assert driver_no_show_decided(IncidentType.DRIVER_LATE, recorded, completed, covered) is False


async def partner_with_rides(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    events: tuple[str, ...],
) -> tuple[str, str, datetime]:
    """A partner with five completed rides that each reported ``events`` (ending with the drop-off), and a
    sixth APPROVED booking with nothing on record: (client key, its reservation number, its pickup)."""
    _, _, partner_key = await make_partner(
        vehicles=default_vehicles(str(PRICE)),
        create_status="APPROVED",
        driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"},
    )
    _, key = await make_client(balance="1000.00")
    numbers = [(await book(http, key, pickup_in(5)))["reservation_no"] for _ in range(6)]
    pickup_at = (await row_of(db, numbers[0]))["pickup_at"]
    at(clock, pickup_at, timedelta(minutes=10))
    for number in numbers[:5]:
        for i, kind in enumerate(events):
            await driver_event(http, partner_key, number, kind, pickup_at - timedelta(minutes=len(events) - i))
        assert (await row_of(db, number))["status"] == "COMPLETED"
    return key, numbers[5], pickup_at


async def test_a_partner_that_reports_no_arrivals_gets_an_operators_decision(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, disputed, pickup_at = await partner_with_rides(
        http, db, clock, make_client, make_partner, ("DRIVER_ARRIVED_AT_DROPOFF",)
    )
    at(clock, pickup_at, timedelta(minutes=50))
    answer = await report(http, key, disputed, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201, answer.text
    assert (answer.json()["status"], answer.json()["resolution"]) == ("OPEN", None)
    assert (await row_of(db, disputed))["status"] == "APPROVED"  # nothing refunded


async def test_a_partner_that_reports_its_rides_refunds_a_missing_driver_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, disputed, pickup_at = await partner_with_rides(http, db, clock, make_client, make_partner, FOUR)
    at(clock, pickup_at, timedelta(minutes=50))
    answer = await report(http, key, disputed, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201, answer.text
    incident = answer.json()
    assert (incident["status"], incident["resolution"]["refund"], incident["resolution"]["by"]) == (
        "RESOLVED",
        str(PRICE),
        "automatic",
    )
    assert (await row_of(db, disputed))["status"] == "REFUNDED"


async def test_a_passenger_on_board_is_never_a_driver_no_show_at_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """No arrival recorded, but the passenger boarded: the driver came. A fresh partner (nothing to judge its
    coverage on) would have refunded it before."""
    _, _, partner_key = await make_partner(
        vehicles=default_vehicles(str(PRICE)),
        create_status="APPROVED",
        driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"},
    )
    _, key = await make_client(balance="500.00")
    number = (await book(http, key, pickup_in(5)))["reservation_no"]
    pickup_at = (await row_of(db, number))["pickup_at"]
    at(clock, pickup_at, timedelta(minutes=5))
    await driver_event(http, partner_key, number, "DRIVER_DEPARTED_TO_DROPOFF", pickup_at)
    at(clock, pickup_at, timedelta(minutes=50))
    answer = await report(http, key, number, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["status"] == "OPEN"
    assert (await row_of(db, number))["status"] == "APPROVED"
