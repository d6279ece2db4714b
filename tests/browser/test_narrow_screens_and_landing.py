"""``GET /`` is a small page linking the API docs, the console and the partner
portal, loading nothing from another host; and the console is readable on a 390 px wide phone: no
main page scrolls sideways (wide tables scroll inside their own box)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.browser.conftest import MakeOperator, sign_in
from tests.servers import LiveServer

PHONE = {"width": 390, "height": 844}
MAIN_PAGES = ("/", "/bookings", "/incidents", "/clients", "/partners", "/deliveries", "/audit", "/operators")


@pytest.fixture
async def phone(browser: Browser) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    yield context
    await context.close()


async def overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the screen (0: no sideways scrolling)."""
    width: int = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    return width


async def test_the_landing_page_links_the_parts_and_asks_no_other_host(
    service: LiveServer, phone: BrowserContext
) -> None:
    page = await phone.new_page()
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
    answer = await page.goto(service.url + "/")
    assert answer is not None and answer.status == 200 and "text/html" in answer.headers["content-type"]
    await expect(page.get_by_role("heading", name="Transfers booking API")).to_be_visible()
    for name, href in [
        ("API documentation", "/docs"),
        ("OpenAPI document", "/openapi.json"),
        ("Operator console", "/console/"),
        ("Partner portal", "/partner/"),
    ]:
        await expect(page.get_by_role("link", name=name)).to_have_attribute("href", href)
    assert await overflow(page) == 0
    await page.get_by_role("link", name="API documentation").click()
    await expect(page).to_have_title(re.compile("Swagger UI"))
    await expect(page.locator("#swagger-ui")).to_be_attached()
    await page.goto(service.url + "/")
    await page.get_by_role("link", name="Operator console").click()
    await expect(page.get_by_label("Email")).to_be_visible()  # the console's sign-in page
    assert hosts == {urlsplit(service.url).netloc}, hosts


async def test_the_console_is_readable_at_390_px(
    phone: BrowserContext, make_operator: MakeOperator, console_url: str
) -> None:
    operator = await make_operator("admin")
    page = await phone.new_page()
    await sign_in(page, console_url, operator.email, operator.password)
    await page.wait_for_url(f"{console_url}/")
    wide: dict[str, int] = {}
    for path in MAIN_PAGES:
        answer = await page.goto(console_url + path)
        assert answer is not None and answer.status == 200, path
        if (extra := await overflow(page)) > 0:
            wide[path] = extra
        # the navigation is on the screen, not pushed off its right edge
        box = await page.get_by_role("navigation", name="Main").bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], path
    assert wide == {}, f"pages wider than 390 px: {wide}"
    body = await page.evaluate("getComputedStyle(document.body).fontSize")
    assert body == "15px"  # not shrunk to fit: the page is laid out for the phone
