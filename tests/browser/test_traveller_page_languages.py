"""The traveller's page in the traveller's language in Chromium (docs/rules/messages.md#page-language), at
390 px with JavaScript on and off: a browser set to German gets the page in German (``<html lang="de">``,
German words, the date as German writes it); the language links switch it without a script; a language the
service does not speak falls back to English."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, ViewportSize, expect

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import MEETING_POINT, Ride, accept, book_hosted, services_of
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.i18n.dates import long_date

PHONE = ViewportSize(width=390, height=844)


@pytest.fixture(params=[True, False], ids=["js", "no-js"])
async def javascript(request: pytest.FixtureRequest) -> bool:
    enabled: bool = request.param
    return enabled


@pytest.fixture
async def contexts(browser: Browser, javascript: bool) -> AsyncIterator[Callable[[str], Awaitable[Page]]]:
    """Pages of a phone whose browser asks for a given locale (Chromium sends it as Accept-Language)."""
    opened: list[BrowserContext] = []

    async def open_page(locale: str) -> Page:
        context = await browser.new_context(viewport=PHONE, java_script_enabled=javascript, locale=locale)
        context.set_default_timeout(15_000)
        opened.append(context)
        return await context.new_page()

    yield open_page
    for context in opened:
        await context.close()


@pytest.fixture
async def ride(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database, service: LiveServer
) -> Ride:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Babel Cars")
    booked = await book_hosted(http, key, "Babel Cars", db, partner_id)
    await accept(services_of(service), booked)
    return booked


async def test_a_german_browser_reads_the_page_in_german_and_can_switch_it(
    contexts: Callable[[str], Awaitable[Page]],
    ride: Ride,
    service: LiveServer,
    http: httpx.AsyncClient,
    javascript: bool,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    local = datetime.fromisoformat((await http.get(f"/t/{ride.token}.json")).json()["pickup"]["local_time"])
    page = await contexts("de-DE")
    await page.goto(f"{service.url}/t/{ride.token}")
    await expect(page.locator("html")).to_have_attribute("lang", "de")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Ihr Fahrer ist noch nicht losgefahren")
    pickup = page.get_by_label("Abholzeit")
    await expect(pickup).to_contain_text(long_date(local, "de"))  # "Dienstag, 1. Dezember 2026"
    await expect(pickup).to_contain_text("Ortszeit")
    await expect(page.get_by_label("Treffpunkt")).to_contain_text(MEETING_POINT)
    await expect(page.locator("footer")).to_contain_text("Diese Seite aktualisiert sich alle 30 Sekunden")
    if javascript:
        await shoot(page, "traveller-page-german")
    await page.get_by_role("link", name="Français").click()  # a plain link: works without JavaScript
    await expect(page.locator("html")).to_have_attribute("lang", "fr")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Votre chauffeur n'est pas encore parti")
    await expect(page.get_by_label("Heure de prise en charge")).to_contain_text(long_date(local, "fr"))
    assert page.url.endswith("?lang=fr")
    # the page fits the phone's width in the longer language too
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width


async def test_a_language_the_service_does_not_speak_gets_english(
    contexts: Callable[[str], Awaitable[Page]], ride: Ride, service: LiveServer
) -> None:
    page = await contexts("sv-SE")
    await page.goto(f"{service.url}/t/{ride.token}")
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Your driver has not set off yet")
    nav = page.get_by_role("navigation", name="Language")
    await expect(nav.get_by_role("link")).to_have_count(6)
