"""Searching and booking in a currency (docs/rules/fx.md#search, docs/rules/fx.md#booking), over real HTTP
against partners quoting in EUR, GBP, JPY and KWD, with the sandbox rates (EUR -> GBP 0.8563, JPY
162.35, KWD 0.3321, dated today)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select
from structlog.testing import capture_logs

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer
from transfers.clients import service as client_service
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, fx_rates, wallets
from transfers.fx import service as fx_service

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IATA = "LTN"  # these partners only: no other test's partner serves it while these run


def vehicle(vehicle_id: str, price: str, currency: str, extras: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "id": vehicle_id,
        "make": "Toyota",
        "model": "Corolla",
        "type": "SEDAN",
        "price": price,
        "currency": currency,
        "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
        "extras": extras or [],
    }


EURO_EXTRAS = [
    {"id": "child-seat", "name": "Child seat", "price": "5.00", "pricing_type": "PER_ITEM"},
    {"id": "meet", "name": "Meet & greet", "price": "12.50", "pricing_type": "PER_BOOKING"},
]


async def four_partners(make_partner: PartnerFactory) -> dict[str, Any]:
    """Málaga's EUR partner (markup 10 %), a GBP, a JPY and a KWD one (no markup)."""
    euro, euro_id, _ = await make_partner(
        airports=(IATA,), markup="10", name="Euro Cars", vehicles=[vehicle("eur-1", "56.05", "EUR", EURO_EXTRAS)]
    )
    await make_partner(airports=(IATA,), name="Pound Cars", vehicles=[vehicle("gbp-1", "45.00", "GBP")])
    await make_partner(airports=(IATA,), name="Yen Cars", vehicles=[vehicle("jpy-1", "10010", "JPY")])
    await make_partner(airports=(IATA,), name="Dinar Cars", vehicles=[vehicle("kwd-1", "20.465", "KWD")])
    return {"euro": euro, "euro_id": euro_id}


async def search(http: httpx.AsyncClient, key: str, **body: Any) -> httpx.Response:
    return await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": IATA}, **body), headers=bearer(key)
    )


def by_company(answer: dict[str, Any], key: str = "vehicles") -> dict[str, dict[str, Any]]:
    return {v["company"]: v for v in answer[key]}


def sandbox_fx(source: str, rate: str, today: str, to: str = "GBP") -> dict[str, str]:
    return {"from_currency": source, "to_currency": to, "rate": rate, "source": "sandbox", "as_of": today}


async def wallet_balances(db: Database, client_id: int) -> dict[str, Decimal]:
    async with db.read() as conn:
        rows = await conn.execute(select(wallets.c.currency, wallets.c.balance).where(wallets.c.client_id == client_id))
        return {str(r.currency): Decimal(r.balance) for r in rows}


