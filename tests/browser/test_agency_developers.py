"""``Developers`` of the agency portal in a real browser (docs/rules/agency-portal.md#pages), JavaScript on
(desktop) and off (a 390 px wide phone): an admin creates a key (shown once, with a Copy button only
when JavaScript runs) and revokes it (listed as revoked), adds a webhook endpoint (a refused URL
answered beside its field), sends it a test event, reads the events and the request log filtered
by status; no page scrolls sideways on the phone; nothing is asked of another host. Screenshots for
the docs (``shoot``)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx
from playwright.async_api import BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.browser.test_agency_portal import contexts, overflow, signed_in_page, wider_than_screen  # noqa: F401
from tests.conftest import bearer
from tests.servers import LiveServer

Shoot = Callable[[Page, str], Awaitable[None]]
ENDPOINTS_API = "/api/v1/booking-api/webhook-endpoints"


async def request_log_shows(page: Page, url: str, request_id: str) -> None:
    """The log is written every second by a background task: reload (bounded) until the row is there."""
    for _ in range(60):
        await page.goto(url)
        if await page.get_by_text(request_id).count():
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"{request_id} not in the request log")


async def test_with_javascript_an_admin_manages_keys_and_endpoints_and_reads_the_logs(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    http: httpx.AsyncClient,
    shoot: Shoot,
) -> None:
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(), service, agency.admin)
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Developers").click()
    await expect(page.get_by_role("heading", name="Developers", level=1)).to_be_visible()
    await page.get_by_role("button", name="Create a key").click()
    key = await page.get_by_label("The new API key").input_value()
    assert key.startswith("tk_")
    await expect(page.get_by_role("button", name="Copy")).to_be_visible()  # JavaScript's enhancement
    prefix = "_".join(key.split("_")[:2])
    await page.get_by_role("button", name=f"Revoke {prefix}").click()
    row = page.locator("tr", has_text=f"{prefix}_…")
    await expect(row).to_contain_text("Revoked")
    await expect(row.get_by_role("button")).to_have_count(0)
    await page.get_by_role("link", name="Add an endpoint").click()
    await page.get_by_label("URL").fill("http://127.0.0.1:9/hooks")
    await page.get_by_label("Description (optional)").fill("Our booking system")
    await page.get_by_role("button", name="Add endpoint").click()
    await expect(page.get_by_label("The signing secret")).to_be_visible()
    assert (await page.get_by_label("The signing secret").input_value()).startswith("whsec_")
    await page.get_by_role("button", name="Send a test event").click()
    await expect(page.get_by_role("status")).to_contain_text("A ping event (evt_")
    await expect(page.locator("table").first).to_contain_text("ping")
    await shoot(page, "agency-developers-endpoint")
    await page.get_by_role("link", name="Events").click()
    await expect(page.locator("section.event").first).to_contain_text("ping")
    await http.get(ENDPOINTS_API, headers={**bearer(agency.api_key), "X-Request-ID": f"b-ok-{agency.client_id}"})
    await http.get(
        f"{ENDPOINTS_API}/we_nope", headers={**bearer(agency.api_key), "X-Request-ID": f"b-404-{agency.client_id}"}
    )
    log_url = f"{service.url}/agency/developers/requests"
    await request_log_shows(page, log_url, f"b-404-{agency.client_id}")
    await request_log_shows(page, log_url, f"b-ok-{agency.client_id}")
    await page.get_by_label("Status", exact=True).select_option("4xx")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text(f"b-404-{agency.client_id}")).to_be_visible()
    await expect(page.get_by_text(f"b-ok-{agency.client_id}")).to_have_count(0)
    await shoot(page, "agency-developers-request-log")
    await page.goto(f"{service.url}/agency/developers")
    await shoot(page, "agency-developers")
    assert hosts == {urlsplit(service.url).netloc}


async def test_without_javascript_on_a_phone_every_developers_page_works_and_fits(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    http: httpx.AsyncClient,
) -> None:
    agency = await make_agency()
    page, hosts = await signed_in_page(await contexts(phone=True, javascript=False), service, agency.admin)
    await page.goto(f"{service.url}/agency/developers")
    await page.get_by_role("button", name="Create a key").click()
    key = await page.get_by_label("The new API key").input_value()
    assert key.startswith("tk_")
    await expect(page.get_by_role("button", name="Copy")).to_be_hidden()  # no script: nothing that cannot work
    assert await overflow(page) == 0, await wider_than_screen(page)
    prefix = "_".join(key.split("_")[:2])
    await page.get_by_role("button", name=f"Revoke {prefix}").click()
    await expect(page.locator("tr", has_text=f"{prefix}_…")).to_contain_text("Revoked")
    await page.get_by_role("link", name="Add an endpoint").click()
    await page.get_by_label("URL").fill("ftp://example.com/" + "x" * 300)
    await page.get_by_role("button", name="Add endpoint").click()
    await expect(page.locator("#url-error")).to_be_visible()
    await expect(page.get_by_role("alert")).to_contain_text("There is a problem")
    assert await overflow(page) == 0, await wider_than_screen(page)
    await page.get_by_label("URL").fill("http://127.0.0.1:9/" + "long-path/" * 20)
    await page.get_by_role("button", name="Add endpoint").click()
    secret = await page.get_by_label("The signing secret").input_value()
    assert secret.startswith("whsec_")
    assert await overflow(page) == 0, await wider_than_screen(page)
    await page.get_by_role("button", name="Disable").click()
    await expect(page.locator("#endpoint-status")).to_have_text("Disabled")
    await page.get_by_role("button", name="Enable").click()
    await expect(page.locator("#endpoint-status")).to_have_text("Enabled")
    await page.get_by_role("button", name="Rotate the signing secret").click()
    assert (await page.get_by_label("The signing secret").input_value()) not in ("", secret)
    await page.get_by_role("button", name="Send a test event").click()
    await expect(page.get_by_role("status")).to_contain_text("A ping event")
    assert await overflow(page) == 0, await wider_than_screen(page)
    request_id = f"phone-{agency.client_id}-" + "r" * 90
    await http.get(
        ENDPOINTS_API, headers={**bearer(agency.api_key), "X-Request-ID": request_id, "Idempotency-Key": "k" * 200}
    )
    await request_log_shows(page, f"{service.url}/agency/developers/requests", request_id)
    assert await overflow(page) == 0, await wider_than_screen(page)
    await page.get_by_label("Or one status").fill("abc")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.locator("#code-error")).to_contain_text("Type a status such as 404")
    await page.goto(f"{service.url}/agency/developers/events")
    await expect(page.locator("section.event").first).to_contain_text("ping")
    assert await overflow(page) == 0, await wider_than_screen(page)
    await page.locator("section.event").first.get_by_role("link", name=re.compile(r"^evt_")).click()
    await expect(page.get_by_role("heading", name="Body")).to_be_visible()
    await expect(page.locator("pre")).to_contain_text('"type": "ping"')
    assert await overflow(page) == 0, await wider_than_screen(page)
    assert hosts == {urlsplit(service.url).netloc}
