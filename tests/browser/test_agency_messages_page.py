"""``Messages`` of the agency portal in a real browser (docs/rules/messages.md#settings): on a 390 px phone
without JavaScript and on a desktop with it, an admin turns messages on (a refused brand name shown
beside its field with what was typed kept, SMS refused until the travellers' consent is ticked), the
page fits the phone's width, nothing is asked of another host; the booking's page lists its messages
with their status. Screenshots for the docs (``shoot``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.browser.test_agency_portal import contexts, overflow, signed_in_page, wider_than_screen  # noqa: F401
from tests.conftest import PartnerFactory
from tests.messages.page_helpers import booking_with_messages
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.messages import settings_service

Shoot = Callable[[Page, str], Awaitable[None]]


@pytest.mark.parametrize("phone", [True, False], ids=["phone-no-js", "desktop-js"])
async def test_an_admin_turns_messages_on(
    phone: bool,
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    db: Database,
    shoot: Shoot,
) -> None:
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(phone=phone, javascript=not phone), service, agency.admin)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Messages").click()
    await expect(page.get_by_role("heading", name="Messages", level=1)).to_be_visible()
    await expect(page.locator("#state")).to_contain_text("off")
    assert await overflow(page) <= 0, await wider_than_screen(page)

    await page.get_by_label("E-mail", exact=True).check()
    await page.get_by_label("SMS (text messages)").check()
    await page.get_by_label("Brand name").fill("Sunny Tours of the Costa del Sol")  # 32 characters
    await page.get_by_label("SMS sender").fill("SunnyTours")
    await page.get_by_label("Default language").select_option("es")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#brand_name-error")).to_contain_text("at most 30 characters (this has 32)")
    await expect(page.get_by_label("Brand name")).to_have_value("Sunny Tours of the Costa del Sol")
    await expect(page.get_by_label("Default language")).to_have_value("es")
    assert await overflow(page) <= 0, await wider_than_screen(page)
    if phone:
        await shoot(page, "agency-messages-error-phone")

    await page.get_by_label("Brand name").fill("Sunny Tours")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#travellers_consented-error")).to_contain_text("agreed to be texted")
    assert (await settings_service.get_settings(db, agency.client_id)).channels == ()

    await page.get_by_label("Our travellers agreed to be texted about their transfers").check()
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved.")
    await expect(page.locator("#state")).to_contain_text("on, by e-mail and SMS")
    stored = await settings_service.get_settings(db, agency.client_id)
    assert (stored.channels, stored.brand_name, stored.sms_sender, stored.default_language) == (
        ("email", "sms"),
        "Sunny Tours",
        "SunnyTours",
        "es",
    )
    assert hosts == {urlsplit(service.url).netloc}, hosts  # nothing loaded from another host
    if not phone:
        await shoot(page, "agency-messages")


async def test_the_booking_page_lists_the_messages(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
) -> None:
    agency = await make_agency()

    async def this_agency(**_: Any) -> tuple[int, str]:
        return agency.client_id, agency.api_key

    _, reservation_no, _ = await booking_with_messages(http, db, this_agency, make_partner, clock.now())
    page, _ = await signed_in_page(await contexts(phone=True, javascript=False), service, agency.agent)
    await page.goto(f"{service.url}/agency/bookings/{reservation_no}")
    table = page.locator("table.messages")
    await expect(table.locator("tbody tr")).to_have_count(3)
    await expect(table.locator("tbody tr").first).to_contain_text("Confirmed")
    await expect(table.locator("tbody tr").first).to_contain_text("sent")
    await expect(table).to_contain_text("+44 7*** ***456")
    assert await overflow(page) <= 0, await wider_than_screen(page)