async def test_a_gbp_agency_sees_every_quote_converted_line_by_line_then_marked_up(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    _, key = await make_client(currency="GBP")
    await four_partners(make_partner)
    response = await search(http, key)
    assert response.status_code == 200, response.text
    today = clock.now().date().isoformat()
    found = by_company(response.json())
    # 56.05 EUR x 0.8563 = 47.995615 -> 48.00 GBP, then x 1.10 = 52.80
    euro = found["Euro Cars"]
    assert (euro["price"], euro["currency"], euro["fx"]) == (52.8, "GBP", sandbox_fx("EUR", "0.8563", today))
    # each extra's unit price by itself: 5.00 -> 4.28 -> 4.71; 12.50 -> 10.70 -> 11.77
    assert [(e["name"], e["price"]) for e in euro["extra_services"]] == [("Child seat", 4.71), ("Meet & greet", 11.77)]
    # a derived rate, 6 significant digits: 0.8563 / 162.35 = 0.00527441; 10010 x that = 52.7968... -> 52.80
    yen = found["Yen Cars"]
    assert (yen["price"], yen["currency"], yen["fx"]) == (52.8, "GBP", sandbox_fx("JPY", "0.00527441", today))
    # 0.8563 / 0.3321 = 2.57844; 20.465 KWD (three decimals on the wire) x that = 52.7677... -> 52.77
    dinar = found["Dinar Cars"]
    assert (dinar["price"], dinar["fx"]) == (52.77, sandbox_fx("KWD", "2.57844", today))
    # quoted in the search's currency: nothing converted
    assert (found["Pound Cars"]["price"], found["Pound Cars"]["fx"]) == (45.0, None)
    assert [v["company"] for v in response.json()["vehicles"]] == ["Pound Cars", "Dinar Cars", "Euro Cars", "Yen Cars"]


async def test_the_booking_keeps_the_searched_price_and_tells_the_partner_its_own(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    """The client's default wallet is EUR; it also holds GBP and searches in GBP: the GBP wallet pays."""
    client_id, key = await make_client(currency="EUR", balance="500.00")
    await client_service.add_wallet(db, clock, client_id, "GBP", default=False, actor="tests")
    await client_service.top_up(db, clock, client_id, Decimal("100.00"), actor="tests", currency="GBP")
    partners = await four_partners(make_partner)
    found = (await search(http, key, currency="GBP")).json()
    euro = by_company(found)["Euro Cars"]
    seat, meet = (e["id"] for e in euro["extra_services"])
    extras = [{"id": seat, "quantity": 2}, {"id": meet, "quantity": 1}]
    created = await http.post(
        BOOKING, json=booking_body(found["search_id"], euro["vehicle_id"], extra_services=extras), headers=bearer(key)
    )
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    # the shown lines: 52.80 + 2 x 4.71 + 11.77
    assert booking["price"] == {"total": "73.99", "currency": "GBP", "fx": euro["fx"]}
    assert await wallet_balances(db, client_id) == {"EUR": Decimal("500.00"), "GBP": Decimal("26.01")}
    # the partner is told its own price in its own currency: 56.05 + 2 x 5.00 + 12.50
    (call,) = partners["euro"].calls("/booking/create")
    assert call.body["price"] == {"total": "78.55", "currency": "EUR"}
    async with db.read() as conn:
        row = (await conn.execute(select(bookings).where(bookings.c.reservation_no == booking["reservation_no"]))).one()
    # net_total: the converted net lines, 48.00 + 2 x 4.28 + 10.70, in the booking's currency
    assert (row.total, row.net_total, row.currency) == (Decimal("73.99"), Decimal("67.26"), "GBP")
    assert (row.partner_currency, row.partner_net_total, row.fx) == ("EUR", Decimal("78.55"), euro["fx"])
    read = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    assert read.json()["price"] == booking["price"]


@pytest.fixture
async def sek_rates(db: Database, service: LiveServer) -> AsyncIterator[None]:
    """Manual SEK and NOK rates are this module's own: removed after the test, and the service's cache too."""
    yield
    async with db.write() as conn:
        await conn.execute(delete(fx_rates).where(fx_rates.c.currency.in_(("SEK", "NOK"))))
    tables = svc_of(service).fx_rates
    if tables is not None:
        tables._read_at = None  # the next search reads the rates again


async def test_the_price_is_locked_for_the_search_lifetime_and_stale_rates_leave_offers_out(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
    settings: Any,
    sek_rates: None,
) -> None:
    _, key = await make_client(currency="EUR")
    today = clock.now().date()
    await fx_service.set_rate(db, clock, settings, "SEK", "11.50", None, actor="tests")
    await fx_service.set_rate(db, clock, settings, "NOK", "11.70", today - timedelta(days=5), actor="tests")
    clock.advance(timedelta(seconds=settings.fx_cache_seconds + 1))  # the service's cached rates are read again
    await make_partner(airports=(IATA,), name="Krona Cars", vehicles=[vehicle("sek-1", "575.00", "SEK")])
    await make_partner(airports=(IATA,), name="Krone Cars", vehicles=[vehicle("nok-1", "575.00", "NOK")])
    await make_partner(airports=(IATA,), name="Koruna Cars", vehicles=[vehicle("czk-1", "1200.00", "CZK")])
    with capture_logs() as logs:
        found = (await search(http, key)).json()
    # SEK -> EUR: 1 / 11.50 = 0.0869565; 575.00 x that = 49.9999875 -> 50.00 EUR
    assert [(v["company"], v["price"], v["fx"]["rate"]) for v in found["vehicles"]] == [
        ("Krona Cars", 50.0, "0.0869565")
    ]
    # NOK's rate is 5 days old (over 4) and CZK has none: left out, logged, never an error
    unavailable = {(e["from_currency"], e["reason"]) for e in logs if e["event"] == "fx_rate_unavailable"}
    assert unavailable == {("NOK", "stale"), ("CZK", "missing")}
    # the rate moves before the booking: the booked price is the searched one, converted at the searched rate
    await fx_service.set_rate(db, clock, settings, "SEK", "12.00", None, actor="tests")
    clock.advance(timedelta(seconds=settings.fx_cache_seconds + 1))
    created = await http.post(BOOKING, json=booking_body(found["search_id"], 1), headers=bearer(key))
    assert created.status_code == 200, created.text
    assert created.json()["booking"]["price"]["total"] == "50.00"
    assert created.json()["booking"]["price"]["fx"]["rate"] == "0.0869565"
    again = (await search(http, key)).json()
    assert [v["price"] for v in again["vehicles"]] == [47.92]  # 575.00 / 12.00 = 47.9166... at today's rate


async def test_reverse_api_clients_with_and_without_currency(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    _, key = await make_client(pay_type="reverse_api")
    await four_partners(make_partner)
    own = (await search(http, key)).json()
    assert {(v["currency"], v["fx"] is None) for v in own["vehicles"]} == {
        ("EUR", True),
        ("GBP", True),
        ("JPY", True),
        ("KWD", True),
    }
    in_yen = await search(http, key, currency="JPY")
    assert in_yen.status_code == 200, in_yen.text
    prices = {v["company"]: (v["price"], v["currency"]) for v in in_yen.json()["vehicles"]}
    # 56.05 EUR x 162.35 = 9099.7175 -> 9100 JPY, x 1.10 = 10010; 45.00 GBP x 189.595 = 8531.775 -> 8532
    assert prices["Euro Cars"] == (10010, "JPY") and prices["Pound Cars"] == (8532, "JPY")
    assert prices["Yen Cars"] == (10010, "JPY")
    # a currency the service does not know
    refused = await search(http, key, currency="XYZ")
    assert refused.status_code == 422 and refused.json()["code"] == 1325


@pytest.mark.parametrize(
    "value",
    [1, 826, True, False, "gbp", "Gbp", "GBPX", "GB", "", " GBP", "ＧＢＰ", "ĞBP", "XAU", ["GBP"], {"c": "GBP"}],
)
async def test_ugly_currencies_are_1325(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, value: Any
) -> None:
    _, key = await make_client(currency="GBP")
    response = await search(http, key, currency=value)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == 1325


async def test_a_currency_without_a_wallet_is_1325_and_null_is_the_default(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(currency="GBP")
    await four_partners(make_partner)
    refused = await search(http, key, currency="EUR")  # a real currency, but no EUR wallet
    assert refused.status_code == 422 and refused.json()["code"] == 1325
    # a wallet added since is searched in at once (a currency not seen held is read again)
    await client_service.add_wallet(db, clock, client_id, "EUR", default=False, actor="tests")
    in_euros = await search(http, key, currency="EUR")
    assert in_euros.status_code == 200 and {v["currency"] for v in in_euros.json()["vehicles"]} == {"EUR"}
    assert (await search(http, key, currency="EUR")).status_code == 200  # and again, from what was seen
    default = await search(http, key, currency=None)
    assert default.status_code == 200 and {v["currency"] for v in default.json()["vehicles"]} == {"GBP"}
    # the other search codes come first: a bad pickup time is still 1317
    late = await search(http, key, currency="gbp", pickup_datetime="yesterday")
    assert late.json()["code"] == 1317


async def test_a_return_trip_is_priced_in_the_search_currency_both_ways(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(currency="GBP", balance="200.00")
    partners = await four_partners(make_partner)
    response = await search(http, key, return_datetime=future_local(days=14))
    assert response.status_code == 200, response.text
    answer = response.json()
    way_out, way_back = (by_company(answer, leg)["Euro Cars"] for leg in ("vehicles", "return_vehicles"))
    for euro in (way_out, way_back):
        assert (euro["price"], euro["currency"], euro["fx"]["rate"]) == (52.8, "GBP", "0.8563")
    body = booking_body(answer["search_id"], way_out["vehicle_id"], return_vehicle_id=int(way_back["vehicle_id"]))
    created = await http.post(BOOKING, json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    assert created.json()["booking"]["price"] == {"total": "52.80", "currency": "GBP", "fx": way_out["fx"]}
    # both legs from the GBP wallet; the partner told its own 56.05 EUR for each
    assert await wallet_balances(db, client_id) == {"GBP": Decimal("94.40")}
    assert [c.body["price"] for c in partners["euro"].calls("/booking/create")] == [
        {"total": "56.05", "currency": "EUR"}
    ] * 2
