"""The quality pages in a real browser (docs/rules/quality.md#who-sees-what), over rides driven
through the reverse API (``tests/quality``): the console's ``Quality`` page (every partner, per
airport, charts drawn in the page, the CSV, each count opening exactly its bookings) and the portal's
(its own numbers, the formula in words, what would raise its score), both with JavaScript off and
nothing loaded from another host."""

from __future__ import annotations

import csv
import io
from typing import Any

from playwright.async_api import Browser, BrowserContext, Locator, Page, expect
from sqlalchemy import select

from tests.browser.conftest import PASSWORD, sign_in
from tests.quality.test_quality_views import scored  # noqa: F401  (the fixture)
from tests.quality.test_scorecards import world  # noqa: F401  (the fixture)
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import partners
from transfers.hosted.users import create_partner_user
from transfers.quality.rules import COUNT_NAMES


async def no_script_context(browser: Browser, service: LiveServer, seen: list[str]) -> BrowserContext:
    context = await browser.new_context(
        java_script_enabled=False, accept_downloads=True, viewport={"width": 1360, "height": 900}
    )
    context.set_default_timeout(15_000)
    context.on("request", lambda request: seen.append(request.url))
    return context


async def partner_name(db: Database, partner_id: int) -> str:
    async with db.read() as conn:
        name: str = (await conn.execute(select(partners.c.name).where(partners.c.id == partner_id))).scalar_one()
    return name


def count_link(row: Locator, count: str) -> Locator:
    """A count's link in a row of the Quality page: its cell is the count's column (the header names it)."""
    return row.locator("td").nth(2 + COUNT_NAMES.index(count)).get_by_role("link")


async def three_charts(page: Page, scope: str) -> None:
    charts = page.locator(f"{scope} svg[role=img]")
    await expect(charts).to_have_count(3)
    for title in ("On-time rate, 26 weeks", "Decline rate, 26 weeks", "Incident rate, 26 weeks"):
        await expect(page.locator(scope).get_by_role("img", name=title)).to_be_visible()
    assert await page.locator(f"{scope} svg polyline, {scope} svg circle").count() >= 3  # the latest points


async def test_the_console_quality_page_its_charts_csv_and_each_counts_bookings(
    browser: Browser,
    service: LiveServer,
    db: Database,
    make_operator: Any,
    shoot: Any,
    scored: dict[str, Any],  # noqa: F811
) -> None:
    partner_id = scored["partner_id"]
    name = await partner_name(db, partner_id)
    operator = await make_operator("support")
    seen: list[str] = []
    context = await no_script_context(browser, service, seen)
    try:
        page = await context.new_page()
        console = f"{service.url}/console"
        await sign_in(page, console, operator.email, operator.password)
        await page.wait_for_url(f"{console}/")
        await page.get_by_role("navigation", name="Main").get_by_role("link", name="Quality").click()
        await expect(page.get_by_role("heading", name="Partner quality")).to_be_visible()
        row = page.locator("#partners tbody tr", has=page.locator(f'a[href="#partner-{partner_id}"]'))
        await expect(row).to_contain_text("87")
        await expect(row).to_contain_text("PROVISIONAL")
        await expect(row).to_contain_text("50 %")  # the on-time rate
        section = f"#partner-{partner_id}"
        await expect(page.locator(section).get_by_role("heading")).to_contain_text(f"{name}: 87")
        await expect(page.locator(f"{section} tbody th", has_text="LHR")).to_be_visible()
        await three_charts(page, section)
        await shoot(page, "console-quality")

        # the CSV: the partner as a whole, then LHR
        async with page.expect_download() as waiting:
            await page.get_by_role("link", name="Download CSV").click()
        rows = list(csv.DictReader(io.StringIO((await (await waiting.value).path()).read_text(encoding="utf-8"))))
        mine = [r for r in rows if r["partner_id"] == str(partner_id)]
        assert [(r["airport"], r["score"], r["on_time"], r["rides"]) for r in mine] == [
            ("*", "87", "2", "4"),
            ("LHR", "87", "2", "4"),
        ]

        # each count opens exactly the bookings it counted
        expected = {
            "on_time": {scored["rides"][n].reservation_no for n in ("punctual", "no_show")},
            "partner_cancelled": {scored["rides"]["cancelled"].reservation_no},
            "requests": {
                scored["rides"][n].reservation_no for n in ("punctual", "backdated", "no_show", "patchy", "cancelled")
            },
            "declined": set(),
        }
        for title, numbers in expected.items():
            await page.goto(f"{service.url}/console/quality")
            link = count_link(row, title)
            await expect(link).to_have_text(str(len(numbers)))
            await link.click()
            await expect(page.get_by_role("heading", name="Bookings")).to_be_visible()
            await expect(page.get_by_role("status")).to_contain_text(f"{len(numbers)} booking")
            listed = set(await page.locator("tbody td.title a").all_inner_texts())
            assert listed == numbers, title
        # from the airport's row too, and a link gone wrong is refused on the page
        await page.goto(f"{service.url}/console/quality")
        lhr = page.locator(f"{section} tbody tr", has=page.locator("th", has_text="LHR"))
        await count_link(lhr, "rides").click()
        await expect(page.get_by_role("status")).to_contain_text("at LHR")
        await expect(page.locator("tbody td.title a")).to_have_count(4)
        answer = await page.goto(f"{service.url}/console/bookings?partner={partner_id}&counted=stars&as_of=x")
        assert answer is not None and answer.status == 400
        await expect(page.get_by_role("alert")).to_contain_text("not a scorecard count")
        assert all(url.startswith(service.url) for url in seen), [u for u in seen if not u.startswith(service.url)]
    finally:
        await context.close()


async def test_the_portal_quality_page_shows_only_its_own_and_what_would_raise_it(
    browser: Browser,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    shoot: Any,
    scored: dict[str, Any],  # noqa: F811
) -> None:
    partner_id = scored["partner_id"]
    email = f"quality-{partner_id}@partner.example"
    await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
    seen: list[str] = []
    context = await no_script_context(browser, service, seen)
    try:
        page = await context.new_page()
        portal = f"{service.url}/partner"
        await page.goto(f"{portal}/login")
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.wait_for_url(f"{portal}/new")
        await page.get_by_role("navigation", name="Main").get_by_role("link", name="Quality").click()
        await expect(page.get_by_role("heading", name="Your quality")).to_be_visible()
        await expect(page.get_by_role("heading", name="Your score: 87")).to_be_visible()
        counts = page.locator("#counts")
        await expect(counts.get_by_role("row", name="On time")).to_contain_text("2 (driver at the pickup")
        await expect(counts.get_by_role("row", name="Covered")).to_contain_text("rate 75 %")
        raise_it = page.locator("#raise + ul")
        await expect(raise_it).to_contain_text("more good ride")
        await expect(raise_it).to_contain_text("from 87 to 88")
        await expect(raise_it).to_contain_text("on time")  # where most points go: 2 of 4 rides on time
        await expect(raise_it).to_contain_text("more rides: 20 rides in the window")
        await expect(page.locator("#components tbody tr")).to_have_count(5)
        await expect(page.locator("#airports")).to_contain_text("LHR")
        await three_charts(page, "main")
        await expect(page.get_by_role("heading", name="How the score is computed")).to_be_visible()
        await expect(page.locator("main")).to_contain_text("plus 20 x 85 %, over rides + 20")
        await shoot(page, "portal-quality")
        assert all(url.startswith(service.url) for url in seen)
    finally:
        await context.close()
