"""The traveller's page (docs/rules/ride.md#tracking-page) when the flight changes (docs/rules/flights.md), in
Chromium at 390 px and 1280 px, the flight checked by the sandbox provider on the injected clock: a late flight
says what happened and that the pickup followed it ("moved from 14:30 because the flight is late"); a cancelled
flight leads the page: the pickup did not move, call the agency (a button with its support phone), cancelling
is free."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.flights import accepted_on_flight
from tests.ride_pages.helpers import services_of
from tests.servers import LiveServer
from transfers.clients.service import set_support_phone
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}


@pytest.fixture(params=list(SIZES))
async def page(request: pytest.FixtureRequest, browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport=SIZES[request.param], java_script_enabled=False)  # type: ignore[arg-type]
    context.set_default_timeout(15_000)
    made = await context.new_page()
    yield made
    await context.close()


def svc_db(service: LiveServer) -> Database:
    return services_of(service).db


async def sideways(page: Page) -> int:
    extra: int = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return extra


async def test_a_late_flight_says_what_happened_and_where_the_pickup_moved(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Late Flight Cars")
    svc = services_of(service)
    ride = await accepted_on_flight(svc, http, key, "Late Flight Cars", partner_id, "ZZ1045", clock)
    await page.goto(f"{service.url}/t/{ride.token}")
    if page.viewport_size == SIZES["phone"]:
        await shoot(page, "traveller-page-delayed")
    flight = page.get_by_label("Flight", exact=True)
    await expect(flight).to_contain_text("ZZ1045")
    await expect(flight).to_contain_text("Delayed 45 min; lands 15:15")
    await expect(flight).not_to_contain_text("On schedule")
    pickup = page.get_by_label("Pickup time")
    await expect(pickup).to_contain_text("15:15")
    await expect(pickup).to_contain_text("Moved from 14:30 because the flight is late")
    await expect(page.get_by_label("Flight disrupted")).to_have_count(0)
    assert await sideways(page) <= 0


async def test_a_cancelled_flight_leads_the_page_with_what_to_do(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    client_id, key = await make_client()
    await set_support_phone(svc_db(service), clock, client_id, "+44 141 555 0100", actor="tests")
    partner_id = await make_hosted(airports=("GLA",), name="Cancelled Flight Cars")
    svc = services_of(service)
    ride = await accepted_on_flight(svc, http, key, "Cancelled Flight Cars", partner_id, "ZZ9001", clock)
    await page.goto(f"{service.url}/t/{ride.token}")
    if page.viewport_size == SIZES["phone"]:
        await shoot(page, "traveller-page-disrupted")
    lead = page.get_by_label("Flight disrupted")
    await expect(lead).to_contain_text("Your flight ZZ1045 was cancelled".replace("ZZ1045", "ZZ9001"))
    await expect(lead).to_contain_text("Your pickup has not moved: 14:30")
    await expect(lead).to_contain_text("Call your travel agency")
    call = lead.get_by_role("link", name="Call your travel agency: +441415550100")
    await expect(call).to_have_attribute("href", "tel:+441415550100")
    await expect(page.get_by_role("link", name="Call your travel agency: +441415550100")).to_have_count(1)  # once
    await expect(lead).to_contain_text("Cancelling is now free of charge")
    # it leads: above the pickup time, on the first screen
    lead_box, pickup_box = await lead.bounding_box(), await page.get_by_label("Pickup time").bounding_box()
    assert lead_box is not None and pickup_box is not None
    assert lead_box["y"] < pickup_box["y"] and lead_box["y"] + lead_box["height"] <= SIZES["phone"]["height"]
    await expect(page.get_by_label("Flight", exact=True)).to_contain_text("Cancelled")
    assert await sideways(page) <= 0
