"""The rate card as a form in the partner portal (docs/partners/hosted.md), in a real browser with
JavaScript off (every step by a page load: add a row, search a place then pick it, save) and on
(place suggestions as typed, a live preview): the saved card is what the next search prices, bad
input is shown beside its field with what was typed kept, and a refused card changes nothing.
The JSON stays importable and exportable."""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, BrowserContext, Page, expect

from tests.browser.test_partner_portal import PASSWORD, Portal
from tests.conftest import ClientFactory, bearer
from tests.helpers import search_body
from tests.hosted.conftest import HostedFactory, example_card
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.geo import BuiltinGeocoder
from transfers.hosted import service as hosted_service
from transfers.hosted.users import create_partner_user

SEARCH = "/api/v1/booking-api/search"
INVERNESS = {"type": "POINT", "lat": 57.4778, "lng": -4.2247, "name": "Inverness"}  # 13 km from INV
Shoot = Callable[[Page, str], Awaitable[None]]


@pytest.fixture(scope="session")
async def card_portal(service: LiveServer) -> str:
    """The portal's URL, once the builtin geocoder's index is built (seconds on a busy machine,
    which a page would otherwise spend inside a browser step's timeout)."""
    await BuiltinGeocoder().warm()
    return f"{service.url}/partner"


@pytest.fixture
async def contexts(browser: Browser) -> AsyncIterator[Callable[..., Awaitable[BrowserContext]]]:
    made: list[BrowserContext] = []

    async def make(*, javascript: bool, width: int = 1360) -> BrowserContext:
        context = await browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=javascript)
        context.set_default_timeout(15_000)
        made.append(context)
        return context

    yield make
    for context in made:
        await context.close()


@pytest.fixture
def open_card(
    contexts: Callable[..., Awaitable[BrowserContext]], db: Database, clock: ShiftedClock, card_portal: str
) -> Callable[..., Awaitable[Portal]]:
    async def open_as(partner_id: int, *, javascript: bool, width: int = 1360) -> Portal:
        email = f"card{os.getpid()}-{partner_id}-{int(javascript)}-{width}@partner.example"
        await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
        page = await (await contexts(javascript=javascript, width=width)).new_page()
        await page.goto(f"{card_portal}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{card_portal}/new")
        await page.get_by_role("link", name="Rate card").click()
        await expect(page.get_by_role("heading", name="Rate card", exact=True)).to_be_visible()
        return Portal(page, email)

    return open_as


async def sedan_price(http: httpx.AsyncClient, key: str, company: str) -> float:
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "INV"}, dropoff_location=INVERNESS)
    found = (await http.post(SEARCH, json=body, headers=bearer(key))).json()
    return float(next(v["price"] for v in found["vehicles"] if v["company"] == company and v["type"] == "SEDAN"))


async def test_without_javascript_a_dispatcher_edits_previews_a_place_and_saves(
    http: httpx.AsyncClient,
    open_card: Callable[..., Awaitable[Portal]],
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    shoot: Shoot,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("INV",), name="Glen Cars", markup="10")
    assert await sedan_price(http, key, "Glen Cars") == 44.0  # minimum 40.00 + 10 %
    page = (await open_card(partner_id, javascript=False)).page
    # the stored card is in the fields
    await expect(page.locator("#v0-make")).to_have_value("Toyota")
    await expect(page.locator("#v1-model")).to_have_value("Vito")
    await expect(page.locator("#f0-airport")).to_have_value("LHR")
    await expect(page.locator("#x1-name")).to_have_value("Meet & greet")
    await expect(page.locator("#t0-hours")).to_have_value("24")
    await page.locator("#v0-minimum").fill("77.00")

    # the preview: a place by name, found by the geocoder, the matches offered to pick from
    await page.get_by_label("To (a town or place)").fill("inverness")
    await page.get_by_role("button", name="Preview prices").click()
    preview = page.locator("#preview")
    await expect(preview).to_contain_text("To Inverness, GB")
    await expect(preview).to_contain_text("km from the airport")
    await expect(preview).to_contain_text("markup 10 %")  # the partner's markup in words, not "10.000 %"
    sedan = preview.get_by_role("row", name=re.compile("Toyota Corolla"))
    await expect(sedan).to_contain_text("€77.00")
    await expect(sedan).to_contain_text("€84.70")
    await expect(page.locator("#v0-minimum")).to_have_value("77.00")  # what was typed survives the preview
    assert await sedan_price(http, key, "Glen Cars") == 44.0  # previewing saves nothing

    # a row added by a button (no script), filled, then saved with the rest
    await page.get_by_role("button", name="Add a vehicle").click()
    await page.locator("#v2-id").fill("estate")
    await page.locator("#v2-type").select_option("MINIVAN")
    await page.locator("#v2-make").fill("Škoda")
    await page.locator("#v2-model").fill("Octavia Kombi – ünïcode")
    for field, value in (("passengers", "4"), ("suitcases", "4"), ("small_bags", "2")):
        await page.locator(f"#v2-{field}").fill(value)
    for field, value in (("base", "12"), ("per_km", "1,40"), ("minimum", "45.50")):
        await page.locator(f"#v2-{field}").fill(value)
    await page.get_by_role("button", name="Add a tier").click()
    await page.locator("#t2-hours").fill("48")
    await page.locator("#t2-fee").fill("0")
    await page.locator("#t0-fee").fill("25")
    await page.get_by_role("button", name="Remove extra 2").click()
    await expect(page.locator("#x1-name")).to_have_count(0)
    await expect(page.locator("#v0-minimum")).to_have_value("77.00")  # kept across the row changes
    await page.get_by_role("button", name="Save rate card").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved")
    assert await sedan_price(http, key, "Glen Cars") == 84.7
    stored = await hosted_service.get_rate_card(db, partner_id)
    assert stored is not None
    estate = stored["vehicles"][2]
    assert (estate["make"], estate["model"]) == ("Škoda", "Octavia Kombi – ünïcode")
    assert estate["prices"] == {"base": "12", "per_km": "1.40", "minimum": "45.50"}
    assert [e["id"] for e in stored["extras"]] == ["child-seat"]
    assert stored["cancellation_policy"] == [
        {"hours_before_pickup": 24, "fee_percent": 25},
        {"hours_before_pickup": 0, "fee_percent": 100},
        {"hours_before_pickup": 48, "fee_percent": 0},
    ]
    assert stored["vehicles"][0]["prices"]["night"] == {"from": "22:00", "to": "06:00", "percent": "20"}
    await expect(page.locator("#v2-make")).to_have_value("Škoda")
    await shoot(page, "portal-rate-card")


