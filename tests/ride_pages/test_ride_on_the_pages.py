"""The ride on the pages (docs/rules/ride.md#tracking-page, #driver-page), over real HTTP on the session's
database: the driver page's buttons as plain form posts (no JavaScript) go through the reverse API's use
case (its rules and refusals, word for word), its positions too; the traveller's page follows the stage,
shows the last position in words while the ride is on, and drops the phone and the position when it ends.
The BookingResource's ``ride.tracking_url`` is the page's address."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from tests.conftest import ClientFactory, bearer
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import BOOKING, DRIVER, Ride, accept, book_hosted, services_of
from tests.ride_pages.test_driver_link import booking_id
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.tracking import repository as links
from transfers.tracking.rules import driver_url

GLA = (55.8719, -4.4331)


@pytest.fixture
async def client_key(make_client: ClientFactory) -> str:
    return (await make_client())[1]


@pytest.fixture
async def ride(http: httpx.AsyncClient, client_key: str, make_hosted: HostedFactory, db: Database) -> Ride:
    partner_id = await make_hosted(airports=("GLA",), name="Ride Page Cars")
    return await book_hosted(http, client_key, "Ride Page Cars", db, partner_id)


async def driver_link(db: Database, ride: Ride, clock: ShiftedClock) -> str:
    async with db.write() as conn:
        link = await links.issue_driver_link(conn, await booking_id(db, ride), actor="tests", now=clock.now())
    return f"/d/{link.token}"


async def test_tracking_url_is_in_the_booking_resource(
    http: httpx.AsyncClient, ride: Ride, client_key: str, settings: Settings
) -> None:
    assert ride.booking["ride"]["tracking_url"] == f"{settings.service_url}/t/{ride.token}"  # the create's answer
    seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(client_key))).json()
    assert seen["ride"]["tracking_url"] == f"{settings.service_url}/t/{ride.token}"
    assert driver_url(settings.service_url, "x").startswith(settings.service_url)


async def test_a_whole_ride_from_the_driver_page_without_javascript(
    http: httpx.AsyncClient, ride: Ride, client_key: str, db: Database, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=40) - clock.now()
    page = await driver_link(db, ride, clock)
    track = f"/t/{ride.token}.json"

    sent = await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_PICKUP", "lat": "", "lng": ""})
    assert sent.status_code == 303 and sent.headers["location"] == f"{page}?done=DRIVER_DEPARTED_TO_PICKUP"
    again = await http.get(sent.headers["location"])
    assert "Sent: you are on your way." in again.text and "I&#39;m at the pickup" in again.text
    assert (await http.get(track)).json()["stage"] == "EN_ROUTE_TO_PICKUP"

    # The script's position, ~3 km from the airport: stamped with the service's clock, whatever the phone says.
    at = (clock.now() + timedelta(days=400)).isoformat()
    posted = await http.post(f"{page}/positions", json={"lat": 55.8900, "lng": -4.3900, "at": at})
    assert posted.status_code == 200 and posted.json() == {"status": "Success", "accepted": 1}
    clock.offset += timedelta(minutes=2, seconds=5)
    facts = (await http.get(track)).json()
    assert facts["position"]["minutes_ago"] == 2 and 2.0 < facts["position"]["km_from_pickup"] < 4.0
    html = (await http.get(f"/t/{ride.token}")).text
    assert "Updated 2 min ago, about" in html and "km from the pickup point" in html and "<svg" in html

    # The reverse API's own refusals, in its words: a position with one coordinate, a bad body.
    refused = await http.post(f"{page}/positions", json={"lat": 55.89, "at": at})
    assert refused.status_code == 422 and "both or neither" in refused.json()["message"]
    assert (await http.post(f"{page}/positions", content=b"[1, 2")).status_code == 422
    assert (await http.post(f"{page}/positions", json=[1])).status_code == 422

    arrived = await http.post(
        f"{page}/events", data={"type": "DRIVER_ARRIVED_AT_PICKUP", "lat": "55.8719", "lng": "-4.4331"}
    )
    assert arrived.status_code == 303
    # The no-show before the free waiting time: refused with the rule's words, nothing recorded.
    early = await http.post(f"{page}/events", data={"type": "CUSTOMER_NO_SHOW"})
    assert early.status_code == 422 and "free_wait_until" in early.text
    assert (await http.get(track)).json()["stage"] == "AT_PICKUP"
    bad = await http.post(f"{page}/events", data={"type": "TELEPORTED"})
    assert bad.status_code == 422 and "type: must be one of" in bad.text
    odd = await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_DROPOFF", "lat": "91", "lng": "0"})
    assert odd.status_code == 422 and "lat: must be a number from -90 to 90" in odd.text

    assert (await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_DROPOFF"})).status_code == 303
    assert (await http.get(track)).json()["stage"] == "ON_BOARD"
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_ARRIVED_AT_DROPOFF"})).status_code == 303
    facts = (await http.get(track)).json()
    assert facts["status"] == "COMPLETED" and facts["stage"] == "DROPPED_OFF"
    assert facts["position"] is None and facts["driver"]["phone"] is None  # the ride ended
    assert DRIVER.phone not in (await http.get(f"/t/{ride.token}")).text
    done = await http.get(page)
    assert "Ride finished" in done.text and 'class="step"' not in done.text
    # Once the ride is over, positions are refused (the reverse API's rule), past the link's 3 s pace.
    clock.offset += timedelta(seconds=3)
    late = await http.post(f"{page}/positions", json={"lat": 55.86, "lng": -4.25, "at": clock.now().isoformat()})
    assert late.status_code == 422

    seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(client_key))).json()
    assert [e["type"] for e in seen["ride"]["events"]] == [
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
        "DRIVER_ARRIVED_AT_DROPOFF",
    ]
    assert seen["ride"]["events"][1]["lat"] == GLA[0]


async def test_a_revoked_or_closed_link_records_nothing(
    http: httpx.AsyncClient, ride: Ride, db: Database, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=30) - clock.now()
    page = await driver_link(db, ride, clock)
    async with db.write() as conn:
        await links.revoke_driver_link(conn, await booking_id(db, ride), now=clock.now())
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_PICKUP"})).status_code == 410
    at = clock.now().isoformat()
    assert (await http.post(f"{page}/positions", json={"lat": 55.86, "lng": -4.25, "at": at})).status_code == 410
    assert (await http.get(f"/t/{ride.token}.json")).json()["stage"] == "NOT_STARTED"
