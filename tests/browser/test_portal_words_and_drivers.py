"""The partner portal (docs/console/portal.md): statuses in words with the accept-by time, counts with the
right plural ("1 suitcase"), the markup as "10 %", and the drivers a partner used before offered
when it accepts the next booking (chosen from the list, nothing retyped)."""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.test_partner_portal import book, client_view, portal_as, portal_url  # noqa: F401 (fixtures)
from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory


async def test_words_deadline_and_a_driver_used_before(
    http: httpx.AsyncClient,
    portal_as: Any,  # noqa: F811
    portal_url: str,  # noqa: F811
    make_client: ClientFactory,
    make_hosted: HostedFactory,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Clyde Cars", markup="10")
    first = (await book(http, key, "GLA", "Clyde Cars", surname="Hopper"))["reservation_no"]
    second = (await book(http, key, "GLA", "Clyde Cars", surname="Noether"))["reservation_no"]
    page = (await portal_as(partner_id)).page

    row = page.get_by_role("row").filter(has_text=first)
    await expect(row).to_contain_text("Waiting for you to accept")
    await expect(row).to_contain_text(re.compile(r"accept by \d{4}-\d\d-\d\d \d\d:\d\d GLA local"))
    assert "PENDING_APPROVAL" not in await page.locator("main").inner_text()
    await row.get_by_role("link", name=first).click()
    passengers = page.locator("tr", has=page.get_by_role("rowheader", name="Passengers")).locator("td")
    await expect(passengers).to_have_text("2 adults, 0 children, 0 infants; 1 suitcase, 1 small bag")
    accept_by = page.locator("tr", has=page.get_by_role("rowheader", name="Accept by")).locator("td")
    await expect(accept_by).to_contain_text("declined and refunded to the client if not accepted by then")
    await expect(page.get_by_label("A driver you used before")).to_have_count(0)  # none yet
    await page.get_by_label("Driver name").fill("Morag Campbell")
    await page.get_by_label("Driver phone").fill("+447400900123")
    await page.get_by_label("Plate").fill("SK21 ABC")
    await page.get_by_role("button", name="Accept").click()
    await expect(page.get_by_role("status")).to_contain_text("Accepted")
    status = page.locator("tr", has=page.get_by_role("rowheader", name="Status")).locator("td")
    await expect(status).to_have_text("Accepted")

    await page.goto(f"{portal_url}/bookings/{second}")
    used = page.get_by_label("A driver you used before")
    await expect(used.locator("option")).to_have_text(["— a new driver —", "Morag Campbell, +447400900123, SK21 ABC"])
    await used.select_option(label="Morag Campbell, +447400900123, SK21 ABC")
    await page.get_by_role("button", name="Accept").click()  # the three fields left empty
    await expect(page.get_by_role("status")).to_contain_text("Accepted")
    seen = await client_view(http, key, second)
    assert seen["status"] == "APPROVED"
    assert seen["driver"] == {"name": "Morag Campbell", "phone": "+447400900123", "plate": "SK21 ABC"}

    await page.goto(f"{portal_url}/account")
    markup = page.locator("tr", has=page.get_by_role("rowheader", name="Markup")).locator("td")
    await expect(markup).to_have_text("10 %")
