"""The rating page (docs/rules/ratings.md#rating-page) in Chromium at 390 x 844 and at 1280 px, with
JavaScript on and off (the page has no script: both must work the same): the five choices and the comment
fit the phone's width with nothing cut or scrolled sideways, a choice and a comment are sent by the form
alone, the page then shows the rating back, and a second visit cannot rate again."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest
from playwright.async_api import Browser, Page, ViewportSize, expect

from tests.conftest import ClientFactory, PartnerFactory
from tests.ratings.helpers import dropped_off_ride, rating_rows
from tests.servers import LiveServer
from transfers.bookings.rating_link import rating_token
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

SIZES = {"phone": ViewportSize(width=390, height=844), "desktop": ViewportSize(width=1280, height=900)}


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


async def no_sideways_scroll(page: Page) -> None:
    width = await page.evaluate("document.documentElement.scrollWidth") if await _js(page) else None
    if width is not None:
        assert width <= (page.viewport_size or SIZES["phone"])["width"], width
    for box in [await page.locator(sel).first.bounding_box() for sel in ("textarea", "button.send", "fieldset")]:
        assert box is not None and box["x"] >= 0
        assert box["x"] + box["width"] <= (page.viewport_size or SIZES["phone"])["width"], box


async def _js(page: Page) -> bool:
    try:
        await page.evaluate("1")
    except Exception:  # JavaScript off: evaluate is refused
        return False
    return True


async def test_a_traveller_rates_the_ride_with_the_form_alone(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    shoot: Callable[[Page, str], Awaitable[None]],
) -> None:
    _, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    url = f"{service.url}/r/{rating_token(reservation_no)}"
    phone = page.viewport_size == SIZES["phone"]
    await page.goto(url)
    await expect(page.get_by_role("heading", name="How was your transfer?")).to_be_visible()
    await expect(page.get_by_text(reservation_no)).to_be_visible()
    for n in range(1, 6):
        await expect(page.get_by_role("radio", name=f"{n} star", exact=False).first).to_be_visible()
    await no_sideways_scroll(page)

    await page.get_by_role("radio", name="4 stars").check()
    await page.get_by_label("A comment").fill("Punctual and kind — ünïcødé ✈")
    if phone:
        await shoot(page, "rating-page")
    await page.get_by_role("button", name="Send my rating").click()
    await expect(page.get_by_role("heading", name="Thank you")).to_be_visible()
    await expect(page.get_by_text("Your rating was recorded.")).to_be_visible()
    await expect(page.get_by_label("4 out of 5 stars")).to_be_visible()
    await expect(page.get_by_text("Punctual and kind — ünïcødé ✈")).to_be_visible()
    assert await page.locator("form").count() == 0
    if phone:
        await shoot(page, "rating-page-thanks")
    stored = await rating_rows(db, row["id"])
    assert [(r["stars"], r["comment"], r["source"]) for r in stored] == [
        (4, "Punctual and kind — ünïcødé ✈", "traveller")
    ]

    await page.goto(url)  # a second visit shows the rating, offers no form
    await expect(page.get_by_text("A ride is rated once")).to_be_visible()
    assert await page.locator("form").count() == 0


async def test_sending_without_a_choice_is_stopped_and_a_too_long_comment_is_cut_by_the_field(
    page: Page,
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    await page.goto(f"{service.url}/r/{rating_token(reservation_no)}")
    await page.get_by_label("A comment").fill("x" * 1200)
    assert len(await page.get_by_label("A comment").input_value()) == 1000  # maxlength, no script needed
    await page.get_by_role("button", name="Send my rating").click()  # no stars: the browser keeps the form
    await expect(page.get_by_role("heading", name="How was your transfer?")).to_be_visible()
    assert await rating_rows(db, row["id"]) == []
