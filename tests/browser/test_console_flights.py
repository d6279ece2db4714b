"""The console and the flight watch (docs/rules/flights.md): the partner's flight limits on its page (a value
out of range refused beside its field, the typed value kept, nothing saved), the dashboard's disrupted flights
of the next 24 h, and the booking page's current and booked pickup, free wait and flight."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
from playwright.async_api import expect
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import partners
from transfers.flights import watch as flight_watch
from transfers.flights.sandbox import SandboxProvider

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


async def test_the_partner_form_sets_the_flight_limits(
    console_as: ConsoleAs, console_url: str, make_partner: PartnerFactory, db: Database
) -> None:
    _, partner_id, _ = await make_partner(airports=("GOH",), name="Flight Form Cars")
    page = (await console_as("admin")).page
    await page.goto(f"{console_url}/partners/{partner_id}")
    pairs = page.locator("table.pairs").first
    await expect(pairs.get_by_role("row").filter(has_text="Follows flights")).to_contain_text("up to 180 min")
    await expect(pairs.get_by_role("row").filter(has_text="Free wait at airports")).to_contain_text("60 min")
    await page.get_by_label("Follow flights").fill("1441")
    await page.get_by_label("Free wait", exact=True).fill("45")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator(".field-error")).to_have_text("Follow flights: a whole number of minutes from 0 to 1440.")
    await expect(page.get_by_label("Follow flights")).to_have_value("1441")
    async with db.read() as conn:
        stored = (
            await conn.execute(
                select(partners.c.follow_flight_minutes, partners.c.free_wait_minutes).where(
                    partners.c.id == partner_id
                )
            )
        ).one()
    assert tuple(stored) == (180, 60)
    await page.get_by_label("Follow flights").fill("0")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("saved")
    await expect(pairs.get_by_role("row").filter(has_text="Follows flights")).to_contain_text("never")
    await expect(pairs.get_by_role("row").filter(has_text="Free wait at airports")).to_contain_text("45 min")


async def test_a_disrupted_flight_is_on_the_dashboard_and_the_booking_page(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    tomorrow = (datetime.now().astimezone() + timedelta(hours=20)).strftime("%Y-%m-%d %H:%M")
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        found = await http.post(SEARCH, json=search_body(pickup_datetime=tomorrow), headers=bearer(key))
        assert found.status_code == 200, found.text
        body = booking_body(found.json()["search_id"], "1", travel_details={"flight_number": "ZZ9001"})
        created = await http.post(BOOKING, json=body, headers=bearer(key))
        assert created.status_code == 200, created.text
    number = created.json()["booking"]["reservation_no"]
    svc = svc_of(service)
    settings = svc.settings.model_copy(update={"flight_provider_max_calls_per_minute": 100_000})
    await flight_watch.watch_pass(svc.db, SandboxProvider(clock), clock, settings, limit=10_000)
    page = (await console_as("support")).page
    row = page.locator("#disrupted + table").get_by_role("row").filter(has_text=number)
    await expect(row).to_contain_text("ZZ9001")
    await expect(row).to_contain_text("CANCELLED")
    await row.get_by_role("link", name=number).click()
    flight = page.get_by_role("row").filter(has_text="Flight")
    await expect(flight.first).to_contain_text("disrupted")
    await expect(page.get_by_role("row").filter(has_text="Free wait until")).to_be_visible()
    await expect(page.get_by_text("cancelling is free from now on").first).to_be_visible()  # the story
