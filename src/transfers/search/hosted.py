"""A hosted partner's answer to a search, made in-process from its rate card (docs/rules/hosted-partners.md).

The fan-out (``search/service.py``) asks hosted partners beside the server partners, under the
same deadline, and gets the same ``PartnerAnswer`` back: the offers are then priced (markup),
filtered (party size, currency) and sorted with everyone else's by ``search/offers.py``. No HTTP,
no signing, no JSON: the card was validated when it was set and is kept parsed in the partner
directory's snapshot; the only I/O is one read of the day's capacity counters, and only for a card
that limits capacity.

In ``search`` (not ``hosted``) because the search is its only caller; the card and the counters it
reads are in ``ratecards``, below ``partners`` and ``search``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Set
from typing import Any

import structlog

from transfers.db.engine import Database
from transfers.partners.models import PartnerRecord
from transfers.partners.wire import WireCapacity, WireExtra, WireVehicle
from transfers.ratecards import pricing
from transfers.ratecards import repository as repo
from transfers.ratecards.card import RateCard
from transfers.search.fanout import PartnerAnswer

log = structlog.get_logger("transfers.search")


def _wire(quote: pricing.Quote, policy: list[dict[str, Any]] | None) -> WireVehicle:
    """The quote in the shape a server partner's answer has after validation (``model_construct``:
    the card's values were validated when it was set). ``policy``: the card's cancellation policy,
    sent with every vehicle as a server partner may (docs/rules/cancellation.md: it wins over the partner's
    default)."""
    v = quote.vehicle
    return WireVehicle.model_construct(
        id=v.id,
        make=v.make,
        model=v.model,
        type=v.type,
        price=quote.net_price,
        currency=quote.currency,
        capacity=WireCapacity.model_construct(passengers=v.passengers, suitcases=v.suitcases, small_bags=v.small_bags),
        extras=[
            WireExtra.model_construct(id=e.id, name=e.name, price=e.price, pricing_type=e.pricing_type)
            for e in quote.extras
        ],
        cancellation_policy=policy,
    )


async def answer(
    db: Database, partner: PartnerRecord, card: RateCard, trip: pricing.Trip, vehicle_types: Set[str]
) -> PartnerAnswer:
    """The card's offers for ``trip``: vehicles of a type the reference data no longer has are left
    out, as a server partner's answer naming one would be."""
    booked: dict[str, int] = {}
    if pricing.refusal(card, trip) is None and any(v.daily_capacity is not None for v in card.vehicles):
        async with db.read() as conn:
            booked = await repo.booked_on(conn, partner.partner_id, trip.local_date)
    quotes = [q for q in pricing.quote(card, trip, booked) if q.vehicle.type in vehicle_types]
    policy = None if card.cancellation_policy is None else [dict(tier) for tier in card.cancellation_policy]
    return PartnerAnswer(partner, [_wire(q, policy) for q in quotes], None)


async def ask_hosted(
    db: Database,
    hosted: list[tuple[PartnerRecord, RateCard]],
    trip: pricing.Trip,
    *,
    timeout: float,
    vehicle_types: Set[str],
) -> list[PartnerAnswer]:
    """Every hosted partner's answer, each within ``timeout`` (the partners' deadline); one that
    fails or overruns is left out and logged, like a server partner."""
    if not hosted:
        return []

    async def one(partner: PartnerRecord, card: RateCard) -> PartnerAnswer | None:
        try:
            return await asyncio.wait_for(answer(db, partner, card, trip, vehicle_types), timeout)
        except Exception as exc:  # a database hiccup must not fail the whole search
            log.warning(
                "hosted_partner_left_out",
                partner=partner.name,
                partner_id=partner.partner_id,
                reason=type(exc).__name__,
            )
            return None

    results = await asyncio.gather(*(one(partner, card) for partner, card in hosted))
    return [result for result in results if result is not None]