@pytest.mark.parametrize("javascript", [False, True], ids=["no-js", "js"])
async def test_bad_input_is_shown_beside_each_field_and_nothing_is_saved(
    javascript: bool,
    open_card: Callable[..., Awaitable[Portal]],
    make_hosted: HostedFactory,
    db: Database,
    shoot: Shoot,
) -> None:
    partner_id = await make_hosted(airports=("INV",), name=f"Bad Input Cabs {int(javascript)}")
    before = await hosted_service.get_rate_card(db, partner_id)
    page = (await open_card(partner_id, javascript=javascript)).page
    long_name = "Ñ" * 10_000
    await page.locator("#v0-base").fill("-5")
    await page.locator("#v0-passengers").fill("three")
    if not javascript:  # the picture for the docs, before the 10,000 characters go in
        await page.locator("#v0-passengers").fill("three")
        await page.locator("#v0-base").fill("-5")
        await page.get_by_role("button", name="Save rate card").click()
        await expect(page.locator("#v0-base-error")).to_be_visible()
        await shoot(page, "portal-rate-card-errors")
    await page.locator("#v1-make").fill(long_name)
    await page.locator("#v1-night_from").fill("23:00")  # without "until" and a percent
    await page.locator("#x0-price").fill("0")
    await page.locator("#t0-fee").fill("lots")
    await page.locator("#currency").fill("eu")
    await page.locator("#blackout_dates").fill("2027-01-15\n15/01/2027")
    await page.get_by_role("button", name="Save rate card").click()

    summary = page.get_by_role("alert")
    await expect(summary).to_contain_text("The card was not saved")
    expected = {
        "currency": "Enter a 3-letter currency code",
        "blackout_dates": "Enter dates like 2027-01-15, one a line",
        "v0-base": "Enter 0 or more.",
        "v0-passengers": "Enter a whole number",
        "v1-make": "Too long: at most 200 characters (this has 10000)",
        "v1-night_to": "Enter an end time too",
        "x0-price": "Enter an amount more than 0.",
        "t0-fee": "Enter a percentage from 0 to 100",
    }
    for field, words in expected.items():
        beside = page.locator(f"#{field}-error")
        await expect(beside).to_contain_text(words)
        link = summary.locator(f'a[href="#{field}"]')
        await expect(link).to_have_count(1)
        await expect(page.locator(f"#{field}")).to_have_attribute("aria-invalid", "true")
    # what was typed is kept, even the 10,000 characters
    await expect(page.locator("#v0-base")).to_have_value("-5")
    await expect(page.locator("#v0-passengers")).to_have_value("three")
    assert len(await page.locator("#v1-make").input_value()) == 10_000
    # a summary link takes the person to the field
    await summary.locator('a[href="#v0-passengers"]').click()
    assert page.url.endswith("#v0-passengers")
    assert await hosted_service.get_rate_card(db, partner_id) == before  # nothing saved, nothing half-written


