"""The console's incidents queue (docs/console/index.md#incidents) in Chromium at 1280 px and at 390 px: open
incidents oldest first with their age on the injected clock, their booking linked to its page's incident and
evidence, the count on the dashboard; a resolved one leaves the queue."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, expect

from tests.browser.conftest import MakeOperator, sign_in
from tests.conftest import ClientFactory, PartnerFactory
from tests.incidents.helpers import approved_booking, at, report
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.incidents import repository as incident_repository


@pytest.fixture(params=[1280, 390], ids=["desktop", "phone"])
async def context(request: pytest.FixtureRequest, browser: Browser) -> AsyncIterator[BrowserContext]:
    width = int(request.param)
    made = await browser.new_context(viewport={"width": width, "height": 900 if width > 400 else 844})
    made.set_default_timeout(15_000)
    yield made
    await made.close()


async def open_count(db: Database) -> int:
    async with db.read() as conn:
        return await incident_repository.count_open(conn)


async def test_open_incidents_wait_in_a_queue_with_their_age_and_booking(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    make_operator: MakeOperator,
    console_url: str,
    context: BrowserContext,
) -> None:
    key_a, first, row_a = await approved_booking(http, db, make_client, make_partner)
    key_b, second, _ = await approved_booking(http, db, make_client, make_partner)
    at(clock, row_a["pickup_at"], timedelta(minutes=10))
    late = (await report(http, key_a, first, {"type": "DRIVER_LATE", "description": "Forty minutes late"})).json()
    at(clock, row_a["pickup_at"], timedelta(hours=3, minutes=15))
    wrong = (await report(http, key_b, second, {"type": "WRONG_VEHICLE", "description": "A saloon, not a van"})).json()
    at(clock, row_a["pickup_at"], timedelta(hours=3, minutes=20))
    total = await open_count(db)

    admin = await make_operator("admin")
    page = await context.new_page()
    await sign_in(page, console_url, admin.email, admin.password)
    await page.wait_for_url(f"{console_url}/")
    count_line = page.locator("#open-incidents + p")
    await expect(count_line).to_contain_text(f"{total} open incidents waiting for a decision")
    await count_line.get_by_role("link").click()
    await page.wait_for_url(f"{console_url}/incidents")
    await expect(page.get_by_role("link", name="Incidents", exact=True)).to_have_attribute("aria-current", "page")
    queue = page.get_by_role("table", name="Open incidents")
    row_first = queue.locator("tr", has=page.get_by_role("link", name=first, exact=True))
    row_second = queue.locator("tr", has=page.get_by_role("link", name=second, exact=True))
    await expect(row_first).to_contain_text("3 h 10 min")
    await expect(row_first).to_contain_text("DRIVER_LATE")
    await expect(row_first).to_contain_text("Forty minutes late")
    await expect(row_first).to_contain_text("by client")
    await expect(row_second).to_contain_text("5 min")
    await expect(row_second).to_contain_text("WRONG_VEHICLE")
    numbers = await queue.locator("tbody tr td:nth-child(2) a").all_inner_texts()
    assert numbers.index(first) < numbers.index(second)  # oldest first
    if context.pages[0].viewport_size == {"width": 390, "height": 844}:
        overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0  # the table scrolls inside its own box, the page does not

    await row_first.get_by_role("link", name="Evidence").click()
    await page.wait_for_url(f"{console_url}/bookings/{first}#evidence")
    await expect(page.locator("#evidence")).to_be_visible()
    await page.goto(f"{console_url}/incidents")
    await row_first.get_by_role("link", name=first, exact=True).click()
    await page.wait_for_url(f"{console_url}/bookings/{first}#incident-{late['id']}")
    incident = page.locator(f"#incident-{late['id']}")
    await expect(incident).to_contain_text("DRIVER_LATE — OPEN")
    await incident.get_by_label("Responsible").select_option("none")
    await incident.get_by_label("Note").fill("Traffic on the M25; the driver called ahead")
    await incident.get_by_role("button", name="Resolve").click()
    await expect(page.get_by_role("status")).to_contain_text("The incident is resolved")

    await page.goto(f"{console_url}/incidents")
    await expect(row_first).to_have_count(0)
    await expect(row_second).to_have_count(1)
    assert wrong["status"] == "OPEN"
    await page.goto(f"{console_url}/")
    assert await open_count(db) == total - 1
    await expect(count_line).to_contain_text(f"{total - 1} open incident")
