"""Ranking the offers by partner quality (docs/rules/quality.md#ranking). Pure but for ``current``.

One step, applied once after the offers are built (``search/service.py``), outside the pricing loop:

* ``sort=price`` (the default): by price as before; among equal prices the higher score first;
* ``sort=recommended``: by price x (1 + 0.25 x (100 - score) / 100), x 1.10 more for an ``AT_RISK``
  partner; equal keys as above.

The vehicle numbers stay 1..n in the new order. The scores are the latest scorecards, read through
the source the quality feature registers at start-up (``transfers/features.py``): the search sits
below the feature packages and imports none of them. No source, or a partner without a scorecard:
the new partner's 91, not preferred. Clients see ``{"score", "preferred"}``, never the tier's
``AT_RISK`` nor the counts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import fields
from decimal import Decimal
from operator import attrgetter
from typing import Any

from transfers.db.engine import Database
from transfers.rows import frozen_value
from transfers.search.offers import Offer


@frozen_value
class PartnerQuality:
    score: int
    preferred: bool
    at_risk: bool


NEW_PARTNER = PartnerQuality(91, False, False)
Qualities = Mapping[int, PartnerQuality]
Source = Callable[[Database], Awaitable[Qualities]]
_SOURCES: list[Source] = []
_PENALTY = Decimal("0.25")
_AT_RISK = Decimal("1.10")


def register(source: Source) -> None:
    """The quality feature's reader of the latest scores (registered once; again: replaced)."""
    _SOURCES[:] = [source]


async def current(db: Database) -> Qualities:
    return await _SOURCES[0](db) if _SOURCES else {}


def rank(offers: list[Offer], qualities: Qualities, sort: str) -> list[Offer]:
    """``offers`` in the order ``sort`` asks for, renumbered 1..n (their numbers, in order); the same
    list when nothing moves (a single offer, or no two that the scores reorder)."""
    if len(offers) < 2:
        return offers

    def quality(o: Offer) -> PartnerQuality:
        return qualities.get(o.partner_id, NEW_PARTNER)

    def key(item: tuple[int, Offer]) -> tuple[Decimal, int, int]:
        index, o = item
        q = quality(o)
        price = o.sell_price
        if sort == "recommended":
            price = price * (1 + _PENALTY * (100 - q.score) / 100) * (_AT_RISK if q.at_risk else 1)
        return price, -q.score, index

    ordered = [o for _, o in sorted(enumerate(offers), key=key)]
    if all(a is b for a, b in zip(ordered, offers, strict=True)):
        return offers
    numbers = [o.vehicle_no for o in offers]
    return [o if o.vehicle_no == n else _numbered(o, n) for o, n in zip(ordered, numbers, strict=True)]


# An offer with another number: its other fields read in one C call and passed by position (Offer's
# first field is its number). ``dataclasses.replace`` does the same through introspection, keyword
# arguments and checks: 2.5x the CPU, which a search whose ten partners tie on every price paid on
# twenty offers (bench/ranking.py).
# tests/unit/test_search_ranking.py checks that the number is the first field and that the copy equals
# ``replace(offer, vehicle_no=number)``.
_others = attrgetter(*(f.name for f in fields(Offer)[1:]))


def _numbered(offer: Offer, number: int) -> Offer:
    return Offer(number, *_others(offer))


def label(vehicles: list[dict[str, Any]], offers: list[Offer], qualities: Qualities) -> list[dict[str, Any]]:
    """Each vehicle item (in ``offers``' order) gains ``quality``: its partner's score and whether it
    is ``PREFERRED``."""
    for vehicle, o in zip(vehicles, offers, strict=True):
        q = qualities.get(o.partner_id, NEW_PARTNER)
        vehicle["quality"] = {"score": q.score, "preferred": q.preferred}
    return vehicles
