"""The traveller's page (docs/rules/ride.md#tracking-page) in Debian's Chromium at a phone's width
(390 px), with JavaScript on and off: it reads without scrolling sideways, names the driver, the plate
and the pickup time, and asks nothing of any host but the service (every request's host is recorded)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Page, Request, ViewportSize, expect

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import DRIVER, MEETING_POINT, accept, book_hosted, services_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

PHONE = ViewportSize(width=390, height=844)


async def phone_page(browser: Browser, *, javascript: bool) -> tuple[Page, list[str], Callable[[], Awaitable[None]]]:
    context = await browser.new_context(viewport=PHONE, java_script_enabled=javascript, device_scale_factor=2)
    context.set_default_timeout(15_000)
    hosts: list[str] = []

    def record(request: Request) -> None:
        hosts.append(urlsplit(request.url).hostname or request.url)

    context.on("request", record)
    return await context.new_page(), hosts, context.close


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
async def test_the_travellers_page_on_a_phone(
    javascript: bool,
    browser: Browser,
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Phone Cars")
    ride = await book_hosted(http, key, "Phone Cars", db, partner_id)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=30) - clock.now()
    page, hosts, close = await phone_page(browser, javascript=javascript)
    try:
        answer = await page.goto(f"{service.url}/t/{ride.token}")
        assert answer is not None and answer.status == 200
        await expect(page.get_by_role("heading", level=1)).to_have_text("Your driver has not set off yet")
        await expect(page.get_by_label("Pickup time")).to_contain_text("14:30")
        driver = page.get_by_label("Your driver and car")
        await expect(driver).to_contain_text("Morag")
        await expect(driver.get_by_label("Number plate")).to_have_text("SK21 ABC")
        call = page.get_by_label("Meeting point").get_by_role("link", name=f"Call Morag: {DRIVER.phone}")
        await expect(call).to_have_attribute("href", f"tel:{DRIVER.phone}")
        await expect(page.get_by_label("Meeting point")).to_contain_text(MEETING_POINT)
        # Readable on a phone: nothing wider than the screen, and the text is not shrunk.
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"]
        size = await page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
        assert size >= 16
        # The inlined style sheet applied (its CSP hash matches): the status band is coloured, the plate yellow.
        band = await page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor")
        assert band == "rgb(29, 79, 145)"
        plate = await driver.get_by_label("Number plate").evaluate("e => getComputedStyle(e).backgroundColor")
        assert plate == "rgb(255, 212, 59)"
        if javascript:
            await shoot(page, "traveller-page-phone")
        assert set(hosts) == {"127.0.0.1"}, hosts
    finally:
        await close()