async def test_with_javascript_the_place_field_suggests_and_the_preview_follows(
    open_card: Callable[..., Awaitable[Portal]], make_hosted: HostedFactory
) -> None:
    partner_id = await make_hosted(airports=("INV",), name="Suggest Cars", markup="10")
    page = (await open_card(partner_id, javascript=True)).page
    await page.get_by_label("To (a town or place)").press_sequentially("Invern")
    suggestion = page.locator("#place-suggestions").get_by_role("button", name="Inverness, GB")
    await suggestion.click()
    await expect(page.get_by_label("Latitude")).not_to_have_value("")
    preview = page.locator("#preview")
    await expect(preview).to_contain_text("To Inverness, GB")
    await expect(preview.get_by_role("row", name=re.compile("Toyota Corolla"))).to_contain_text("€44.00")
    # the preview follows the card as it is typed, no button pressed
    await page.locator("#v0-minimum").fill("50.00")
    await expect(preview.get_by_role("row", name=re.compile("Toyota Corolla"))).to_contain_text("€55.00")
    # coordinates can be typed instead of a place
    await page.get_by_label("Latitude").fill("57.4778")
    await page.get_by_label("Longitude").fill("-4.2247")
    await expect(page.locator("#preview")).to_contain_text("13 km from the airport")


async def test_a_place_that_is_not_found_is_said_beside_the_field(
    open_card: Callable[..., Awaitable[Portal]], make_hosted: HostedFactory
) -> None:
    partner_id = await make_hosted(airports=("INV",), name="Nowhere Cars")
    page = (await open_card(partner_id, javascript=False)).page
    await page.get_by_label("To (a town or place)").fill("Qqqzzzxx")
    await page.get_by_role("button", name="Preview prices").click()
    await expect(page.locator("#place-error")).to_contain_text("No place called “Qqqzzzxx” was found")
    await expect(page.get_by_label("To (a town or place)")).to_have_value("Qqqzzzxx")
    await page.get_by_label("To (a town or place)").fill("")
    await page.get_by_label("Latitude").fill("north")
    await page.get_by_label("Longitude").fill("-4.2")
    await page.get_by_role("button", name="Preview prices").click()
    await expect(page.locator("#lat-error")).to_contain_text("Enter a latitude between -90 and 90")


async def test_the_json_is_exported_and_imported_through_the_same_checks(
    open_card: Callable[..., Awaitable[Portal]],
    make_hosted: HostedFactory,
    db: Database,
    tmp_path: Any,
) -> None:
    partner_id = await make_hosted(airports=("INV",), name="Json Cars")
    page = (await open_card(partner_id, javascript=False)).page
    await page.get_by_role("link", name="Import or export the card as JSON").click()
    async with page.expect_download() as waiting:
        await page.get_by_role("link", name="Download the saved card (JSON)").click()
    download = await waiting.value
    exported = json.loads((await download.path()).read_text(encoding="utf-8"))
    assert exported == await hosted_service.get_rate_card(db, partner_id) == example_card()

    broken = example_card(currency="eur")
    broken["vehicles"][1]["prices"]["minimum"] = 60
    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(broken), encoding="utf-8")
    await page.get_by_label("Import a file").set_input_files(str(bad_file))
    await page.get_by_role("button", name="Import rate card").click()
    alert = page.get_by_role("alert")
    await expect(alert).to_contain_text("2 problems")
    await expect(alert).to_contain_text("$.currency")
    await expect(alert).to_contain_text("$.vehicles[1].prices.minimum")
    assert await hosted_service.get_rate_card(db, partner_id) == example_card()

    good = example_card(min_lead_hours=6)
    await page.get_by_label("Or paste the card (JSON)").fill(json.dumps(good))
    await page.get_by_role("button", name="Import rate card").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved")
    await expect(page.locator("#min_lead_hours")).to_have_value("6")
    assert await hosted_service.get_rate_card(db, partner_id) == good


async def test_the_form_is_usable_on_a_phone(
    open_card: Callable[..., Awaitable[Portal]], make_hosted: HostedFactory
) -> None:
    partner_id = await make_hosted(airports=("INV",), name="Phone Cars")
    page = (await open_card(partner_id, javascript=True, width=390)).page
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0


async def test_without_javascript_another_match_can_be_picked(
    open_card: Callable[..., Awaitable[Portal]], make_hosted: HostedFactory
) -> None:
    partner_id = await make_hosted(airports=("INV",), name="Pick Cars")
    page = (await open_card(partner_id, javascript=False)).page
    await page.get_by_label("To (a town or place)").fill("London")
    await page.get_by_role("button", name="Preview prices").click()
    await expect(page.locator("#preview")).to_contain_text("To London, GB")
    choices = page.get_by_role("group", name="Which London?")
    await expect(choices.get_by_role("radio", name="London, GB")).to_be_checked()
    await choices.get_by_role("radio", name="London, CA").check()
    await page.get_by_role("button", name="Preview prices").click()
    await expect(page.locator("#preview")).to_contain_text("To London, CA")
    await expect(
        page.get_by_role("group", name="Which London?").get_by_role("radio", name="London, CA")
    ).to_be_checked()
