"""Rate-card validation (docs/rules/hosted-partners.md#rate-card): every error listed, each with its JSON path and
reason; amounts in the card currency's decimals."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from transfers.ratecards import card as cards

ROOT = Path(__file__).parents[2]
EXAMPLE = json.loads((ROOT / "examples" / "rate-card.json").read_text())
TYPES = frozenset({"SEDAN", "MINIVAN", "BUS"})


def paths(document: Any) -> list[str]:
    return [e.path for e in cards.validate(document, vehicle_types=TYPES)]


def test_the_example_card_is_valid_and_parses() -> None:
    assert cards.validate(EXAMPLE, vehicle_types=TYPES) == []
    card = cards.parse(EXAMPLE, vehicle_types=TYPES)
    assert card.currency == "EUR" and [v.id for v in card.vehicles] == ["sedan", "van"]


def test_the_published_schema_is_the_one_validating() -> None:
    published = json.loads((ROOT / "src/transfers/openapi/rate-card.schema.json").read_text())
    assert cards.schema() == published
    assert published["$schema"].endswith("2020-12/schema")


def test_every_error_is_listed_with_its_path() -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["currency"] = "eur"
    doc["min_lead_hours"] = True  # a boolean is not an integer
    doc["vehicles"][0]["prices"]["base"] = 10.0  # a number, not a decimal string
    doc["vehicles"][0]["prices"]["per_km"] = "1.23456"  # five decimals: more than any currency has
    doc["vehicles"][1]["passengers"] = 0
    doc["extras"][0]["pricing_type"] = "PER_KM"
    doc["unknown"] = 1
    errors = cards.validate(doc, vehicle_types=TYPES)
    by_path = {e.path: e.reason for e in errors}
    assert set(by_path) == {
        "$.currency",
        "$.min_lead_hours",
        "$.vehicles[0].prices.base",
        "$.vehicles[0].prices.per_km",
        "$.vehicles[1].passengers",
        "$.extras[0].pricing_type",
        "$",
    }
    assert "'unknown'" in by_path["$"]
    assert "is not of type 'integer'" in by_path["$.min_lead_hours"]
    assert "is not of type 'string'" in by_path["$.vehicles[0].prices.base"]
    with pytest.raises(cards.InvalidRateCard) as refused:
        cards.parse(doc, vehicle_types=TYPES)
    assert len(refused.value.errors) == 7


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.pop("vehicles"), "$"),
        (lambda d: d.update(vehicles=[]), "$.vehicles"),
        (lambda d: d.update(currency=None), "$.currency"),
        (lambda d: d.update(blackout_dates=["2027-02-30"]), "$.blackout_dates[0]"),
        (lambda d: d.update(blackout_dates=["15/01/2027"]), "$.blackout_dates[0]"),
        (
            lambda d: d.update(cancellation_policy=[{"hours_before_pickup": 24, "fee_percent": 101}]),
            "$.cancellation_policy[0].fee_percent",
        ),
        (
            lambda d: d.update(
                cancellation_policy=[
                    {"hours_before_pickup": 0, "fee_percent": 0},
                    {"hours_before_pickup": 0, "fee_percent": 50},
                ]
            ),
            "$.cancellation_policy",
        ),
        (
            lambda d: d.update(cancellation_policy=[{"hours_before_pickup": 24, "fee_percent": 0}]),
            "$.cancellation_policy",
        ),
        (
            lambda d: d.update(
                cancellation_policy=[
                    {"hours_before_pickup": 24, "fee_percent": 50},
                    {"hours_before_pickup": 0, "fee_percent": 10},
                ]
            ),
            "$.cancellation_policy",
        ),
        (lambda d: d["vehicles"][0].update(type="ROCKET"), "$.vehicles[0].type"),
        (lambda d: d["vehicles"][1].update(id="sedan"), "$.vehicles[1].id"),
        (lambda d: d["extras"][1].update(id="child-seat"), "$.extras[1].id"),
        (lambda d: d["vehicles"][0]["prices"].update(minimum="0.00"), "$.vehicles[0].prices.minimum"),
        (lambda d: d["vehicles"][0]["prices"].update(minimum="-1"), "$.vehicles[0].prices.minimum"),
        (lambda d: d["vehicles"][0]["prices"].update(base="1e3"), "$.vehicles[0].prices.base"),
        (lambda d: d["vehicles"][0]["prices"].update(base="99999999"), "$.vehicles[0].prices.base"),
        (
            lambda d: d["vehicles"][0]["prices"]["fixed"][0].update(airport="ZZZ"),
            "$.vehicles[0].prices.fixed[0].airport",
        ),
        (
            lambda d: d["vehicles"][0]["prices"]["fixed"][0].update(radius_km=0),
            "$.vehicles[0].prices.fixed[0].radius_km",
        ),
        (lambda d: d["vehicles"][0]["prices"]["night"].update(to="22:00"), "$.vehicles[0].prices.night"),
        (lambda d: d["vehicles"][0]["prices"]["night"].update(to="24:00"), "$.vehicles[0].prices.night.to"),
        (lambda d: d["vehicles"][0]["prices"]["night"].update(percent="101"), "$.vehicles[0].prices.night.percent"),
        (lambda d: d["vehicles"][0].update(daily_capacity=-1), "$.vehicles[0].daily_capacity"),
        (lambda d: d["vehicles"][0].update(daily_capacity=2.5), "$.vehicles[0].daily_capacity"),
        (lambda d: d["vehicles"][0].update(make="x" * 201), "$.vehicles[0].make"),
        (lambda d: d["vehicles"][0].update(make="   "), "$.vehicles[0].make"),
        (lambda d: d["vehicles"][0].update(make="a\u0000b"), "$.vehicles[0].make"),
        (lambda d: d["extras"][0].update(price="0"), "$.extras[0].price"),
    ],
)
def test_each_rule_names_its_path(change: Any, path: str) -> None:
    doc = copy.deepcopy(EXAMPLE)
    change(doc)
    assert paths(doc) == [path]


@pytest.mark.parametrize("document", [None, [], "card", 3, True])
def test_a_card_that_is_not_an_object(document: Any) -> None:
    assert paths(document) == ["$"]


def test_unicode_names_are_fine() -> None:
    doc = copy.deepcopy(EXAMPLE)
    doc["vehicles"][0]["make"] = "Škoda"
    doc["extras"][0]["name"] = "Kindersitz 👶"
    assert paths(doc) == []


def _in(currency: str, **prices: str) -> dict[str, Any]:
    doc = copy.deepcopy(EXAMPLE)
    doc["currency"] = currency
    doc["vehicles"][0]["prices"].update({k: v for k, v in prices.items() if k != "extra"})
    doc["vehicles"][0]["prices"]["fixed"][0]["price"] = prices.get("minimum", "55")
    doc["vehicles"][1]["prices"].update({"base": "20", "per_km": "2", "minimum": "60"})
    doc["extras"][0]["price"] = prices.get("extra", "8")
    doc["extras"][1]["price"] = "12"
    return doc


def test_amounts_have_the_card_currencys_decimals() -> None:
    """docs/rules/hosted-partners.md#rate-card: a KWD card prices in fils (three decimals), a JPY one in
    whole yen; more decimals than the card's currency are refused with their path, never rounded."""
    assert (
        cards.validate(_in("KWD", base="3.250", per_km="0.375", minimum="20.465", extra="1.125"), vehicle_types=TYPES)
        == []
    )
    assert cards.parse(_in("KWD", minimum="20.465"), vehicle_types=TYPES).vehicles[0].prices.minimum == Decimal(
        "20.465"
    )
    assert (
        cards.validate(_in("JPY", base="1000", per_km="180", minimum="6500", extra="1200"), vehicle_types=TYPES) == []
    )
    refused = {
        e.path: e.reason
        for e in cards.validate(
            _in("JPY", base="1000.5", per_km="180", minimum="6500", extra="1200.50"), vehicle_types=TYPES
        )
    }
    assert refused == {
        "$.vehicles[0].prices.base": "JPY amounts have no decimals: 1000.5 is refused, not rounded",
        "$.extras[0].price": "JPY amounts have no decimals: 1200.50 is refused, not rounded",
    }
    eur = cards.validate(_in("EUR", base="10.00", per_km="1.234", minimum="40.00"), vehicle_types=TYPES)
    assert [(e.path, e.reason) for e in eur] == [
        ("$.vehicles[0].prices.per_km", "EUR amounts have at most two decimals: 1.234 is refused, not rounded")
    ]
    assert [e.path for e in cards.validate(_in("XYZ"), vehicle_types=TYPES)] == ["$.currency"]
