"""A hosted partner's rate card in its currency's decimals (docs/rules/hosted-partners.md#rate-card), over real
HTTP: a KWD card priced in fils (three decimals) answers a KWD client's search with 20.465 and is booked
at that price, and a card in JPY with decimals is refused with every path, no card stored."""

from __future__ import annotations

import copy
from decimal import Decimal

import httpx
import pytest

from tests.api.test_search_currencies import wallet_balances
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body
from tests.hosted.conftest import EXAMPLE, HostedFactory
from tests.hosted.test_hosted_search_and_booking import company, search_at
from transfers.db.engine import Database
from transfers.ratecards.card import InvalidRateCard

NORWICH = {"type": "POINT", "lat": 52.6309, "lng": 1.2974, "name": "Norwich centre"}


def card_in(currency: str, minimum: str, extra: str) -> dict[str, object]:
    card = copy.deepcopy(EXAMPLE)
    card["currency"] = currency
    for vehicle in card["vehicles"]:
        vehicle["prices"] = {"base": "0", "per_km": "0", "minimum": minimum}  # the minimum is the price
    card["extras"][0]["price"] = extra
    card["extras"][1]["price"] = extra
    return card


async def test_a_kwd_card_prices_and_books_in_fils(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database
) -> None:
    client_id, key = await make_client(currency="KWD", balance="100.000")
    await make_hosted(airports=("NWI",), card=card_in("KWD", "20.465", "1.125"), name="Hosted Norwich KWD")
    found = await search_at(http, key, "NWI", point=NORWICH)
    offers = company(found, "Hosted Norwich KWD")
    assert offers and {(v["price"], v["currency"], v["fx"]) for v in offers} == {(20.465, "KWD", None)}
    assert [e["price"] for e in offers[0]["extra_services"]] == [1.125, 1.125]
    seat = offers[0]["extra_services"][0]["id"]
    body = booking_body(found["search_id"], offers[0]["vehicle_id"], extra_services=[{"id": seat, "quantity": 2}])
    created = await http.post("/api/v1/booking-api/booking", json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    assert created.json()["booking"]["price"] == {
        "total": "22.715",
        "currency": "KWD",
        "fx": None,
    }  # 20.465 + 2 x 1.125
    assert await wallet_balances(db, client_id) == {"KWD": Decimal("77.285")}


async def test_a_jpy_card_with_decimals_is_refused_whole(make_hosted: HostedFactory) -> None:
    with pytest.raises(InvalidRateCard) as refused:
        await make_hosted(airports=("NWI",), card=card_in("JPY", "6500.5", "1200.50"), name="Hosted Norwich JPY")
    assert {e.path for e in refused.value.errors} == {
        "$.vehicles[0].prices.minimum",
        "$.vehicles[1].prices.minimum",
        "$.extras[0].price",
        "$.extras[1].price",
    }
    assert all("JPY amounts have no decimals" in e.reason for e in refused.value.errors)
