"""``/docs`` renders the booking API's Swagger UI with every script, stylesheet and image from the
service itself: Chromium is let reach the service's own host only, and any request elsewhere is
aborted and recorded (the page was blank without internet access)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Route

from tests.servers import LiveServer


async def test_api_docs_render_with_no_request_to_another_host(
    service: LiveServer, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    own = urlsplit(service.url).netloc
    elsewhere: list[str] = []
    loaded: list[str] = []

    async def only_the_service(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).netloc == own:
            loaded.append(urlsplit(url).path)
            await route.continue_()
        else:
            elsewhere.append(url)
            await route.abort()

    context = await new_context()
    await context.route("**/*", only_the_service)
    page = await context.new_page()
    page.set_default_timeout(90_000)  # Swagger UI is 1.5 MB of script to parse, on a busy machine
    await page.goto(f"{service.url}/docs", wait_until="domcontentloaded")
    # Swagger UI has fetched /openapi.json and drawn the document: its title and an operation.
    await page.locator(".swagger-ui .info .title").filter(has_text="Transfers booking API").wait_for()
    await page.locator(".opblock-summary-path", has_text="/api/v1/booking-api/search").first.wait_for()
    await page.wait_for_load_state("networkidle")
    assert elsewhere == [], elsewhere
    assert {"/docs", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css", "/openapi.json"} <= set(loaded)
