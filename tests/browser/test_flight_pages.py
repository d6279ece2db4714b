"""A flight's news on the agency portal's, the partner portal's and the console's booking pages
(docs/rules/flights.md#in-words), in Chromium at 390 px and 1280 px, the flights checked on the injected clock:
the agency's page leads with a cancelled flight (the pickup did not move, what to do, cancelling free) and its
cancellation policy no longer says "free until"; a late flight reads "Delayed 45 min; lands 15:15" with the
moved pickup on the agency's and the partner's pages; a pickup booked before the flight's scheduled arrival is
flagged on the partner's and the console's pages."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.browser.conftest import MakeOperator, sign_in
from tests.browser.test_agency_portal import signed_in_page
from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.flights import accepted_on_flight, book_flight
from tests.ride_pages.helpers import accept, services_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.flights import watch as flight_watch
from transfers.flights.rules import FlightReport
from transfers.hosted.users import create_partner_user
from transfers.reference.flights import FlightStatus

SIZES = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}
PASSWORD = "correct horse battery staple"


@pytest.fixture(params=list(SIZES))
async def context(request: pytest.FixtureRequest, browser: Browser) -> AsyncIterator[BrowserContext]:
    made = await browser.new_context(viewport=SIZES[request.param])  # type: ignore[arg-type]
    made.set_default_timeout(15_000)
    yield made
    await made.close()


async def sideways(page: Page) -> int:
    extra: int = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return extra


class LaterSchedule:
    """A provider whose flight is scheduled 50 min after the booked pickup (on time): what a real provider
    answers when the agent booked the pickup before the landing (the sandbox takes the pickup as the
    schedule, so it cannot)."""

    name = "later-schedule"

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        later = scheduled_arrival + timedelta(minutes=50)
        return FlightReport(FlightStatus.SCHEDULED, later, later, None, "2")

    async def probe(self) -> str:
        return "later schedule"

    async def aclose(self) -> None:
        return None


async def test_the_agency_page_leads_with_a_cancelled_flight_and_shows_a_late_one(
    context: BrowserContext,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_agency: MakeAgency,  # noqa: F811
    make_hosted: HostedFactory,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    agency = await make_agency()
    partner_id = await make_hosted(airports=("GLA",), name="Agency Flight Cars")
    svc = services_of(service)
    late = await accepted_on_flight(svc, http, agency.api_key, "Agency Flight Cars", partner_id, "ZZ1045", clock)
    cancelled = await accepted_on_flight(svc, http, agency.api_key, "Agency Flight Cars", partner_id, "ZZ9001", clock)
    page, _ = await signed_in_page(context, service, agency.agent)

    await page.goto(f"{service.url}/agency/bookings/{cancelled.reservation_no}")
    lead = page.locator(".flight-alert")
    await expect(lead.get_by_role("heading")).to_have_text("Flight ZZ9001 was cancelled: the pickup did not move")
    await expect(lead).to_contain_text("The pickup is still")
    await expect(lead).to_contain_text("14:30")
    await expect(lead).to_contain_text("Cancelling is now free.")
    await expect(lead.get_by_role("link", name="change the pickup")).to_be_visible()
    lead_box = await lead.bounding_box()
    assert lead_box is not None and lead_box["y"] < SIZES["phone"]["height"]  # on the first screen
    if page.viewport_size == SIZES["phone"]:
        await shoot(page, "agency-booking-disrupted-phone")
    await expect(page.locator("#policy-disrupted")).to_contain_text("Cancelling is free now")
    await expect(page.get_by_text("Free cancellation until")).to_have_count(0)
    await expect(page.locator("#flight")).to_contain_text("ZZ9001 · Cancelled")
    assert await sideways(page) <= 0
    await lead.get_by_role("link", name="cancel").click()
    await expect(page.locator("#fee")).to_have_text("€0.00")
    await expect(page.locator("#free-why")).to_contain_text("The flight was cancelled: cancelling is free")
    assert await sideways(page) <= 0

    await page.goto(f"{service.url}/agency/bookings/{late.reservation_no}")
    await expect(page.locator(".flight-alert")).to_have_count(0)
    await expect(page.locator("#flight")).to_contain_text("ZZ1045 · Delayed 45 min; lands 15:15, terminal 1")
    await expect(page.locator("#moved")).to_contain_text("Moved from 14:30 because the flight is late")
    await expect(page.locator("#policy-disrupted")).to_have_count(0)
    assert await sideways(page) <= 0


async def test_the_partner_and_the_console_see_the_flight_and_an_early_pickup(
    context: BrowserContext,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    make_operator: MakeOperator,
    console_url: str,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Portal Flight Cars")
    svc = services_of(service)
    late = await accepted_on_flight(svc, http, key, "Portal Flight Cars", partner_id, "ZZ1045", clock)
    early = await book_flight(http, key, "Portal Flight Cars", db, partner_id, "BA1478")
    await accept(svc, early)
    await flight_watch.check_now(svc.db, LaterSchedule(), clock, early.reservation_no)

    email = f"flights-{os.getpid()}-{partner_id}@portal-flight.example"
    await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
    page = await context.new_page()
    await page.goto(f"{service.url}/partner/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{service.url}/partner/new")

    await page.goto(f"{service.url}/partner/bookings/{late.reservation_no}")
    await expect(page.locator("#flight")).to_contain_text("ZZ1045 · Delayed 45 min; lands 15:15, terminal 1")
    await expect(page.locator("#moved")).to_contain_text("Moved from 14:30 because the flight is late (now ")
    await expect(page.locator("#moved")).to_contain_text("15:15")
    await expect(page.locator("#early-pickup")).to_have_count(0)
    assert await sideways(page) <= 0
    await page.goto(f"{service.url}/partner/bookings/{early.reservation_no}")
    flag = page.locator("#early-pickup")
    await expect(flag).to_contain_text(
        "The booked pickup (14:30) is before the flight's scheduled arrival (15:20): the driver would wait"
    )
    await expect(page.locator("#flight")).to_contain_text("BA1478 · On time; lands 15:20, terminal 2")
    await expect(page.locator("#moved")).to_have_count(0)
    assert await sideways(page) <= 0

    operator = await make_operator("support")
    console = await context.new_page()
    await sign_in(console, console_url, operator.email, operator.password)
    await console.wait_for_url(f"{console_url}/")
    await console.goto(f"{console_url}/bookings/{early.reservation_no}")
    await expect(console.locator("#early-pickup")).to_contain_text("is before the flight's scheduled arrival (15:20)")
    assert await sideways(console) <= 0
    await console.goto(f"{console_url}/bookings/{late.reservation_no}")
    await expect(console.locator("#early-pickup")).to_have_count(0)
    flight_row = console.get_by_role("row").filter(has=console.get_by_role("rowheader", name="Flight", exact=True))
    await expect(flight_row).to_contain_text("Delayed 45 min; lands 15:15")
