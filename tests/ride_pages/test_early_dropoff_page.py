"""The driver page's door to docs/rules/ride.md#event-rules: its buttons go through the ride's own rule, so
"Passenger on board" and "Arrived at the drop-off" pressed more than 60 min before the pickup are refused
with the rule's words (422, the page again), nothing written, the booking still APPROVED and no ``RIDE``
line on the partner's statement. The reverse API's door: tests/ride/test_early_dropoff.py."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from tests.conftest import ClientFactory, bearer
from tests.hosted.conftest import HostedFactory
from tests.ride.test_early_dropoff import ride_lines
from tests.ride_pages.helpers import BOOKING, Ride, accept, book_hosted, services_of
from tests.ride_pages.test_ride_on_the_pages import driver_link
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


@pytest.fixture
async def client_key(make_client: ClientFactory) -> str:
    return (await make_client())[1]


@pytest.fixture
async def ride(http: httpx.AsyncClient, client_key: str, make_hosted: HostedFactory, db: Database) -> Ride:
    partner_id = await make_hosted(airports=("GLA",), name="Early Drop Cars")
    return await book_hosted(http, client_key, "Early Drop Cars", db, partner_id)


async def test_the_drop_off_buttons_hours_before_the_pickup_are_refused(
    http: httpx.AsyncClient, ride: Ride, client_key: str, db: Database, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(hours=3) - clock.now()
    page = await driver_link(db, ride, clock)

    # The pickup side is open as before: the driver may set off and wait early.
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_PICKUP"})).status_code == 303
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_ARRIVED_AT_PICKUP"})).status_code == 303
    for kind in ("DRIVER_DEPARTED_TO_DROPOFF", "DRIVER_ARRIVED_AT_DROPOFF"):
        refused = await http.post(f"{page}/events", data={"type": kind})
        assert refused.status_code == 422, refused.text
        assert f"Not sent: {kind}: occurred_at must not be more than 60 min before the pickup" in refused.text
    seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(client_key))).json()
    assert seen["status"] == "APPROVED" and seen["ride"]["stage"] == "AT_PICKUP"
    assert (await http.get(f"/t/{ride.token}.json")).json()["stage"] == "AT_PICKUP"
    assert await ride_lines(db, ride.reservation_no) == 0

    # Within the hour before the pickup the same buttons are taken, and the ride ends.
    clock.offset += timedelta(hours=2, minutes=1)
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_DROPOFF"})).status_code == 303
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_ARRIVED_AT_DROPOFF"})).status_code == 303
    seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(client_key))).json()
    assert seen["status"] == "COMPLETED"
    assert await ride_lines(db, ride.reservation_no) == 1
