"""The ride's buttons in a real browser (docs/rules/ride.md#driver-page): the driver page on a phone with
JavaScript and location granted at a fixed position (the press carries it; the position is sent every 10 s
while the ride is on), the same page without JavaScript, and the portal's five event buttons."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Page, Request, ViewportSize, expect

from tests.browser.test_partner_portal import portal_as, portal_url  # noqa: F401 (fixtures)
from tests.conftest import ClientFactory, bearer
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import BOOKING, accept, book_hosted, services_of
from tests.ride_pages.test_ride_on_the_pages import driver_link
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

PHONE = ViewportSize(width=390, height=844)
FIXED = {"latitude": 55.8801, "longitude": -4.3905}  # ~3 km east of Glasgow Airport


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
async def test_the_driver_page_drives_the_ride(
    javascript: bool,
    browser: Browser,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Phone Ride Cars")
    ride = await book_hosted(http, key, "Phone Ride Cars", db, partner_id)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=30) - clock.now()
    path = await driver_link(db, ride, clock)
    context = await browser.new_context(
        viewport=PHONE,
        java_script_enabled=javascript,
        geolocation=FIXED,
        permissions=["geolocation"],
    )
    context.set_default_timeout(15_000)
    hosts: list[str] = []

    def record(request: Request) -> None:
        hosts.append(urlsplit(request.url).hostname or request.url)

    context.on("request", record)
    page = await context.new_page()
    try:
        await page.goto(f"{service.url}{path}")
        if javascript:
            await shoot(page, "driver-page-phone")
        if javascript:  # the page fills the press's position from the phone's fix
            await expect(page.locator("input[name=lat]").first).to_have_value(str(FIXED["latitude"]))
        await page.get_by_role("button", name="I'm leaving for the pickup").click()
        await expect(page.get_by_role("status")).to_have_text("Sent: you are on your way.")
        await expect(page.get_by_role("button", name="I'm at the pickup")).to_be_visible()
        seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(key))).json()
        first = seen["ride"]["events"][0]
        assert first["type"] == "DRIVER_DEPARTED_TO_PICKUP"
        if javascript:
            assert (first["lat"], first["lng"]) == (FIXED["latitude"], FIXED["longitude"])
            # The ride is on: the page sends the fix at once, then every 10 s; the traveller's page shows it.
            facts: dict[str, Any] = {}
            for _ in range(150):
                facts = (await http.get(f"/t/{ride.token}.json")).json()
                if facts["position"] is not None:
                    break
                await asyncio.sleep(0.2)
            assert facts["position"]["lat"] == FIXED["latitude"] and facts["position"]["lng"] == FIXED["longitude"]
            await expect(page.locator("#gps")).to_contain_text("Position sent at")
            traveller = await context.new_page()
            await traveller.goto(f"{service.url}/t/{ride.token}")
            where = traveller.locator("section.where")
            await expect(where).to_contain_text(
                re.compile(r"Updated (just now|\d+ min ago), about \d+\.\d km from the pickup point")
            )
            await expect(where.locator("svg")).to_be_visible()
            await shoot(traveller, "traveller-page-en-route")
            await traveller.close()
        else:
            assert (first["lat"], first["lng"]) == (None, None)
            assert (await http.get(f"/t/{ride.token}.json")).json()["position"] is None
        await page.get_by_role("button", name="I'm at the pickup").click()
        await page.get_by_role("button", name="Passenger on board").click()
        await page.get_by_role("button", name="Arrived at the drop-off").click()
        await expect(page.get_by_text("Ride finished. Thank you!")).to_be_visible()
        assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert set(hosts) == {"127.0.0.1"}, hosts
    finally:
        await context.close()


async def test_the_portal_s_five_buttons(
    http: httpx.AsyncClient,
    service: LiveServer,
    portal_as: Any,  # noqa: F811
    portal_url: str,  # noqa: F811
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Button Cars")
    ride = await book_hosted(http, key, "Button Cars", db, partner_id)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=10) - clock.now()
    page = (await portal_as(partner_id)).page
    await page.goto(f"{portal_url}/bookings/{ride.reservation_no}")
    events = page.get_by_role("region", name="Driver events")
    for label in (
        "Driver left for the pickup",
        "Driver at the pickup",
        "Passenger on board",
        "Arrived at the drop-off",
        "Passenger did not show up",
    ):
        await expect(events.get_by_role("button", name=label)).to_be_visible()
    await events.get_by_role("button", name="Driver left for the pickup").click()
    await expect(page.get_by_role("status")).to_contain_text("Recorded: driver left for the pickup.")
    await page.get_by_role("region", name="Driver events").get_by_role("button", name="Driver at the pickup").click()
    # The no-show before the free waiting time: refused in the reverse API's words, nothing recorded.
    await (
        page.get_by_role("region", name="Driver events").get_by_role("button", name="Passenger did not show up").click()
    )
    await expect(page.get_by_role("alert")).to_contain_text("free_wait_until")
    seen = (await http.get(BOOKING, params={"reservation_no": ride.reservation_no}, headers=bearer(key))).json()
    assert seen["status"] == "APPROVED" and seen["ride"]["stage"] == "AT_PICKUP"
    assert [e["type"] for e in seen["ride"]["events"]] == ["DRIVER_DEPARTED_TO_PICKUP", "DRIVER_ARRIVED_AT_PICKUP"]
    await expect(page.get_by_role("region", name="The ride")).to_contain_text("Stage: Driver at the pickup")
