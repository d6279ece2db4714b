"""A hosted partner's driver link in a real browser (docs/rules/ride.md#driver-page): the dispatcher
creates it on the booking's page, the driver opens it on a phone (390 px, JavaScript on and off), the
dispatcher revokes it and the driver's page says so."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Browser, Request, ViewportSize, expect

from tests.browser.test_partner_portal import portal_as, portal_url  # noqa: F401 (fixtures)
from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import accept, book_hosted, services_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

PHONE = ViewportSize(width=390, height=844)


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
async def test_create_open_and_revoke_a_driver_link(
    javascript: bool,
    browser: Browser,
    http: httpx.AsyncClient,
    service: LiveServer,
    portal_as: Any,  # noqa: F811
    portal_url: str,  # noqa: F811
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Link Cars")
    ride = await book_hosted(http, key, "Link Cars", db, partner_id)
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(hours=3) - clock.now()
    page = (await portal_as(partner_id)).page
    await page.goto(f"{portal_url}/bookings/{ride.reservation_no}")
    await page.get_by_role("button", name="Create driver link").click()
    await expect(page.get_by_role("status")).to_contain_text("Driver link ready")
    url = await page.get_by_label("Send this address to your driver").input_value()
    assert urlsplit(url).path.startswith("/d/") and len(urlsplit(url).path) >= 3 + 22

    context = await browser.new_context(viewport=PHONE, java_script_enabled=javascript)
    context.set_default_timeout(15_000)
    hosts: list[str] = []

    def record(request: Request) -> None:
        hosts.append(urlsplit(request.url).hostname or request.url)

    context.on("request", record)
    phone = await context.new_page()
    try:
        await phone.goto(f"{service.url}{urlsplit(url).path}")
        await expect(phone.get_by_role("button", name="I'm leaving for the pickup")).to_be_visible()
        await expect(phone.get_by_label("Passenger")).to_contain_text("Ada Lovelace")
        assert await phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        box = await phone.get_by_role("button", name="I'm leaving for the pickup").bounding_box()
        assert box is not None and box["height"] >= 80 and box["width"] >= 300  # one large button
        big = phone.get_by_role("button", name="I'm leaving for the pickup")
        assert float(await big.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 22  # read at arm's length

        await page.get_by_role("button", name="Revoke driver link").click()
        await expect(page.get_by_role("status")).to_contain_text("Driver link revoked")
        await expect(page.get_by_role("button", name="Create driver link")).to_be_visible()
        answer = await phone.reload()
        assert answer is not None and answer.status == 410
        await expect(phone.get_by_role("heading", level=1)).to_have_text("Link withdrawn")
        assert set(hosts) == {"127.0.0.1"}, hosts
    finally:
        await context.close()
