"""The driver page's details (docs/rules/ride.md#driver-page) in Chromium at 390 px and 1280 px, with and
without JavaScript: the flight's expected arrival and terminal, the pickup (with the meeting point) and the
drop-off each with a link that opens the phone's maps, and a refusal in the server's own words, for a button
press (the page again) and for a position the script sent (its line under the buttons)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Page, Route, ViewportSize, expect
from sqlalchemy import select, update

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.flights import accepted_on_flight
from tests.ride_pages.helpers import MEETING_POINT, services_of
from tests.ride_pages.test_ride_on_the_pages import driver_link
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings

SIZES = {"phone": ViewportSize(width=390, height=844), "desktop": ViewportSize(width=1280, height=900)}
FIXED = {"latitude": 55.8801, "longitude": -4.3905}


def maps_query(href: str | None) -> str:
    assert href is not None and href.startswith("https://www.google.com/maps/search/?"), href
    query = parse_qs(urlsplit(href).query)
    assert query["api"] == ["1"]
    return query["query"][0]


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
async def test_the_driver_page_shows_the_flight_the_stops_with_maps_and_the_servers_reasons(
    javascript: bool,
    size: str,
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
    partner_id = await make_hosted(airports=("GLA",), name="Map Cars")
    svc = services_of(service)
    ride = await accepted_on_flight(svc, http, key, "Map Cars", partner_id, "ZZ1045", clock)  # 45 min late
    async with db.write() as conn:  # the airline named the terminal (the sandbox provider does not)
        state = (
            await conn.execute(select(bookings.c.flight_state).where(bookings.c.reservation_no == ride.reservation_no))
        ).scalar_one()
        await conn.execute(
            update(bookings)
            .where(bookings.c.reservation_no == ride.reservation_no)
            .values(flight_state={**state, "terminal": "Main"})
        )
    clock.offset += ride.pickup_at - timedelta(minutes=40) - clock.now()  # the ride may start: positions count
    path = await driver_link(db, ride, clock)
    context = await browser.new_context(
        viewport=SIZES[size], java_script_enabled=javascript, geolocation=FIXED, permissions=["geolocation"]
    )
    context.set_default_timeout(15_000)
    page = await context.new_page()
    try:
        await page.goto(f"{service.url}{path}")
        flight = page.get_by_label("Flight", exact=True)
        await expect(flight).to_contain_text("ZZ1045")
        await expect(flight).to_contain_text("Arrival: 15:15 (expected)")
        await expect(flight).to_contain_text("Terminal: Main")
        await expect(flight).to_contain_text("Delayed 45 min; lands 15:15")
        route = page.get_by_label("Route")
        await expect(route).to_contain_text("Glasgow International Airport, terminal Main")
        await expect(route).to_contain_text(f"Meeting point: {MEETING_POINT}")
        await expect(route).to_contain_text("George Square, Glasgow")
        pickup = route.get_by_role("link", name="Open the pickup in maps")
        assert maps_query(await pickup.get_attribute("href")) == "Glasgow International Airport, terminal Main"
        dropoff = route.get_by_role("link", name="Open the drop-off in maps")
        assert maps_query(await dropoff.get_attribute("href")) == "55.86420,-4.25180"  # the booked spot
        assert await page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        if size == "phone" and javascript:
            await shoot(page, "driver-page-flight-and-maps")

        # A press the rules refuse: the page again, with the rule's words (not a bare status code).
        await page.get_by_role("button", name="I'm leaving for the pickup").click()
        await page.get_by_role("button", name="I'm at the pickup").click()
        no_show = page.get_by_role("button", name="Passenger did not show up")
        await expect(no_show).to_be_disabled()  # before the free waiting time ends
        answer = await page.request.post(
            f"{service.url}{path}/events", form={"type": "CUSTOMER_NO_SHOW", "lat": "", "lng": ""}
        )
        assert answer.status == 422
        assert "Not sent: CUSTOMER_NO_SHOW" in await answer.text() and "free_wait_until" in await answer.text()

        if javascript:
            # A position the service refuses: the script says why, in the service's words.
            reason = "positions are accepted from 2 h before the pickup"

            async def refuse(route_: Route) -> None:
                await route_.fulfill(
                    status=422, content_type="application/json", body=json.dumps({"status": "Error", "message": reason})
                )

            await page.route(f"**{path}/positions", refuse)
            await page.reload()
            await expect(page.locator("#gps")).to_contain_text("Position not accepted at ")
            await expect(page.locator("#gps")).to_contain_text(f": {reason}.")
            await expect(page.locator("#gps")).not_to_contain_text("(422)")
    finally:
        await context.close()
