"""The traveller's page through the ride (docs/rules/ride.md#tracking-page) in Chromium at 390 x 844 and at
1280 px, with JavaScript on and off (the page has no script: both must read the same): the meeting point and
a way to call above the fold (the driver once the phone is shown, else the agency's support phone); on board,
the distance to the drop-off; after a no-show, what to do next; once the ride is over, no refresh and no
"updates every 30 seconds"."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import MEETING_POINT, Ride, accept, book_hosted, services_of
from tests.ride_pages.test_ride_on_the_pages import driver_link
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

SIZES = {"phone": ViewportSize(width=390, height=844), "desktop": ViewportSize(width=1280, height=900)}
AGENCY_PHONE = "+44 20 7946 0555"  # as an operator types it; shown as E.164
NEAR_GEORGE_SQUARE = {"lat": 55.8700, "lng": -4.2900}  # ~2.6 km from the drop-off, ~10 km from the airport


@pytest.fixture(
    params=[(s, js) for s in SIZES for js in (True, False)], ids=lambda p: f"{p[0]}-{'js' if p[1] else 'no-js'}"
)
async def page(request: pytest.FixtureRequest, browser: Browser) -> AsyncIterator[Page]:
    size, javascript = request.param
    context = await browser.new_context(viewport=SIZES[size], java_script_enabled=javascript)
    context.set_default_timeout(15_000)
    made = await context.new_page()
    yield made
    await context.close()


async def booked(
    http: httpx.AsyncClient, service: LiveServer, make_client: ClientFactory, make_hosted: HostedFactory, db: Database
) -> tuple[Ride, int]:
    client_id, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Ride Page Cars")
    ride = await book_hosted(http, key, "Ride Page Cars", db, partner_id)
    return ride, client_id


async def set_agency_phone(db: Database, clock: ShiftedClock, client_id: int) -> None:
    from transfers.clients import service as clients

    await clients.set_support_phone(db, clock, client_id, AGENCY_PHONE, actor="tests")


async def above_the_fold(page: Page, *texts: str) -> None:
    """Each text is on the first screen (only judged at the phone's 844 px: a desktop shows everything)."""
    if page.viewport_size != SIZES["phone"]:
        return
    for text in texts:
        box = await page.get_by_text(text, exact=False).first.bounding_box()
        assert box is not None and box["y"] + box["height"] <= SIZES["phone"]["height"], (text, box)


async def refreshes(page: Page) -> bool:
    return await page.locator('meta[http-equiv="refresh"]').count() > 0


async def press(http: httpx.AsyncClient, path: str, kind: str) -> None:
    answer = await http.post(f"{path}/events", data={"type": kind, "lat": "", "lng": ""})
    assert answer.status_code == 303, answer.text


async def test_before_the_phone_window_the_agency_is_called_and_the_meeting_point_is_first(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    ride, client_id = await booked(http, service, make_client, make_hosted, db)
    await accept(services_of(service), ride)
    await set_agency_phone(db, clock, client_id)
    clock.offset += ride.pickup_at - timedelta(hours=5) - clock.now()
    await page.goto(f"{service.url}/t/{ride.token}")
    meet = page.get_by_label("Meeting point")
    await expect(meet).to_contain_text(MEETING_POINT)
    call = meet.get_by_role("link", name="Call your travel agency: +442079460555")
    await expect(call).to_have_attribute("href", "tel:+442079460555")
    await expect(meet).to_contain_text("The driver's phone number appears here from")
    await above_the_fold(page, MEETING_POINT, "Call your travel agency")
    assert await refreshes(page)
    await expect(page.locator("footer")).to_contain_text("This page updates itself every 30 seconds")


async def test_on_board_the_distance_is_to_the_drop_off_and_the_driver_is_called(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    ride, _ = await booked(http, service, make_client, make_hosted, db)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=40) - clock.now()
    path = await driver_link(db, ride, clock)
    for kind in ("DRIVER_DEPARTED_TO_PICKUP", "DRIVER_ARRIVED_AT_PICKUP", "DRIVER_DEPARTED_TO_DROPOFF"):
        await press(http, path, kind)
    posted = await http.post(f"{path}/positions", json=NEAR_GEORGE_SQUARE)
    assert posted.status_code == 200, posted.text
    facts = (await http.get(f"/t/{ride.token}.json")).json()
    assert facts["position"]["centre"] == "dropoff" and 2.0 < facts["position"]["km_to_dropoff"] < 3.5
    assert facts["position"]["km_from_pickup"] > 8
    await page.goto(f"{service.url}/t/{ride.token}")
    where = page.get_by_label("Where your driver is")
    await expect(where).to_contain_text("km from the drop-off")
    await expect(where).not_to_contain_text("pickup point")
    await expect(where).to_contain_text("Green: your drop-off. Blue: your car.")
    call = page.get_by_label("Meeting point").get_by_role("link", name="Call Morag")
    await expect(call).to_be_visible()
    await above_the_fold(page, MEETING_POINT, "Call Morag")
    assert await refreshes(page)
    if page.viewport_size == SIZES["phone"]:
        await shoot(page, "traveller-page-on-board")


async def test_a_no_show_says_what_to_do_and_the_page_stops_refreshing(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    ride, client_id = await booked(http, service, make_client, make_hosted, db)
    await accept(services_of(service), ride)
    await set_agency_phone(db, clock, client_id)
    clock.offset += ride.pickup_at - timedelta(minutes=40) - clock.now()
    path = await driver_link(db, ride, clock)
    await press(http, path, "DRIVER_DEPARTED_TO_PICKUP")
    await press(http, path, "DRIVER_ARRIVED_AT_PICKUP")
    clock.offset += ride.pickup_at + timedelta(hours=1, minutes=1) - clock.now()  # past the free waiting time
    await press(http, path, "CUSTOMER_NO_SHOW")
    await page.goto(f"{service.url}/t/{ride.token}")
    if page.viewport_size == SIZES["phone"]:
        await shoot(page, "traveller-page-no-show")
    step = page.get_by_label("What to do now")
    await expect(step).to_contain_text("Your driver could not find you and has left")
    await expect(step).to_contain_text(
        f"Call your travel agency to arrange another transfer, quoting your reference {ride.reservation_no}"
    )
    call = page.get_by_label("Meeting point").get_by_role("link", name="Call your travel agency: +442079460555")
    await expect(call).to_be_visible()
    await above_the_fold(page, "Your driver could not find you", "Call your travel agency")
    assert not await refreshes(page)
    footer = page.locator("footer")
    await expect(footer).to_contain_text("The ride is over: this page no longer updates itself.")
    await expect(footer).not_to_contain_text("every 30 seconds")
    facts = (await http.get(f"/t/{ride.token}.json")).json()
    assert facts["refresh_seconds"] is None and facts["call"]["who"] == "agency"


async def test_after_the_drop_off_nothing_refreshes_and_no_one_is_called_without_an_agency_phone(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    ride, _ = await booked(http, service, make_client, make_hosted, db)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=40) - clock.now()
    path = await driver_link(db, ride, clock)
    for kind in (
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
        "DRIVER_ARRIVED_AT_DROPOFF",
    ):
        await press(http, path, kind)
    await page.goto(f"{service.url}/t/{ride.token}")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Arrived: the ride is over")
    assert not await refreshes(page)
    await expect(page.locator("footer")).to_contain_text("The ride is over: this page no longer updates itself.")
    await expect(page.get_by_role("link", name="Call")).to_have_count(0)  # the driver's phone is gone; no agency phone
    await expect(page.get_by_label("Meeting point")).to_contain_text(MEETING_POINT)
