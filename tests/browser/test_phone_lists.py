"""Lists on a 390 x 844 phone (docs/console/index.md#phones): the agency's Bookings, the console's
Bookings, the partner portal's New and Statements show the first row's status, pickup and price (or
the closing balance) on the first screen, without scrolling sideways; at 1280 px they stay tables
with their header row.
Screenshots for the docs (``shoot``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.browser.conftest import MakeOperator, sign_in
from tests.browser.test_agency_portal import PHONE, Shoot, contexts, overflow, signed_in_page  # noqa: F401
from tests.browser.test_partner_portal import PASSWORD, book
from tests.browser.test_statements_pages import partner_with_closed_month
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.hosted.users import create_partner_user

Contexts = Callable[..., Awaitable[BrowserContext]]
FIRST_ROW = "table.cards tbody tr:first-child"


async def on_first_screen(page: Page, labels: tuple[str, ...]) -> None:
    """Each named cell of the first row is visible and ends above the phone's first screen's bottom."""
    assert await overflow(page) == 0
    for label in labels:
        cell = page.locator(f'{FIRST_ROW} td[data-label="{label}"]')
        await expect(cell).to_be_visible()
        box = await cell.bounding_box()
        assert box is not None and box["y"] + box["height"] <= PHONE["height"], (label, box)
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], (label, box)


async def phone_page(contexts: Contexts, javascript: bool = True) -> Page:  # noqa: F811
    return await (await contexts(phone=True, javascript=javascript)).new_page()


@pytest.mark.parametrize("javascript", [True, False])
async def test_agency_bookings_on_a_phone(
    javascript: bool,
    http: httpx.AsyncClient,
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    shoot: Shoot,
) -> None:
    await make_partner()
    agency = await make_agency()
    found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(agency.api_key))).json()
    booked = await http.post(
        "/api/v1/booking-api/booking", json=booking_body(found["search_id"]), headers=bearer(agency.api_key)
    )
    assert booked.status_code == 200, booked.text
    page, _ = await signed_in_page(await contexts(phone=True, javascript=javascript), service, agency.agent)
    await on_first_screen(page, ("Status", "Pickup", "Price"))
    if not javascript:
        await shoot(page, "agency-bookings-phone")
    wide, _ = await signed_in_page(await contexts(javascript=javascript), service, agency.agent)
    header = wide.get_by_role("columnheader", name="Status")
    await expect(header).to_be_visible()  # at 1280 px a table with its header row


async def test_console_bookings_on_a_phone(
    http: httpx.AsyncClient,
    contexts: Contexts,  # noqa: F811
    make_operator: MakeOperator,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    console_url: str,
    shoot: Shoot,
) -> None:
    await make_partner()
    _, key = await make_client()
    found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
    await http.post("/api/v1/booking-api/booking", json=booking_body(found["search_id"]), headers=bearer(key))
    operator = await make_operator("support")
    page = await phone_page(contexts)
    await sign_in(page, console_url, operator.email, operator.password)
    await page.wait_for_url(f"{console_url}/")
    await page.goto(f"{console_url}/bookings")
    await on_first_screen(page, ("Status", "Pickup", "Total"))
    await shoot(page, "console-bookings-phone")
    wide = await (await contexts()).new_page()
    await sign_in(wide, console_url, operator.email, operator.password)
    await wide.wait_for_url(f"{console_url}/")
    await wide.goto(f"{console_url}/bookings")
    await expect(wide.get_by_role("columnheader", name="Status")).to_be_visible()  # 1280 px: a table


async def _portal_phone(
    contexts: Contexts,  # noqa: F811
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    partner_id: int,
    javascript: bool,
) -> Page:
    email = f"phone-{partner_id}-{int(javascript)}@partner.example"
    await create_partner_user(db, clock, partner_id=partner_id, email=email, password=PASSWORD, actor="tests")
    page = await phone_page(contexts, javascript)
    await page.goto(f"{service.url}/partner/login")
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{service.url}/partner/new")
    return page


@pytest.mark.parametrize("javascript", [True, False])
async def test_partner_new_and_statements_on_a_phone(
    javascript: bool,
    http: httpx.AsyncClient,
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
    shoot: Shoot,
) -> None:
    _, key = await make_client()
    name = f"Sumburgh Phone Cars {int(javascript)}"
    _, partner_id, _ = await make_partner(airports=("LSI",), name=name, create_status="PENDING")
    lerwick = {"type": "POINT", "lat": 60.1550, "lng": -1.1450, "name": "Lerwick"}
    await book(http, key, "LSI", name, point=lerwick)
    page = await _portal_phone(contexts, service, db, clock, partner_id, javascript)
    await on_first_screen(page, ("Status", "Pickup", "Your price"))
    if javascript:
        await shoot(page, "portal-new-phone")
    closed_partner, _ = await partner_with_closed_month(db, clock, make_client, make_partner)
    statements = await _portal_phone(contexts, service, db, clock, closed_partner, javascript)
    await statements.goto(f"{service.url}/partner/statements")
    await on_first_screen(statements, ("Status", "Closing"))
    wide = await (await contexts(javascript=javascript)).new_page()
    await wide.goto(f"{service.url}/partner/login")
    await wide.get_by_label("Email").fill(f"phone-{partner_id}-{int(javascript)}@partner.example")
    await wide.get_by_label("Password").fill(PASSWORD)
    await wide.get_by_role("button", name="Sign in").click()
    await wide.wait_for_url(f"{service.url}/partner/new")
    await expect(wide.get_by_role("columnheader", name="Your price")).to_be_visible()  # 1280 px: a table
