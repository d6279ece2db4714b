"""``Book`` in a real browser books what the API books (docs/rules/agency-portal.md#pages): at 1280 px
with JavaScript, a return trip with extras (the way out and the way back chosen as a pair, a child
seat x 2); at 390 px without JavaScript, a transfer to the airport with its way back, no page wider
than the phone. The offer cards draw no box around each cancellation tier, the booking page's
actions no bullets. Screenshots for the docs (``shoot``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.browser.test_agency_portal import (  # noqa: F401  (the fixture)
    Shoot,
    contexts,
    overflow,
    signed_in_page,
    wider_than_screen,
)
from tests.conftest import PartnerFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock

Contexts = Callable[..., Awaitable[BrowserContext]]


async def fill_return_trip(page: Page, clock: ShiftedClock) -> None:
    day = (clock.now() + timedelta(days=10)).strftime("%Y-%m-%d")
    await page.get_by_label("Airport").fill("LHR")
    await page.get_by_label("Destination").fill("Trafalgar Square")
    await page.locator("summary", has_text="Type the coordinates instead").click()
    await page.get_by_label("Latitude").fill("51.5080")
    await page.get_by_label("Longitude").fill("-0.1281")
    await page.get_by_label("Pickup date").fill(day)
    await page.get_by_label("Pickup time").fill("14:30")
    await page.get_by_label("Date of the way back").fill(day)
    await page.get_by_label("Time of the way back").fill("20:00")
    await page.get_by_label("Adults").fill("2")


async def passenger(page: Page) -> None:
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Surname").fill("Lovelace")
    await page.get_by_label("Passenger email").fill("ada@example.com")
    await page.get_by_label("Passenger phone").fill("+447911123456")
    await page.get_by_label("Flight number").fill("BA117")


async def test_at_1280_with_javascript_a_return_trip_with_extras(
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    shoot: Shoot,
) -> None:
    await make_partner()
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(), service, agency.agent)
    await page.goto(f"{service.url}/agency/book")
    await fill_return_trip(page, clock)
    await page.get_by_role("button", name="Find transfers").click()
    await expect(page.get_by_role("heading", name="The way out:")).to_be_visible()
    await expect(page.get_by_role("heading", name="The way back:")).to_be_visible()
    # A card per offer; the tiers of its cancellation policy are lines inside it, not boxes.
    tier = page.locator(".offers .policy li").first
    assert await tier.evaluate("e => getComputedStyle(e).borderTopWidth") == "0px"
    card = page.locator(".offers > li").first
    assert await card.evaluate("e => getComputedStyle(e).borderTopWidth") == "1px"
    await page.locator(".offers").first.scroll_into_view_if_needed()
    await shoot(page, "agency-offers")
    await page.get_by_role("button", name="Choose these").click()
    await expect(page.get_by_role("heading", name="Passenger and flight")).to_be_visible()
    await expect(page.get_by_role("rowheader", name="The way back")).to_be_visible()
    await passenger(page)
    await page.get_by_label("Child seat").fill("2")
    await page.get_by_label("Departing flight of the way back").fill("BA118")
    await shoot(page, "agency-passenger")
    await page.get_by_role("button", name="Book both").click()
    await expect(page.locator("#other-leg")).to_be_visible()
    await expect(page.get_by_role("cell", name="Child seat x 2", exact=True).first).to_be_visible()
    marker = await page.locator("ul.actions li").first.evaluate("e => getComputedStyle(e).listStyleType")
    assert marker == "none"  # no bullet drawn over the end of the line before
    await shoot(page, "agency-booking")
    await page.locator("#other-leg").click()
    await expect(page.get_by_text("the way back (leg 2)")).to_be_visible()
    assert hosts == {urlsplit(service.url).netloc}, hosts


async def test_at_390_without_javascript_a_transfer_to_the_airport_and_back(
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    shoot: Shoot,
) -> None:
    await make_partner()
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(phone=True, javascript=False), service, agency.agent)
    await page.goto(f"{service.url}/agency/book")
    await expect(page.locator("#place-hint")).to_contain_text("Hotels and street addresses are not known")
    await page.get_by_label("Departure: from the place to the terminal").check()
    await fill_return_trip(page, clock)
    assert await overflow(page) == 0, await wider_than_screen(page)
    await page.get_by_role("button", name="Find transfers").click()
    await expect(page.get_by_role("heading", name="The way out: Trafalgar Square to")).to_be_visible()
    assert await overflow(page) == 0, await wider_than_screen(page)
    await shoot(page, "agency-offers-phone")
    await page.get_by_role("button", name="Choose these").click()
    await expect(page.get_by_text("The departing flight, like BA118.")).to_be_visible()
    assert await overflow(page) == 0, await wider_than_screen(page)
    await passenger(page)
    await page.get_by_role("button", name="Book both").click()
    await expect(page.locator("#other-leg")).to_be_visible()
    assert await overflow(page) == 0, await wider_than_screen(page)
    assert hosts == {urlsplit(service.url).netloc}, hosts
