"""Ranking offers by partner quality (docs/rules/quality.md#ranking): the order and the numbers, and
the ``sort`` field's code."""

from __future__ import annotations

from decimal import Decimal

import pytest

from transfers.errors import Code, Invalid
from transfers.search.offers import Offer
from transfers.search.ranking import PartnerQuality, label, rank
from transfers.search.rules import requested_sort


def offer(no: int, partner_id: int, price: str) -> Offer:
    return Offer(no, partner_id, f"v{no}", "Make", "Model", "SEDAN", 3, 2, 2, Decimal(price), Decimal(price), "EUR")


QUALITIES = {
    1: PartnerQuality(70, False, True),  # AT_RISK
    2: PartnerQuality(95, True, False),  # PREFERRED
    # 3: no scorecard: a new partner's 91
}
# price order as built (equal prices by partner name): 1 (40), 2 (40), 3 (43)
OFFERS = [offer(1, 1, "40.00"), offer(2, 2, "40.00"), offer(3, 3, "43.00")]


@pytest.mark.parametrize(
    ("sort", "partners"),
    [
        # equal prices: the higher score first
        ("price", [2, 1, 3]),
        # 40 x 1.075 x 1.10 = 47.30; 40 x 1.0125 = 40.50; 43 x 1.0225 = 43.9675
        ("recommended", [2, 3, 1]),
    ],
)
def test_rank_orders_and_renumbers(sort: str, partners: list[int]) -> None:
    ranked = rank(OFFERS, QUALITIES, sort)
    assert [o.partner_id for o in ranked] == partners
    assert [o.vehicle_no for o in ranked] == [1, 2, 3]


def test_without_scores_nothing_moves() -> None:
    assert rank(OFFERS, {}, "price") is OFFERS
    assert rank(OFFERS[:1], QUALITIES, "recommended") is not None


def test_recommended_is_not_fooled_by_a_small_saving() -> None:
    # 39.00 from a partner scoring 70 AT_RISK (45.8) loses to 40.00 from one scoring 95 (40.50)
    ranked = rank([offer(1, 1, "39.00"), offer(2, 2, "40.00")], QUALITIES, "recommended")
    assert [o.partner_id for o in ranked] == [2, 1]
    assert [o.partner_id for o in rank([offer(1, 1, "39.00"), offer(2, 2, "40.00")], QUALITIES, "price")] == [1, 2]


def test_label_shows_the_score_and_preferred_never_the_tier() -> None:
    vehicles: list[dict[str, object]] = [{}, {}, {}]
    label(vehicles, OFFERS, QUALITIES)
    assert vehicles == [
        {"quality": {"score": 70, "preferred": False}},
        {"quality": {"score": 95, "preferred": True}},
        {"quality": {"score": 91, "preferred": False}},
    ]


@pytest.mark.parametrize(("value", "sort"), [(None, "price"), ("price", "price"), ("recommended", "recommended")])
def test_sort_values(value: str | None, sort: str) -> None:
    assert requested_sort(value) == sort


@pytest.mark.parametrize("value", ["PRICE", "score", "", 1, True, ["price"]])
def test_any_other_sort_is_1326(value: object) -> None:
    with pytest.raises(Invalid) as refused:
        requested_sort(value)
    assert refused.value.code is Code.SEARCH_SORT_INVALID


def test_an_offer_renumbered_is_the_same_offer_with_another_number() -> None:
    from dataclasses import fields, replace

    from transfers.search.ranking import _numbered

    assert fields(Offer)[0].name == "vehicle_no"  # _numbered passes the other fields by position after it
    offer = Offer(
        3, 7, "car-1", "Toyota", "Corolla", "SEDAN", 4, 2, 2, Decimal("36.00"), Decimal("40.00"), "EUR", leg=2
    )
    assert _numbered(offer, 9) == replace(offer, vehicle_no=9)
