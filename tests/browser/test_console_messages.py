"""The console's messages to travellers in a real browser (docs/rules/messages.md): a client's settings
shown and set on its page (refusals beside their field, nothing changed; SMS only with the travellers'
consent; a support operator reads them without a form), a booking's messages with their status on its
page, and ``Messages``: the texts the sandbox SMS provider kept, newest first, readable at 390 px."""

from __future__ import annotations

from datetime import timedelta

import httpx
from playwright.async_api import expect

from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory
from tests.messages.page_helpers import booking_with_messages, mark_sent
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.messages import settings_service
from transfers.messages.models import Channel, Template


async def test_an_admin_sets_a_clients_messages_and_bad_values_change_nothing(
    console_as: ConsoleAs, console_url: str, db: Database, make_client: ClientFactory
) -> None:
    client_id, _ = await make_client()
    console = await console_as("admin")
    page = console.page
    await page.goto(f"{console_url}/clients/{client_id}")
    section = page.get_by_role("region", name="Messages to travellers")
    await expect(section.locator("#messages-state")).to_contain_text("Off")

    await section.get_by_label("E-mail", exact=True).check()
    await section.get_by_label("Brand name").fill("B" * 31)
    await section.get_by_role("button", name="Save messages").click()
    await expect(page.locator("#brand_name-error")).to_contain_text("at most 30 characters (this has 31)")
    await expect(page.get_by_label("Brand name")).to_have_value("B" * 31)
    assert (await settings_service.get_settings(db, client_id)).channels == ()

    await page.get_by_label("Brand name").fill("Sunny Tours")
    await page.get_by_label("SMS", exact=True).check()
    await page.get_by_role("button", name="Save messages").click()
    await expect(page.locator("#travellers_consented-error")).to_contain_text("agreed to be texted")
    assert (await settings_service.get_settings(db, client_id)).channels == ()

    await page.get_by_label("The client confirmed its travellers agreed to be texted").check()
    await page.get_by_label("Default language").select_option("nl")
    await page.get_by_label("Support phone").fill("+31 20 123 4567")
    await page.get_by_role("button", name="Save messages").click()
    await expect(page.get_by_text("The messages to travellers are saved.")).to_be_visible()
    await expect(page.locator("#messages-state")).to_contain_text("On, by e-mail and SMS, as “Sunny Tours”")
    stored = await settings_service.get_settings(db, client_id)
    assert (stored.channels, stored.brand_name, stored.default_language) == (("email", "sms"), "Sunny Tours", "nl")
    assert stored.support_phone == "+31201234567" and stored.travellers_consented_at is not None

    support = await console_as("support")
    await support.page.goto(f"{console_url}/clients/{client_id}")
    region = support.page.get_by_role("region", name="Messages to travellers")
    await expect(region.locator("#messages-state")).to_contain_text("On, by e-mail and SMS")
    assert await region.locator("form").count() == 0


async def test_the_booking_page_and_the_sandbox_texts(
    console_as: ConsoleAs,
    console_url: str,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, reservation_no, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    older = "Sunny Tours: your transfer TB-X tomorrow 14:30 at Heathrow. Track: https://t.example/t/abc"
    newer = "Sunny Tours: your driver Sam is at the pickup, car AB12 CDE."
    await mark_sent(db, row["id"], Template.REMINDER, Channel.SMS, clock.now(), body=older, provider_id="sandbox-1a")
    await mark_sent(
        db,
        row["id"],
        Template.REMINDER,
        Channel.EMAIL,
        clock.now() + timedelta(minutes=1),
        body="an e-mail is never listed as a kept text",
        provider_id=None,
    )
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/bookings/{reservation_no}")
    table = page.locator("table.messages")
    await expect(table.locator("tbody tr")).to_have_count(3)
    await expect(table).to_contain_text("a***@example.com")
    await expect(table).to_contain_text("+44 7*** ***456")
    await expect(table.locator(".status-sent")).to_have_count(3)
    assert row["passenger_email"] not in await table.inner_text()

    _, reservation_two, second = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    await mark_sent(db, second["id"], Template.REMINDER, Channel.SMS, clock.now(), body=newer, provider_id="sandbox-2b")
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Messages").click()
    await expect(page.get_by_role("heading", name="Messages", exact=True)).to_be_visible()
    bodies = page.locator("pre.sms-body")
    texts = [await bodies.nth(i).inner_text() for i in range(await bodies.count())]
    assert newer in texts and older in texts and texts.index(newer) < texts.index(older)  # newest first
    assert all("an e-mail" not in t for t in texts)
    first = page.locator("li.text").filter(has_text=newer)
    await expect(first).to_contain_text(reservation_two)
    await expect(first).to_contain_text("+44 7*** ***456")
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    await first.get_by_role("link", name=reservation_two).click()
    await expect(page.get_by_role("heading", name=f"Booking {reservation_two}", exact=False)).to_be_visible()
