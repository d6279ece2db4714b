"""Several currencies in a real browser (docs/rules/fx.md#console, docs/rules/agency-portal.md#currencies):
the console's ``FX`` page (the rates in use, ``Set rate`` for admins with its refusals beside the fields,
nothing for a support operator), a client's wallets with a top-up per currency in that currency's
decimals, and an agency holding EUR and GBP wallets that books in GBP: the offer's rate and date shown,
the GBP wallet paying, the Wallet page showing both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from decimal import Decimal

import pytest
from playwright.async_api import BrowserContext, expect
from sqlalchemy import delete, select

from tests import ledger_world as world
from tests.agency.conftest import MakeAgency, make_agency  # noqa: F401  (the fixture)
from tests.agency.test_agency_currencies import IATA, partners
from tests.browser.conftest import ConsoleAs
from tests.browser.test_agency_portal import contexts, signed_in_page  # noqa: F401  (the fixture)
from tests.browser.test_console_clients import csrf_of
from tests.conftest import ClientFactory, PartnerFactory
from tests.servers import LiveServer
from transfers import money
from transfers.accounting import service as books
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, bookings, fx_rates, wallets


@pytest.fixture
async def huf_rates(db: Database) -> AsyncIterator[None]:
    """A manual HUF rate is this test's own (no other test converts forints): removed after it."""
    yield
    async with db.write() as conn:
        await conn.execute(delete(fx_rates).where(fx_rates.c.currency == "HUF"))


async def manual_rates(db: Database, currency: str) -> list[Decimal]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(fx_rates.c.rate).where(fx_rates.c.currency == currency, fx_rates.c.source == "manual")
        )
        return [Decimal(r) for r in rows.scalars()]


async def test_an_admin_sets_a_rate_on_the_fx_page_and_a_support_operator_cannot(
    console_as: ConsoleAs, console_url: str, db: Database, clock: ShiftedClock, huf_rates: None
) -> None:
    admin = await console_as("admin")
    page = admin.page
    await page.get_by_role("link", name="FX", exact=True).click()
    await expect(page.get_by_role("heading", name="Exchange rates")).to_be_visible()
    rates = page.locator("#rates")
    await expect(rates.get_by_role("row", name="JPY")).to_contain_text("162.35")
    form = page.locator("form[action='/console/fx/rates']")
    tomorrow = (clock.now() + timedelta(days=1)).date().isoformat()
    for currency, rate, as_of, message in (
        ("EUR", "1", "", "rates are from EUR"),
        ("gbp", "0.86", "", "is not an ISO 4217 currency code"),
        ("HUF", "0", "", "a rate of zero is refused"),
        ("HUF", "-410", "", "a rate is positive"),
        ("HUF", "1e3", "", "is not a rate"),
        ("HUF", "410.25", tomorrow, "after today"),
    ):
        await form.get_by_label("Currency").fill(currency)
        await form.get_by_label("Rate").fill(rate)
        await form.get_by_label("As of").fill(as_of)
        await form.get_by_role("button", name="Set rate").click()
        await expect(page.locator(".error-summary")).to_contain_text(message, ignore_case=True)
        await expect(form.get_by_label("Rate")).to_have_value(rate)  # what was typed is kept
    assert await manual_rates(db, "HUF") == []  # nothing written
    await form.get_by_label("Currency").fill("HUF")
    await form.get_by_label("Rate").fill("410.25")
    await form.get_by_label("As of").fill(clock.now().date().isoformat())
    await form.get_by_role("button", name="Set rate").click()
    await expect(page.get_by_role("status")).to_have_text("The HUF rate is set.")
    await expect(rates.get_by_role("row", name="HUF")).to_contain_text("410.25")
    await expect(rates.get_by_role("row", name="HUF")).to_contain_text("manual")
    async with db.read() as conn:
        audited = (await conn.execute(select(admin_audit.c.actor).where(admin_audit.c.action == "fx.set"))).scalars()
        assert f"operator:{admin.operator.email}" in list(audited)

    support = await console_as("support")
    await support.page.goto(f"{console_url}/fx")
    await expect(support.page.locator("#rates")).to_contain_text("HUF")
    assert await support.page.get_by_role("button", name="Set rate").count() == 0
    forged = await support.page.request.post(
        f"{console_url}/fx/rates",
        form={"csrf_token": await csrf_of(support.page), "currency": "HUF", "rate": "2", "as_of": ""},
    )
    assert forged.status == 403
    assert await manual_rates(db, "HUF") == [Decimal("410.25")]


