"""Turning partner quotes into the offers a client sees (DECISIONS 4). Pure.

Sell price = net price + the partner's markup (vehicle and extras alike), rounded to cents.
Offers that cannot seat the whole party, or quoted in another currency than a wallet client
pays in, are left out. What remains is sorted by price and numbered: ``vehicle_no`` 1..n and
extra-service ids unique within the search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from transfers.cancellation.policy import FREE_UNTIL_PICKUP, Policy, from_json
from transfers.partners.models import PartnerRecord, sell_price
from transfers.partners.wire import WireVehicle


@dataclass(frozen=True)
class PricedExtra:
    id: int
    partner_extra_id: str
    name: str
    pricing_type: str
    net_price: Decimal
    price: Decimal

    def stored(self) -> dict[str, Any]:
        return {"id": self.id, "partner_extra_id": self.partner_extra_id, "name": self.name,
                "pricing_type": self.pricing_type, "net_price": str(self.net_price), "price": str(self.price)}


@dataclass(frozen=True)
class Offer:
    vehicle_no: int
    partner: PartnerRecord
    quote: WireVehicle
    net_price: Decimal
    price: Decimal
    extras: list[PricedExtra] = field(default_factory=list)
    # The vehicle's own cancellation policy, else its partner's default, else free until pickup.
    policy: Policy = FREE_UNTIL_PICKUP

    def public(self) -> dict[str, Any]:
        q = self.quote
        return {
            "vehicle_id": str(self.vehicle_no),
            "make": q.make,
            "model": q.model,
            "type": q.type,
            "max_passengers": str(q.capacity.passengers),
            "suitcases": str(q.capacity.suitcases),
            "small_bags": str(q.capacity.small_bags),
            "price": self.price,
            "currency": q.currency,
            "company": self.partner.name,
            "extra_services": [
                {"id": e.id, "name": e.name, "price": e.price, "pricing_type": e.pricing_type}
                for e in self.extras
            ],
        }


def build_offers(quotes: list[tuple[PartnerRecord, WireVehicle]], *, party_size: int,
                 currency: str | None) -> list[Offer]:
    """``currency`` None accepts every currency (reverse_api clients are not paying from a wallet)."""
    eligible = [
        (partner, quote, sell_price(quote.price, partner.markup_percent))
        for partner, quote in quotes
        if quote.capacity.passengers >= party_size and (currency is None or quote.currency == currency)
    ]
    eligible.sort(key=lambda item: (item[2], item[0].name, item[1].id))
    offers: list[Offer] = []
    next_extra_id = 1
    for number, (partner, quote, price) in enumerate(eligible, start=1):
        extras = []
        for extra in quote.extras:
            extras.append(PricedExtra(next_extra_id, extra.id, extra.name, extra.pricing_type, extra.price,
                                      sell_price(extra.price, partner.markup_percent)))
            next_extra_id += 1
        offers.append(Offer(number, partner, quote, quote.price, price, extras, policy_of(partner, quote)))
    return offers


def policy_of(partner: PartnerRecord, quote: WireVehicle) -> Policy:
    """DECISIONS 14: a policy sent with the vehicle wins over the partner's default."""
    if quote.cancellation_policy is not None:
        return from_json(quote.cancellation_policy)
    return partner.cancellation_policy or FREE_UNTIL_PICKUP
