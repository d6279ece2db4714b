"""``Change`` and ``Report a problem`` on an agency booking's page in a real browser, with JavaScript
on and off (docs/rules/agency-portal.md#pages, #once): the API's rules beside the fields in the GOV.UK
pattern (an invalid phone, a 10,000-character description, a change the rules refuse), the happy
path, a double click (on ``Book``, ``Change``, ``Report the problem``, ``Cancel booking``) and ``Back``
+ the button again doing the work once, a post without its CSRF
token refused, another agency's booking a 404, the forms readable at 390 px; the wallet's statement
and its CSV download after a booking and its cancellation; nothing asked of
another host. Screenshots for the docs (``shoot``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from playwright.async_api import BrowserContext, Page, expect

from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.agency.test_agency_once import DRIVER, amendments_requested, approved, audits
from tests.browser.test_agency_portal import (  # noqa: F401  (contexts: the fixture)
    contexts,
    fill_trip,
    overflow,
    signed_in_page,
    wider_than_screen,
)
from tests.conftest import PartnerFactory
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, incidents, ledger_entries, wallets

Shoot = Callable[[Page, str], Awaitable[None]]
Contexts = Callable[..., Awaitable[BrowserContext]]


async def book_with_coordinates(page: Page, service: LiveServer, clock: ShiftedClock) -> str:
    """Book a transfer, pressing ``Book`` with a double click (the one-time key: one booking)."""
    await page.goto(f"{service.url}/agency/book")
    await fill_trip(page, clock)
    await page.get_by_label("Destination").fill("Trafalgar Square")
    await page.locator("summary", has_text="Type the coordinates instead").click()
    await page.get_by_label("Latitude").fill("51.5080")
    await page.get_by_label("Longitude").fill("-0.1281")
    await page.get_by_role("button", name="Find transfers").click()
    await page.get_by_role("button", name="Choose").first.click()
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Surname").fill("Lovelace")
    await page.get_by_label("Passenger email").fill("ada@example.com")
    await page.get_by_label("Passenger phone").fill("+447911123456")
    await page.get_by_label("Flight number").fill("BA117")
    await page.get_by_role("button", name="Book", exact=True).dblclick()
    await expect(page.get_by_role("heading", name="Booking ")).to_be_visible()
    heading = await page.get_by_role("heading", level=1).inner_text()
    return heading.removeprefix("Booking ").strip()


async def money_moves(db: Database, client_id: int) -> list[str]:
    from sqlalchemy import select

    async with db.read() as conn:
        kinds = await conn.execute(
            select(ledger_entries.c.kind)
            .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
            .where(wallets.c.client_id == client_id)
        )
        return sorted(kinds.scalars().all())


async def fits(page: Page, phone: bool) -> None:
    if phone:
        assert await overflow(page) == 0, (page.url, await wider_than_screen(page))


async def count_incidents(db: Database, reservation_no: str) -> int:
    from sqlalchemy import func, select

    async with db.read() as conn:
        found = await conn.execute(
            select(func.count())
            .select_from(incidents.join(bookings, bookings.c.id == incidents.c.booking_id))
            .where(bookings.c.reservation_no == reservation_no)
        )
        return int(found.scalar_one())


async def back_and_send_again(page: Page, button: str) -> None:
    """``Back`` to the form, and its button again (the form as the browser shows it then: restored
    with its key, or shown afresh); the answer is a page, never a server error."""
    await page.go_back()
    if await page.get_by_role("button", name=button).count():
        await page.get_by_role("button", name=button).click()
        await page.wait_for_load_state()
    await shows_a_page_not_an_error(page)


async def shows_a_page_not_an_error(page: Page) -> None:
    """After a repeat: the booking's page, or the form with the rule in words; never a server error."""
    heading = await page.get_by_role("heading", level=1).inner_text()
    assert heading.startswith(("Booking ", "Change booking ", "Report a problem")), heading
    assert "Internal Server Error" not in await page.content()


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
async def test_change_shows_the_rules_beside_the_fields_and_applies_once(
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
    shoot: Shoot,
    javascript: bool,
) -> None:
    await make_partner()
    agency, stranger = await make_agency(), await make_agency()
    user = agency.agent if javascript else agency.admin  # both roles may change a booking
    phone = not javascript  # without JavaScript on a 390 px phone
    page, hosts = await signed_in_page(await contexts(javascript=javascript, phone=phone), service, user)
    reservation_no = await book_with_coordinates(page, service, clock)
    assert await money_moves(db, agency.client_id) == ["credit_topup", "debit_booking"]
    await page.get_by_role("link", name="Change", exact=True).click()
    await expect(page.get_by_role("heading", name=f"Change booking {reservation_no}")).to_be_visible()
    await page.get_by_label("Passenger phone").fill("x")
    await page.get_by_label("Pickup date").fill("2001-01-01")
    await page.get_by_role("button", name="Send the change").click()
    await expect(page.get_by_role("heading", name="There is a problem")).to_be_visible()
    await expect(page.locator("#pickup_date-error")).to_contain_text("1317")  # the API's first refusal
    await expect(page.get_by_label("Passenger phone")).to_have_value("x")  # what was typed is kept
    assert await amendments_requested(db, reservation_no) == (0, 0)
    await page.get_by_label("Pickup date").fill((clock.now() + timedelta(days=10)).strftime("%Y-%m-%d"))
    await page.get_by_role("button", name="Send the change").click()
    await expect(page.locator("#phone-error")).to_contain_text("PASSENGER_PHONE_INVALID, 1009")
    await expect(page.locator("#phone")).to_have_attribute("aria-invalid", "true")
    await fits(page, phone)
    if javascript:
        await shoot(page, "agency-change-error")
    await page.goto(f"{service.url}/agency/bookings/{reservation_no}/change")  # a form a GET showed, to go Back to
    await page.get_by_label("Flight number").fill("BA118")
    await page.get_by_role("button", name="Send the change").dblclick()  # a double click
    await expect(page.get_by_role("status")).to_contain_text("The change is sent")
    await expect(page.get_by_text("Latest change")).to_be_visible()
    await fits(page, phone)
    assert await amendments_requested(db, reservation_no) == (1, 1)
    await back_and_send_again(page, "Send the change")
    assert await amendments_requested(db, reservation_no) == (1, 1)
    assert await audits(db, reservation_no, "amend") == 1
    # A new form while the first change waits for the transport company: the API's rule, in words.
    answer = await page.goto(f"{service.url}/agency/bookings/{reservation_no}/change")
    assert answer is not None and answer.status == 200
    await expect(page.get_by_role("heading", name="It cannot be changed now")).to_be_visible()
    await page.get_by_label("Flight number").fill("BA119")
    await page.get_by_role("button", name="Send the change").click()
    await expect(page.get_by_role("alert").last).to_contain_text("AMENDMENT_IN_PROGRESS")
    # A post without its CSRF token: refused, nothing sent.
    await page.locator('form[action$="/change"] input[name="csrf_token"]').evaluate("input => input.remove()")
    async with page.expect_response(lambda r: r.request.method == "POST") as posted:
        await page.get_by_role("button", name="Send the change").click()
    assert (await posted.value).status == 403
    await expect(page.get_by_text("its security token is missing")).to_be_visible()
    assert await amendments_requested(db, reservation_no) == (1, 1)
    # Cancel booking: the fee first, then a double click cancels once, with one refund.
    await page.goto(f"{service.url}/agency/bookings/{reservation_no}/cancel")
    await expect(page.locator("#fee")).to_contain_text("€")
    await fits(page, phone)
    await page.get_by_label("Reason").select_option(index=1)
    await page.get_by_role("button", name="Cancel booking").dblclick()
    await expect(page.locator("#status")).to_have_text("Cancelled")
    assert await money_moves(db, agency.client_id) == ["credit_refund", "credit_topup", "debit_booking"]
    assert await audits(db, reservation_no, "cancel") == 1
    # Wallet: the statement with its currency, and the whole statement as a CSV download.
    await page.get_by_role("navigation", name="Main").get_by_role("link", name="Wallet").click()
    await expect(page.get_by_text(reservation_no).first).to_be_visible()
    await fits(page, phone)
    if javascript:
        await shoot(page, "agency-wallet")
    async with page.expect_download() as downloading:
        await page.get_by_role("link", name="Download the statement (CSV)").click()
    saved = await (await downloading.value).path()
    statement = saved.read_text(encoding="utf-8")
    assert statement.startswith("created_at,kind,amount,currency,balance_after,reservation_no,note")
    assert reservation_no in statement and ",refund,40.00,EUR," in statement and ",top_up,1000.00,EUR," in statement
    # Another agency's booking is not found.
    other, _ = await signed_in_page(await contexts(javascript=javascript), service, stranger.admin)
    refused = await other.goto(f"{service.url}/agency/bookings/{reservation_no}/change")
    assert refused is not None and refused.status == 404
    assert hosts == {urlsplit(service.url).netloc}, hosts


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
async def test_report_a_problem_shows_the_rules_and_reports_once(
    service: LiveServer,
    contexts: Contexts,  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
    shoot: Shoot,
    javascript: bool,
) -> None:
    await make_partner(create_status="APPROVED", driver=DRIVER)
    agency = await make_agency()
    user = agency.admin if javascript else agency.agent  # both roles may report
    page, hosts = await signed_in_page(await contexts(javascript=javascript, phone=not javascript), service, user)
    reservation_no = await book_with_coordinates(page, service, clock)
    assert await money_moves(db, agency.client_id) == ["credit_topup", "debit_booking"]  # one booking, one debit
    await approved(db, reservation_no)
    await page.get_by_role("link", name="Report a problem").click()
    await page.get_by_label("What went wrong").select_option("DRIVER_LATE")
    await page.get_by_label("What happened").fill("Late.")
    await page.get_by_role("button", name="Report the problem").click()  # before the pickup: the window
    await expect(page.get_by_role("alert")).to_contain_text("INCIDENT_NOT_ALLOWED")
    assert await count_incidents(db, reservation_no) == 0
    clock.advance(timedelta(days=10, hours=20))  # after the pickup (10 days ahead, 14:30), inside the 72 h
    page, hosts = await signed_in_page(await contexts(javascript=javascript, phone=not javascript), service, user)
    await page.goto(f"{service.url}/agency/bookings/{reservation_no}/problem")
    await page.get_by_label("What went wrong").select_option("DRIVER_LATE")
    await page.get_by_label("What happened").fill("x" * 10_000)
    await page.get_by_role("button", name="Report the problem").click()
    await expect(page.locator("#description-error")).to_contain_text("INVALID_INCIDENT")
    await expect(page.get_by_role("heading", name="There is a problem")).to_be_visible()
    assert await overflow(page) == 0, await wider_than_screen(page)
    if not javascript:
        await shoot(page, "agency-problem-phone")
    assert await count_incidents(db, reservation_no) == 0
    await page.goto(f"{service.url}/agency/bookings/{reservation_no}/problem")  # a form a GET showed
    await page.get_by_label("What went wrong").select_option("DRIVER_LATE")
    await page.get_by_label("What happened").fill("Forty minutes late; the traveller took a taxi.")
    await page.get_by_role("button", name="Report the problem").dblclick()  # a double click
    await expect(page.get_by_role("status")).to_contain_text("The problem is reported")
    await expect(page.get_by_text("Forty minutes late")).to_be_visible()
    await fits(page, not javascript)
    await back_and_send_again(page, "Report the problem")
    assert await count_incidents(db, reservation_no) == 1
    assert await audits(db, reservation_no, "incident") == 1
    assert hosts == {urlsplit(service.url).netloc}, hosts
