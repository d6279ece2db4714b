"""Amounts on the partner wire in their currency's decimals (docs/partners/index.md, docs/rules/fx.md), over
real HTTP with test partners quoting in JPY and KWD: a KWD quote of 20.465 comes in with three decimals
and goes back to the partner in the create call with three, a JPY one with none; the wallet, the
booking and the partner's info answer say the same; a quote with more decimals than its currency has
(10010.5 JPY, 20.4651 KWD, 45.123 EUR) is left out of the search, never rounded; partner.yaml's schemas
accept what is sent."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.api.test_search_currencies import vehicle, wallet_balances
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.unit.test_partner_openapi import assert_valid
from transfers.db.engine import Database

BOOKING = "/api/v1/booking-api/booking"
IATA = "NWI"  # these partners only: no other test's partner serves Norwich while these run


async def search(http: httpx.AsyncClient, key: str, **body: Any) -> httpx.Response:
    return await http.post(
        "/api/v1/booking-api/search",
        json=search_body(pickup_location={"type": "AIRPORT", "iata_code": IATA}, **body),
        headers=bearer(key),
    )


@pytest.mark.parametrize(
    ("currency", "quoted", "number", "text", "bad"),
    [
        ("KWD", "20.465", 20.465, "20.465", "20.4651"),
        ("JPY", "10010", 10010.0, "10010", "10010.5"),
    ],
)
async def test_a_quote_goes_and_comes_back_with_its_currencys_decimals(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    currency: str,
    quoted: str,
    number: float,
    text: str,
    bad: str,
) -> None:
    extras = [{"id": "seat", "name": "Child seat", "price": quoted, "pricing_type": "PER_ITEM"}]
    partner, _, _ = await make_partner(
        airports=(IATA,), name=f"{currency} Cars", vehicles=[vehicle("ok-1", quoted, currency, extras)]
    )
    await make_partner(airports=(IATA,), name="Too Precise", vehicles=[vehicle("bad-1", bad, currency)])
    await make_partner(airports=(IATA,), name="Euro Cents", vehicles=[vehicle("eur-1", "45.123", "EUR")])
    client_id, key = await make_client(currency=currency, balance=text)
    answer = await search(http, key)
    assert answer.status_code == 200, answer.text
    # the quote as given, unconverted (markup 0): a JSON number with the currency's decimals; the one
    # with more decimals than its currency, and a EUR one with three, are left out
    (offer,) = answer.json()["vehicles"]
    assert (offer["company"], offer["price"], offer["currency"], offer["fx"]) == (
        f"{currency} Cars",
        number,
        currency,
        None,
    )
    assert [e["price"] for e in offer["extra_services"]] == [number]
    assert f'"price":{text}' in answer.text.replace(" ", "")  # written as the amount, not 20.465000001

    created = await http.post(BOOKING, json=booking_body(answer.json()["search_id"], 1), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    assert booking["price"] == {"total": text, "currency": currency, "fx": None}
    # the partner is told its price with exactly its currency's decimals
    (call,) = partner.calls("/booking/create")
    assert call.body["price"] == {"total": text, "currency": currency}
    assert_valid("CreateRequest", call.body)  # partner.yaml takes it
    assert await wallet_balances(db, client_id) == {currency: Decimal(0)}
    read = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    assert read.json()["price"]["total"] == text
    wallet = await http.get("/api/v1/booking-api/wallet/entries", headers=bearer(key))
    assert [(e["kind"], e["amount"]) for e in wallet.json()["data"]] == [("debit", f"-{text}"), ("top_up", text)]
