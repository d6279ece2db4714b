"""The agency portal in several currencies (docs/rules/agency-portal.md#currencies, docs/rules/fx.md), over
real HTTP against partners quoting in EUR, JPY and KWD and the sandbox rates: ``Book`` asks for the
currency only when the agency holds several wallets and shows each converted offer's rate and date;
``Wallet`` shows every wallet and each one's statement and CSV; amounts are written for the reader's
locale with the currency's own decimals."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from decimal import Decimal

from tests.agency.conftest import MakeAgency, SignedIn
from tests.api.test_search_currencies import vehicle
from tests.conftest import PartnerFactory
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

IATA = "BOH"  # these partners only: no other test's partner serves Bournemouth while these run
NBSP = "\u00a0"


def trip(clock: ShiftedClock, **overrides: str) -> dict[str, str]:
    day = (clock.now() + timedelta(days=10)).strftime("%Y-%m-%d")
    form = {
        "airport": IATA,
        "place": "Bournemouth",
        "lat": "50.7192",
        "lng": "-1.8808",
        "pickup_date": day,
        "pickup_time": "14:30",
        "adult": "2",
        "children": "0",
        "infant": "0",
    }
    return form | overrides


async def partners(make_partner: PartnerFactory) -> None:
    await make_partner(airports=(IATA,), markup="10", name="Euro Cars", vehicles=[vehicle("eur-1", "56.05", "EUR")])
    await make_partner(airports=(IATA,), name="Yen Cars", vehicles=[vehicle("jpy-1", "10010", "JPY")])


async def test_book_asks_for_the_currency_and_shows_each_offers_rate_and_date(
    make_agency: MakeAgency,
    signed_in: SignedIn,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    await partners(make_partner)
    agency = await make_agency()
    await client_service.add_wallet(db, clock, agency.client_id, "GBP", default=False, actor="tests")
    web = await signed_in(agency.agent)
    form = (await web.get("/agency/book")).text
    assert '<select id="currency" name="currency"' in form
    assert form.index('<option value="EUR"') < form.index('<option value="GBP"')  # the default wallet's first

    offers = await web.post("/agency/book", trip(clock, currency="GBP"))
    assert offers.status_code == 200, offers.text
    day = clock.now().strftime("%d %b %Y")
    # docs/integrators/currencies.md: 56.05 EUR x 0.8563 = 48.00 GBP, x 1.10 = 52.80 GBP
    assert "£52.80" in offers.text
    assert f"Converted from EUR at 1 EUR = 0.8563 GBP, the sandbox rate of {day}" in offers.text
    # 10010 JPY at the derived 0.00527441 = 52.80 GBP (no markup)
    assert f"Converted from JPY at 1 JPY = 0.00527441 GBP, the sandbox rate of {day}" in offers.text

    # a currency the agency holds no wallet in (a form edited by hand): the API's 1325 beside the field
    refused = await web.post("/agency/book", trip(clock, currency="USD"))
    assert refused.status_code == 422
    assert 'id="currency-error"' in refused.text and "SEARCH_CURRENCY_INVALID, 1325" in refused.text

    # the default wallet's currency: the EUR quote unconverted, the yen one converted to euros
    euros = await web.post("/agency/book", trip(clock, currency="EUR"))
    assert "€61.66" in euros.text and "Converted from JPY at 1 JPY = 0.00615953 EUR" in euros.text


async def test_one_wallet_asks_no_currency_and_amounts_follow_the_readers_locale(
    make_agency: MakeAgency, signed_in: SignedIn, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    await partners(make_partner)
    web = await signed_in((await make_agency(currency="JPY", balance="100000")).agent)
    form = (await web.get("/agency/book")).text
    assert 'name="currency"' not in form
    offers = await web.post("/agency/book", trip(clock))
    # 56.05 EUR x 162.35 = 9099.7175 -> 9100 JPY, x 1.10 = 10010 JPY: no decimals
    assert "¥10,010" in offers.text and "¥10,010.00" not in offers.text
    german = await web.http.post(
        "/agency/book", data={**trip(clock), "csrf_token": web.csrf}, headers={"Accept-Language": "de-DE,de;q=0.9"}
    )
    assert f"10.010{NBSP}¥" in german.text


async def test_the_wallet_page_shows_every_wallet_and_each_ones_statement(
    make_agency: MakeAgency, signed_in: SignedIn, db: Database, clock: ShiftedClock
) -> None:
    agency = await make_agency(balance="1000.00")
    await client_service.add_wallet(db, clock, agency.client_id, "KWD", default=False, actor="tests")
    await client_service.top_up(db, clock, agency.client_id, Decimal("20.465"), actor="tests", currency="KWD")
    web = await signed_in(agency.agent)
    page = (await web.get("/agency/wallet")).text
    assert 'id="balance-EUR">€1,000.00<' in page
    assert f'id="balance-KWD">KWD{NBSP}20.465<' in page
    assert 'id="balance">€1,000.00<' in page  # the default wallet's statement first
    kwd = await web.get("/agency/wallet", params={"currency": "KWD"})
    assert f'id="balance">KWD{NBSP}20.465<' in kwd.text and "Top-up" in kwd.text
    assert (await web.get("/agency/wallet", params={"currency": "USD"})).status_code == 404

    answer = await web.get("/agency/wallet.csv", params={"currency": "KWD"})
    assert answer.status_code == 200 and "-KWD-" in answer.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [(r["kind"], r["amount"], r["currency"], r["balance_after"]) for r in rows] == [
        ("top_up", "20.465", "KWD", "20.465")
    ]
    assert (await web.get("/agency/wallet.csv", params={"currency": "USD"})).status_code == 404
