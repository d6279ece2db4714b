"""The per-search and per-partner-call work made cheaper gives what it gave before:
remembered sell prices, the answer's vehicle built with its policy in one dict, partner-call metrics
counted through remembered series."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest
from prometheus_client import REGISTRY

from tests.unit.test_typed_rows import OFFER
from transfers.money import MoneyError
from transfers.observability.metrics import observe_partner_call
from transfers.partners.models import PartnerRecord, sell_price
from transfers.partners.wire import WireSearchAnswer, WireVehicle
from transfers.search.offers import build_offers


def _formula(net: Decimal, markup: Decimal, places: int) -> Decimal:
    """docs/rules/search.md's rule written out again, independently of money.py."""
    shown = (net * (Decimal(100) + markup) / Decimal(100)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return shown if shown else abs(shown)


def test_a_remembered_sell_price_is_the_formula_s_whatever_the_order_of_calls() -> None:
    cases = [
        ("45.10", "0"),
        ("45.1", "0"),  # equal to the one before: the same result, with the same two places
        ("45.1", "10"),
        ("45.1", "10.000"),
        ("0.05", "12.5"),
        ("0.01", "-50"),
        ("999999.99", "33.333"),
        ("0", "10"),
        ("-0", "10"),  # zero is 0.00 whatever its sign
    ]
    for _ in range(2):  # the second time from the cache
        for currency, places in (("EUR", 2), ("KWD", 3), ("JPY", 0)):
            for net, markup in cases:
                if Decimal(net) != Decimal(net).quantize(Decimal(1).scaleb(-places)):
                    continue  # more decimals than the currency has: refused (below)
                got = sell_price(Decimal(net), Decimal(markup), currency)
                want = _formula(Decimal(net), Decimal(markup), places)
                assert got == want and str(got) == str(want), (net, markup, currency)
    assert (
        str(sell_price(Decimal("-0"), Decimal(10), "EUR")) == "0.00" == str(sell_price(Decimal(0), Decimal(10), "EUR"))
    )
    assert str(sell_price(Decimal("10010"), Decimal("7.5"), "JPY")) == "10761"
    with pytest.raises(MoneyError):
        sell_price(Decimal("45.1"), Decimal(10), "JPY")


def test_the_answer_s_vehicle_ends_with_its_policy_when_given() -> None:
    view = {"tiers": [], "free_until": None}
    with_policy = OFFER.public("Acme Cars", view)
    assert list(with_policy) == [*OFFER.public("Acme Cars"), "cancellation_policy"]
    assert with_policy == {**OFFER.public("Acme Cars"), "cancellation_policy": view}
    assert "cancellation_policy" not in OFFER.public("Acme Cars")


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_partner_calls_are_counted_per_partner_call_and_outcome() -> None:
    partner = "edges-metrics-partner"
    for outcome, path, ms in [
        ("ok", "/booking/search", 40.0),
        ("ok", "/booking/search", 120.0),
        ("timeout", "/booking/search", 1000.0),
        ("ok", "/booking/info/TB-1", 70.0),
        ("ok", "/booking/info/TB-2", 80.0),
    ]:
        observe_partner_call(partner, path, outcome, ms)
    assert _sample("partner_calls_total", partner=partner, call="search", outcome="ok") == 2
    assert _sample("partner_calls_total", partner=partner, call="search", outcome="timeout") == 1
    assert _sample("partner_calls_total", partner=partner, call="info", outcome="ok") == 2
    search = {"partner": partner, "call": "search"}
    assert _sample("partner_call_duration_seconds_count", **search) == 3
    assert abs(_sample("partner_call_duration_seconds_sum", **search) - 1.16) < 1e-9
    assert _sample("partner_call_duration_seconds_bucket", **search, le="0.05") == 1
    assert _sample("partner_call_duration_seconds_bucket", **search, le="0.25") == 2
    assert _sample("partner_call_duration_seconds_bucket", **search, le="1.0") == 3
    assert _sample("partner_call_duration_seconds_count", partner=partner, call="info") == 2


def _quote(price: object, currency: str, extra_price: object) -> WireVehicle:
    vehicle = {
        "id": "v1",
        "make": "Toyota",
        "model": "Corolla",
        "type": "SEDAN",
        "price": price,
        "currency": currency,
        "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
        "extras": [{"id": "seat", "name": "Child seat", "price": extra_price, "pricing_type": "PER_ITEM"}],
    }
    return WireSearchAnswer.model_validate({"vehicles": [vehicle]}).vehicles[0]


def test_a_quote_with_more_decimals_than_its_currency_is_left_out_never_rounded() -> None:
    """docs/rules/search.md#price: a JPY price of 45.5 leaves its vehicle out, a JPY extra of 8.5 its extra."""
    partner = PartnerRecord(1, "P", "http://127.0.0.1:9", ("LHR",), Decimal(10), "ACTIVE", False)
    offers = build_offers(
        [
            (partner, _quote(45.5, "JPY", 8)),
            (partner, _quote(4500, "JPY", "8.5")),
            (partner, _quote("20.46", "KWD", 8)),  # the partner API takes two decimals at most (for now)
        ],
        party_size=1,
        currency=None,
    )
    assert [(o.net_price, o.sell_price, o.currency) for o in offers] == [
        (Decimal("20.46"), Decimal("22.506"), "KWD"),  # to the fils
        (Decimal(4500), Decimal(4950), "JPY"),
    ]
    assert [len(o.extras) for o in offers] == [1, 0]  # the JPY extra of 8.5 is left out, its vehicle kept