async def test_a_clients_wallets_each_topped_up_in_its_own_decimals(
    console_as: ConsoleAs, console_url: str, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, _ = await make_client(balance="0")
    await client_service.add_wallet(db, clock, client_id, "JPY", default=False, actor="tests")
    admin = await console_as("admin")
    page = admin.page
    await page.goto(f"{console_url}/clients/{client_id}")
    table = page.locator("#wallets")
    await expect(table.get_by_role("row", name="EUR (default)")).to_contain_text("€0.00")
    await expect(page.locator("#balance-JPY")).to_have_text("¥0")
    form = page.locator("form[action$='/top-up']")
    await form.get_by_label("Currency").select_option("JPY")
    await form.get_by_label("Amount").fill("1000.50")
    await form.get_by_role("button", name="Top up").click()
    await expect(page.locator(".field-error")).to_contain_text("no decimals")
    await expect(form.get_by_label("Amount")).to_have_value("1000.50")
    await expect(form.get_by_label("Currency")).to_have_value("JPY")
    await form.get_by_label("Amount").fill("5000")
    await form.get_by_role("button", name="Top up").click()
    await expect(page.get_by_role("status")).to_have_text("The wallet is topped up.")
    await expect(page.locator("#balance-JPY")).to_have_text("¥5,000")
    await expect(page.locator("#balance-EUR")).to_have_text("€0.00")
    await expect(page.get_by_role("heading", name="Wallet statement: JPY")).to_be_visible()
    await expect(page.locator("#statement + table tbody tr").first).to_contain_text("¥5,000")
    await page.goto(f"{console_url}/clients")
    listed = page.get_by_role("row", name=f"{client_id} Test agency")
    await expect(listed).to_contain_text("€0.00")
    await expect(listed).to_contain_text("¥5,000")
    async with db.read() as conn:
        rows = await conn.execute(select(wallets.c.currency, wallets.c.balance).where(wallets.c.client_id == client_id))
        assert {r.currency: Decimal(r.balance) for r in rows} == {"EUR": Decimal(0), "JPY": Decimal(5000)}


async def test_an_agency_books_in_gbp_and_sees_the_rate_and_both_wallets(
    service: LiveServer,
    contexts: Callable[..., Awaitable[BrowserContext]],  # noqa: F811
    make_agency: MakeAgency,  # noqa: F811
    make_partner: PartnerFactory,
    console_as: ConsoleAs,
    console_url: str,
    db: Database,
    clock: ShiftedClock,
) -> None:
    await partners(make_partner)
    agency = await make_agency(balance="500.00")
    await client_service.add_wallet(db, clock, agency.client_id, "GBP", default=False, actor="tests")
    await client_service.top_up(db, clock, agency.client_id, Decimal("100.00"), actor="tests", currency="GBP")
    page, hosts = await signed_in_page(await contexts(javascript=False), service, agency.agent)
    await page.goto(f"{service.url}/agency/book")
    await page.get_by_label("Airport").fill(IATA)
    await page.get_by_text("Type the coordinates instead").click()
    await page.get_by_label("Latitude").fill("50.7192")
    await page.get_by_label("Longitude").fill("-1.8808")
    await page.get_by_label("Destination").fill("Bournemouth")
    await page.get_by_label("Pickup date").fill((clock.now() + timedelta(days=10)).strftime("%Y-%m-%d"))
    await page.get_by_label("Pickup time").fill("14:30")
    await page.get_by_label("Currency").select_option("GBP")
    await page.get_by_label("Adults").fill("2")
    day = clock.now().strftime("%d %b %Y")
    await page.get_by_role("button", name="Find transfers").click()
    euro = page.locator("ul.offers > li", has_text="Euro Cars")
    await expect(euro.locator(".price")).to_have_text("£52.80")
    await expect(euro.locator(".fx")).to_have_text(
        f"Converted from EUR at 1 EUR = 0.8563 GBP, the sandbox rate of {day}"
    )
    await euro.get_by_role("button", name="Choose").click()
    await expect(page.get_by_role("heading", name="Passenger and flight")).to_be_visible()
    await page.get_by_label("First name").fill("Ada")
    await page.get_by_label("Surname").fill("Lovelace")
    await page.get_by_label("Passenger email").fill("ada@example.com")
    await page.get_by_label("Passenger phone").fill("+447911123456")
    await page.get_by_label("Flight number").fill("BA117")
    await page.get_by_role("button", name="Book", exact=True).click()
    await expect(page.get_by_role("heading", name="Booking ")).to_be_visible()
    await expect(page.get_by_role("row", name="Price")).to_contain_text("£52.80")
    await expect(page.get_by_role("row", name="Price")).to_contain_text("0.8563")
    reservation_no = (await page.get_by_role("heading", level=1).inner_text()).removeprefix("Booking ").strip()

    await page.get_by_role("link", name="Wallet", exact=True).click()
    await expect(page.locator("#balance-EUR")).to_have_text("€500.00")
    await expect(page.locator("#balance-GBP")).to_have_text("£47.20")  # 100.00 - 52.80: the GBP wallet paid
    await page.get_by_role("link", name="Show the GBP statement").click()
    await expect(page.locator("#balance")).to_have_text("£47.20")
    await expect(page.get_by_role("cell", name="-£52.80")).to_be_visible()
    assert hosts == {service.url.split("://", 1)[1]}  # nothing loaded from another host

    # the ride done, the platform holds 48.00 GBP and owes 56.05 EUR more (docs/rules/fx.md#position): the
    # console's FX page shows the FX accounts' balances, each in its currency
    async with db.read() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
    before = dict(await books.fx_position(db))
    await world.complete(db, int(booking_id), clock.now())
    after = dict(await books.fx_position(db))
    assert after["GBP"] - before.get("GBP", Decimal(0)) == Decimal("48.00")
    assert after["EUR"] - before.get("EUR", Decimal(0)) == Decimal("-56.05")
    console = (await console_as("support")).page
    await console.goto(f"{console_url}/bookings/{reservation_no}")
    price = console.get_by_role("row", name="Price", exact=False).first
    await expect(price).to_contain_text("£52.80 (partner's net €56.05; Converted from EUR at 1 EUR = 0.8563 GBP")
    await console.goto(f"{console_url}/fx")
    for currency in ("GBP", "EUR"):
        shown = money.for_people(after[currency], currency, "en_US")
        await expect(console.locator(f"#position-{currency}")).to_have_text(shown)
