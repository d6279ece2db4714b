"""The console's incidents (docs/rules/incidents.md#resolve) in Chromium with JavaScript off: the booking page
lists a booking's incidents with the ride's evidence; an admin's bad refund is refused beside the form
with what was typed kept and nothing written; a good one resolves it (audited); support sees no Resolve."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, expect

from tests.browser.conftest import MakeOperator, sign_in
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import approved_ride, at, counts, driver_event, report
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


@pytest.fixture
async def no_js(browser: Browser) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(java_script_enabled=False, viewport={"width": 1360, "height": 900})
    context.set_default_timeout(15_000)
    yield context
    await context.close()


async def test_an_admin_resolves_an_incident_with_the_evidence_in_view(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    make_operator: MakeOperator,
    console_url: str,
    no_js: BrowserContext,
) -> None:
    key, partner_key, number, row = await approved_ride(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(minutes=30))
    await driver_event(http, partner_key, number, "DRIVER_ARRIVED_AT_PICKUP", row["pickup_at"] + timedelta(minutes=5))
    disputed = await report(http, key, number, {"type": "DRIVER_NO_SHOW", "description": "Nobody at arrivals"})
    assert disputed.json()["status"] == "OPEN"
    admin = await make_operator("admin")
    page = await no_js.new_page()
    await sign_in(page, console_url, admin.email, admin.password)
    await page.goto(f"{console_url}/bookings/{number}")
    incidents = page.locator("#incidents")
    await expect(incidents).to_contain_text("DRIVER_NO_SHOW — OPEN")
    await expect(incidents).to_contain_text("Nobody at arrivals")
    await expect(incidents).to_contain_text("Arrival at the pickup on record")
    await expect(incidents.get_by_role("table", name="Driver events")).to_contain_text("DRIVER_ARRIVED_AT_PICKUP")
    await expect(incidents).to_contain_text("flight")

    before = await counts(db, row["id"], number)
    await page.get_by_label("Responsible").select_option("partner")
    await page.get_by_label("Refund (EUR, 0 to 56.05)").fill("56.055")
    await page.get_by_label("Note").fill("Driver waited at the wrong door")
    await page.get_by_role("button", name="Resolve").click()
    await expect(page.get_by_role("alert").first).to_contain_text("at most two decimals")
    await expect(page.get_by_label("Note")).to_have_value("Driver waited at the wrong door")
    assert await counts(db, row["id"], number) == before
    await page.get_by_label("Refund (EUR, 0 to 56.05)").fill("99.00")
    await page.get_by_role("button", name="Resolve").click()
    await expect(page.get_by_role("alert").first).to_contain_text("cannot exceed what is still unrefunded (56.05)")
    assert await counts(db, row["id"], number) == before

    await page.get_by_label("Refund (EUR, 0 to 56.05)").fill("20.00")
    await page.get_by_role("button", name="Resolve").click()
    await expect(page.get_by_role("status")).to_contain_text("The incident is resolved")
    await expect(incidents).to_contain_text("DRIVER_NO_SHOW — RESOLVED")
    await expect(incidents).to_contain_text("responsible partner, refund €20.00")
    await expect(page.get_by_role("button", name="Resolve")).to_have_count(0)
    assert (await row_of(db, number))["status"] == "APPROVED"
    assert ("incident_driver_no_show", Decimal("20.00")) in await ledger_of(db, number)
    assert (await counts(db, row["id"], number))["audit"] == before["audit"] + 1

    # an operator's cancel then gives back what is left (36.05), the figure the API shows too
    # (docs/rules/incidents.md#refund-then-cancel), with the incident's refund named beside it
    await page.get_by_label("Reason").fill("Traveller gave up")
    await page.get_by_role("button", name="Cancel booking").click()
    await expect(page.get_by_role("status")).to_contain_text("The booking is cancelled")
    cancellation = page.locator("tr", has=page.get_by_role("rowheader", name="Cancellation", exact=True))
    await expect(cancellation.locator("td")).to_have_text(
        re.compile(r"fee €0\.00, refund €36\.05 \(the incidents refunded €20\.00 before\)$")
    )
    assert ("credit_refund", Decimal("36.05")) in await ledger_of(db, number)
    shown = (
        await http.get("/api/v1/booking-api/booking", params={"reservation_no": number}, headers=bearer(key))
    ).json()
    assert shown["cancellation"]["refund"] == "36.05"


async def test_support_sees_incidents_but_no_resolve(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    make_operator: MakeOperator,
    console_url: str,
    no_js: BrowserContext,
) -> None:
    key, _, number, row = await approved_ride(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    late = (await report(http, key, number, {"type": "DRIVER_LATE", "description": "late"})).json()
    support = await make_operator("support")
    page = await no_js.new_page()
    await sign_in(page, console_url, support.email, support.password)
    await page.goto(f"{console_url}/bookings/{number}")
    await expect(page.locator("#incidents")).to_contain_text("DRIVER_LATE — OPEN")
    await expect(page.get_by_role("button", name="Resolve")).to_have_count(0)
    # posting anyway (a crafted form) is refused: support may not move money
    answer = await page.request.post(
        f"{console_url}/bookings/{number}/incidents/{late['id']}/resolve",
        form={"responsible": "none", "refund": "0.00", "note": "x", "csrf_token": "forged"},
    )
    assert answer.status in (403, 400), answer.status
    assert (await row_of(db, number))["status"] == "APPROVED"
