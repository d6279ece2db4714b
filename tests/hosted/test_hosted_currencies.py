"""A hosted partner's rate card in its own currency (docs/rules/hosted-partners.md#rate-card,
docs/rules/fx.md#search), over real HTTP with the sandbox rates: a Kuwaiti card prices in KWD with three
decimals and a GBP agency sees it converted (20.465 KWD -> 52.77 GBP), the partner keeping its own
20.465 KWD; a card whose amounts have more decimals than its currency (a JPY card with 4000.50), or whose
currency amounts are not paid in, is refused with the path of each problem and nothing written."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, row_of
from tests.hosted.conftest import HostedFactory, example_card
from tests.hosted.test_hosted_search_and_booking import company, search_at
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.hosted import service as hosted_service
from transfers.ratecards.card import InvalidRateCard

BOOKING = "/api/v1/booking-api/booking"
KUWAIT_CITY = {"type": "POINT", "lat": 29.3759, "lng": 47.9774, "name": "Kuwait City"}


def dinar_card(**changes: Any) -> dict[str, Any]:
    card = example_card(
        **{
            "currency": "KWD",
            "blackout_dates": [],
            "extras": [{"id": "child-seat", "name": "Child seat", "price": "1.750", "pricing_type": "PER_ITEM"}],
            **changes,
        }
    )
    sedan, van = card["vehicles"]
    sedan["prices"] = {
        "base": "3.500",
        "per_km": "0.125",
        "minimum": "12.345",
        "fixed": [{"airport": "KWI", "radius_km": 50, "price": "20.465"}],
    }
    van["prices"] = {"base": "6.000", "per_km": "0.250", "minimum": "25.005"}
    return card


async def test_a_dinar_card_is_priced_in_kwd_and_sold_converted(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database
) -> None:
    _, key = await make_client(currency="GBP", balance="500.00")
    await make_hosted(airports=("KWI",), name="Hosted Kuwait KWD", card=dinar_card())
    found = await search_at(http, key, "KWI", point=KUWAIT_CITY)
    sedan = company(found, "Hosted Kuwait KWD")[0]
    # 0.8563 / 0.3321 = 2.57844 (6 digits); the fixed 20.465 KWD x that = 52.7677... -> 52.77 GBP;
    # the seat 1.750 x 2.57844 = 4.51227 -> 4.51 GBP
    assert (sedan["price"], sedan["currency"], sedan["fx"]["from_currency"], sedan["fx"]["rate"]) == (
        52.77,
        "GBP",
        "KWD",
        "2.57844",
    )
    assert [e["price"] for e in sedan["extra_services"]] == [4.51]
    created = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    assert created.json()["booking"]["price"]["total"] == "52.77"
    row = await row_of(db, created.json()["booking"]["reservation_no"])
    assert (row["partner_currency"], row["partner_net_total"]) == ("KWD", Decimal("20.465"))
    assert (row["currency"], row["net_total"]) == ("GBP", Decimal("52.77"))


@pytest.mark.parametrize(
    ("change", "path", "words"),
    [
        ({"currency": "JPY"}, "$.vehicles[0].prices.fixed[0].price", "JPY amounts have no decimals"),
        ({"currency": "EUR"}, "$.vehicles[0].prices.minimum", "EUR amounts have at most two decimals"),
        ({"currency": "ZZZ"}, "$.currency", "not an ISO 4217 currency code"),
        ({"currency": "XAU"}, "$.currency", "not an ISO 4217 currency code"),
    ],
)
async def test_a_card_with_amounts_its_currency_cannot_hold_is_refused_and_nothing_written(
    db: Database, clock: ShiftedClock, make_hosted: HostedFactory, change: dict[str, str], path: str, words: str
) -> None:
    partner_id = await make_hosted(airports=("BAH",), name="Hosted Bahrain", card=dinar_card())
    before = await hosted_service.get_rate_card(db, partner_id)
    with pytest.raises(InvalidRateCard) as refused:
        await hosted_service.set_rate_card(db, clock, partner_id, dinar_card(**change), actor="tests")
    reasons = {e.path: e.reason for e in refused.value.errors}
    assert words in reasons[path], reasons
    assert await hosted_service.get_rate_card(db, partner_id) == before
    # the same card with whole yen is a JPY card like any other
    if change["currency"] == "JPY":
        yen = dinar_card(
            currency="JPY", extras=[{"id": "seat", "name": "Seat", "price": "280", "pricing_type": "PER_ITEM"}]
        )
        for vehicle in yen["vehicles"]:
            vehicle["prices"] = {"base": "500", "per_km": "20", "minimum": "3000.00"}  # trailing zeros: whole yen
        assert (await hosted_service.set_rate_card(db, clock, partner_id, yen, actor="tests")).currency == "JPY"
