"""The ride in the console (docs/rules/ride.md#sandbox-and-console), in a real browser: a booking's story
lists the driver's events with when they happened and when they were received, and the last position;
the partner's page shows its driver-event coverage. The client's live positions never show as partner
deliveries."""

from __future__ import annotations

from datetime import timedelta

import httpx
from playwright.async_api import expect

from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory
from tests.ride.conftest import approved_ride
from transfers.clock import ShiftedClock


async def test_the_story_shows_the_ride_and_the_partner_page_its_coverage(
    http: httpx.AsyncClient,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
) -> None:
    ride = await approved_ride(http, clock, make_client, make_partner, iata="BRS")
    ride.at(-timedelta(minutes=20))
    departed = ride.clock.now() - timedelta(minutes=1)
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP", departed, lat=51.3827, lng=-2.7191)).status_code == 200
    assert (await ride.positions(ride.position(51.38271, -2.71905, heading=45, speed_kmh=31.5))).status_code == 200
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/bookings/{ride.reservation_no}")
    story = page.locator("table", has=page.get_by_role("columnheader", name="Received (UTC)"))
    await expect(page.get_by_role("heading", name="Ride")).to_be_visible()
    await expect(page.get_by_text("Stage: EN_ROUTE_TO_PICKUP")).to_be_visible()
    await expect(page.get_by_text("Last position: 51.38271, -2.71905")).to_be_visible()
    row = story.locator("tbody tr").first
    await expect(row).to_contain_text("DRIVER_DEPARTED_TO_PICKUP")
    await expect(row).to_contain_text(departed.strftime("%Y-%m-%d %H:%M:%S"))
    await expect(row).to_contain_text(f"partner:{ride.partner_id}")

    # The four milestones complete the ride: the partner's coverage counts it.
    ride.at(timedelta(minutes=5))
    for kind in ("DRIVER_ARRIVED_AT_PICKUP", "DRIVER_DEPARTED_TO_DROPOFF", "DRIVER_ARRIVED_AT_DROPOFF"):
        assert (await ride.event(kind)).status_code == 200
    await page.goto(f"{console_url}/partners/{ride.partner_id}")
    await expect(page.get_by_role("heading", name="Driver-event coverage")).to_be_visible()
    await expect(page.get_by_text("1 of 1 COMPLETED booking picked up in the last 30 days")).to_be_visible()
    await expect(page.get_by_text("100 %")).to_be_visible()
    await page.goto(f"{console_url}/bookings/{ride.reservation_no}")
    await expect(page.get_by_text("Stage: DROPPED_OFF")).to_be_visible()
    await expect(page.get_by_text("No position received.")).to_have_count(0)
