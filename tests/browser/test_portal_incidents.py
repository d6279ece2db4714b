"""A partner sees its bookings' incidents (docs/rules/incidents.md#resolve): in the portal's booking page
(Chromium, JavaScript off) and in the reverse API's booking info (``incidents``); another partner's
booking answers 404 as before."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
from playwright.async_api import Browser, expect

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.incidents.helpers import approved_ride, at, report
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.hosted.users import create_partner_user
from transfers.incidents import service as incidents

PASSWORD = "correct horse battery staple 24"


async def test_the_partner_reads_incidents_in_the_portal_and_the_reverse_api(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    browser: Browser,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    service: LiveServer,
) -> None:
    key, partner_key, number, row = await approved_ride(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=2))
    late = (await report(http, key, number, {"type": "DRIVER_LATE", "description": "Forty minutes late"})).json()
    await incidents.resolve(db, clock, late["id"], responsible="partner", refund="12.50", note="Late", actor="op")
    info = await http.get(f"/api/v1/reverse/booking/info/{number}", headers=bearer(partner_key))
    assert info.status_code == 200, info.text
    shown = info.json()["incidents"]
    assert [(i["id"], i["status"]) for i in shown] == [(late["id"], "RESOLVED")]
    assert shown[0]["resolution"]["refund"] == "12.50"
    _, _, other_key = await make_partner(airports=("CDG",))
    foreign = await http.get(f"/api/v1/reverse/booking/info/{number}", headers=bearer(other_key))
    assert foreign.status_code == 404

    email = f"staff-{os.getpid()}-{row['id']}@partner.example"
    await create_partner_user(db, clock, partner_id=row["partner_id"], email=email, password=PASSWORD, actor="tests")
    context = await browser.new_context(java_script_enabled=False)
    try:
        page = await context.new_page()
        portal = f"{service.url}/partner"
        await page.goto(f"{portal}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.goto(f"{portal}/bookings/{number}")
        section = page.locator("#incidents")
        await expect(section).to_contain_text("Driver late: decided")
        await expect(section).to_contain_text("Forty minutes late")
        await expect(section).to_contain_text("Responsible: you; refunded to the client: €12.50")
    finally:
        await context.close()
