"""The opt-out page (docs/rules/messages.md#opt-out) in Chromium at 390 x 844 and at 1280 px, with
JavaScript on and off (the page has no script: both must work the same): the choice fits the phone's
width with nothing cut or scrolled sideways, the form alone stops messages about this transfer, then
about every transfer, and the page then says so and offers nothing more."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.test_rating_page import SIZES, _js
from tests.conftest import ClientFactory, PartnerFactory
from tests.messages.page_helpers import booking_with_messages
from tests.messages.test_optout_page import optouts_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.messages.optout_link import optout_token


@pytest.fixture(
    params=[(s, js) for s in SIZES for js in (True, False)], ids=lambda p: f"{p[0]}-{'js' if p[1] else 'no-js'}"
)
async def page(request: pytest.FixtureRequest, browser: Browser) -> AsyncIterator[Page]:
    size, javascript = request.param
    context = await browser.new_context(viewport=SIZES[size], java_script_enabled=javascript)
    context.set_default_timeout(15_000)
    made = await context.new_page()
    yield made
    await context.close()


async def fits(page: Page) -> None:
    width = (page.viewport_size or SIZES["phone"])["width"]
    if await _js(page):
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
    for selector in ("button.send", "fieldset", "h1"):
        box = await page.locator(selector).first.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, (selector, box)


async def test_a_traveller_stops_messages_with_the_form_alone(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    _, reservation_no, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    email = row["passenger_email"]
    url = f"{service.url}/m/{optout_token(row['id'], 'email', email)}"
    phone = page.viewport_size == SIZES["phone"]
    await page.goto(url)
    await expect(page.get_by_role("heading", name="Stop e-mails?")).to_be_visible()
    await expect(page.get_by_text(f"Your transfer {reservation_no}")).to_be_visible()
    await expect(page.get_by_text("a***@example.com").first).to_be_visible()
    await fits(page)
    if phone:
        await shoot(page, "optout-page")

    await page.get_by_role("radio", name="Only about this transfer").check()
    await page.get_by_role("button", name="Stop e-mails").click()
    await expect(page.get_by_text(f"Done: no more messages about transfer {reservation_no}.")).to_be_visible()
    assert await optouts_of(db, email) == [("email", row["id"], "page", True)]
    await expect(page.get_by_role("heading", name="Stop e-mails about every transfer?")).to_be_visible()
    await fits(page)

    await page.get_by_role("button", name="Stop e-mails").click()  # "every transfer" is the one choice left
    await expect(page.get_by_role("heading", name="E-mails stopped")).to_be_visible()
    await expect(page.get_by_text("Done: no more messages about any transfer.")).to_be_visible()
    assert await page.locator("form").count() == 0
    assert await optouts_of(db, email) == [("email", row["id"], "page", True), ("email", None, "page", True)]
    if phone:
        await shoot(page, "optout-page-done")


async def test_sending_without_a_choice_is_stopped_by_the_browser(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, _, row = await booking_with_messages(http, db, make_client, make_partner, clock.now())
    await page.goto(f"{service.url}/m/{optout_token(row['id'], 'sms', row['passenger_phone'])}")
    await expect(page.get_by_role("heading", name="Stop text messages?")).to_be_visible()
    await page.get_by_role("button", name="Stop text messages").click()  # required radios: the form stays
    await expect(page.get_by_role("heading", name="Stop text messages?")).to_be_visible()
    assert await optouts_of(db, row["passenger_phone"]) == []


async def test_an_unknown_link_says_so(page: Page, service: LiveServer) -> None:
    answer = await page.goto(f"{service.url}/m/{'A' * 22}e1")
    assert answer is not None and answer.status == 404
    await expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
    await expect(page.get_by_text("There is nothing to stop at this address.")).to_be_visible()
