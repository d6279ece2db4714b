"""The agency portal in a real browser (docs/rules/agency-portal.md), with JavaScript on and off:
an agent signs in through the form, books a transfer end to end (the place picked from the
geocoder's suggestions with JavaScript; typed coordinates without), reads the booking's page with
the pickup in the airport's time, cancels it after seeing the fee; on a 390 px wide phone no page
scrolls sideways; an agent sees neither ``Developers`` nor ``Users`` and is refused them; nothing is
ever asked of another host. Screenshots for the docs (``shoot``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, User, make_agency  # noqa: F401  (the fixture)
from tests.conftest import PartnerFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
Shoot = Callable[[Page, str], Awaitable[None]]


@pytest.fixture
async def contexts(browser: Browser) -> AsyncIterator[Callable[..., Awaitable[BrowserContext]]]:
    made: list[BrowserContext] = []

    async def make(*, phone: bool = False, javascript: bool = True) -> BrowserContext:
        context = await browser.new_context(
            viewport=PHONE if phone else DESKTOP,
            java_script_enabled=javascript,
            is_mobile=phone,
            has_touch=phone,
        )
        context.set_default_timeout(20_000)
        made.append(context)
        return context

    yield make
    for context in made:
        await context.close()


async def overflow(page: Page) -> int:
    width: int = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return width


async def wider_than_screen(page: Page) -> list[str]:
    """The elements that stick out on the right (what to fix when ``overflow`` is not 0)."""
    found: list[str] = await page.evaluate(
        """() => { const w = document.documentElement.clientWidth;
        return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 0.5)
          .map(e => e.tagName + '.' + e.className + '#' + e.id).slice(0, 10); }"""
    )
    return found


async def signed_in_page(context: BrowserContext, service: LiveServer, user: User) -> tuple[Page, set[str]]:
    page = await context.new_page()
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    await page.goto(f"{service.url}/agency/login")
    await page.get_by_label("Email").fill(user.email)
    await page.get_by_label("Password").fill(user.password)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{service.url}/agency/bookings")
    return page, hosts


async def fill_trip(page: Page, clock: ShiftedClock) -> None:
    await page.get_by_label("Airport").fill("LHR")
    await page.get_by_label("Pickup date").fill((clock.now() + timedelta(days=10)).strftime("%Y-%m-%d"))
    await page.get_by_label("Pickup time").fill("14:30")
    await page.get_by_label("Adults").fill("2")


async def book_and_open(page: Page) -> str:
    await page.get_by_role("button", name="Find transfers").click()
    await expect(page.get_by_role("heading", name="Offers")).to_be_visible()
    await page.get_by_role("button", name="Choose").first.click()
    await expect(page.get_by_role("heading", name="Passenger and flight")).to_be_visible()
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Surname").fill("Lovelace")
    await page.get_by_label("Passenger email").fill("ada@example.com")
    await page.get_by_label("Passenger phone").fill("+447911123456")
    await page.get_by_label("Flight number").fill("BA117")
    await page.get_by_role("button", name="Book", exact=True).click()
    await expect(page.get_by_role("heading", name="Booking ")).to_be_visible()
    heading = await page.get_by_role("heading", level=1).inner_text()
    return heading.removeprefix("Booking ").strip()


async def test_with_javascript_an_agent_picks_the_place_books_and_cancels(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    shoot: Shoot,
) -> None:
    await make_partner()
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(), service, agency.agent)
    nav = page.get_by_role("navigation", name="Main")
    for label in ("Book", "Bookings", "Wallet"):
        await expect(nav.get_by_role("link", name=label, exact=True)).to_be_visible()
    await expect(nav.get_by_role("link", name="Developers")).to_have_count(0)
    await expect(nav.get_by_role("link", name="Users")).to_have_count(0)
    await nav.get_by_role("link", name="Book", exact=True).click()
    await fill_trip(page, clock)
    await page.get_by_label("Destination").press_sequentially("Richmo", delay=40)
    suggestion = page.locator("#place-suggestions button").first
    # The first lookup loads the builtin gazetteer: seconds on a loaded machine (bounded: 20 s).
    await expect(suggestion).to_contain_text("GB", timeout=20_000)
    await suggestion.click()
    assert await page.locator("#lat").input_value() != ""
    await page.get_by_role("button", name="Find transfers").click()
    await expect(page.get_by_role("heading", name="Offers")).to_be_visible()
    await expect(page.locator(".policy").first).to_contain_text("Cancel")
    # (the docs' offers and booking pictures: test_agency_book_trips.py, a return trip with extras)
    await page.get_by_role("button", name="Choose").first.click()
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Surname").fill("Lovelace")
    await page.get_by_label("Passenger email").fill("ada@example.com")
    await page.get_by_label("Passenger phone").fill("+447911123456")
    await page.get_by_label("Flight number").fill("")
    await page.get_by_role("button", name="Book", exact=True).click()
    error = page.locator("#flight-error")
    await expect(error).to_contain_text("FLIGHT_NUMBER_REQUIRED, 1013")
    await expect(page.get_by_role("heading", name="There is a problem")).to_be_visible()
    await page.get_by_label("Flight number").fill("BA117")
    await page.get_by_role("button", name="Book", exact=True).click()
    await expect(page.locator("#status")).to_be_visible()
    await expect(page.get_by_text("LHR local time").first).to_be_visible()
    await page.get_by_role("link", name="Cancel booking").click()
    await expect(page.locator("#fee")).to_contain_text("€")
    await page.get_by_label("Reason").select_option(index=1)
    await page.get_by_role("button", name="Cancel booking").click()
    await expect(page.locator("#status")).to_have_text("Cancelled")
    assert (await page.goto(f"{service.url}/agency/users")).status == 403  # type: ignore[union-attr]
    await expect(page.get_by_text("Only your agency's admins may open this page.")).to_be_visible()
    assert hosts == {urlsplit(service.url).netloc}, hosts


async def test_without_javascript_on_a_phone_every_page_fits_and_booking_works(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    shoot: Shoot,
) -> None:
    await make_partner()
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(phone=True, javascript=False), service, agency.admin)
    await page.goto(f"{service.url}/agency/book")
    await fill_trip(page, clock)
    await page.get_by_label("Destination").fill("Trafalgar Square")
    await page.locator("summary", has_text="Type the coordinates instead").click()
    await page.get_by_label("Latitude").fill("51.5080")
    await page.get_by_label("Longitude").fill("-0.1281")
    reservation_no = await book_and_open(page)
    assert reservation_no
    await shoot(page, "agency-booking-phone")
    for path in (
        "/agency/bookings",
        f"/agency/bookings/{reservation_no}",
        "/agency/book",
        "/agency/wallet",
        "/agency/users",
    ):
        answer = await page.goto(service.url + path)
        assert answer is not None and answer.status == 200, path
        assert await overflow(page) == 0, (path, await wider_than_screen(page))
    await page.goto(f"{service.url}/agency/bookings?q=lovelace")
    await expect(page.get_by_role("link", name=reservation_no)).to_be_visible()
    # (the docs' phone list picture: test_phone_lists.py)
    assert hosts == {urlsplit(service.url).netloc}, hosts


async def test_an_admin_adds_an_agent_in_the_browser(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],
    make_agency: MakeAgency,  # noqa: F811
    shoot: Shoot,
) -> None:
    agency = await make_agency()
    page, _ = await signed_in_page(await contexts(), service, agency.admin)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Users").click()
    await page.get_by_label("Email").fill(f"desk-{agency.client_id}@agency.example")
    await page.get_by_label("Role").select_option("agent")
    await page.get_by_role("button", name="Add user").click()
    await expect(page.locator("#new-password")).to_be_visible()
    await page.get_by_label("Email").fill("not an address")
    await page.get_by_role("button", name="Add user").click()
    await expect(page.locator("#email-error")).to_contain_text("Not an e-mail address")
    await shoot(page, "agency-users")
