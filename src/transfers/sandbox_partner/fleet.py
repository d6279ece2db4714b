"""The sandbox partner's fleet and fares.

Fares are ``base + per_km x distance_km`` (the rounded great-circle distance it reports), so a
partner reading this can reproduce every price in a search answer by hand, and tests can rely on
longer trips costing more. Vehicle types are names from the service's reference data
(``GET /api/public/car/type``): an unknown type would be refused by the service's validator.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from transfers import money
from transfers.reference.airports import dataset, great_circle_km


@dataclass(frozen=True)
class Extra:
    id: str
    name: str
    price: Decimal
    pricing_type: str  # PER_ITEM (price x quantity) or PER_BOOKING (charged once)

    def wire(self, currency: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "price": price_text(self.price, currency),
            "pricing_type": self.pricing_type,
        }

    def charge(self, quantity: int) -> Decimal:
        return self.price * quantity if self.pricing_type == "PER_ITEM" else self.price


@dataclass(frozen=True)
class Vehicle:
    id: str
    make: str
    model: str
    type: str
    passengers: int
    suitcases: int
    small_bags: int
    base_fare: Decimal
    per_km: Decimal

    def fare(self, distance_km: int, currency: str) -> Decimal:
        return money.round_half_up(self.base_fare + self.per_km * max(distance_km, 1), currency)

    def summary(self) -> dict[str, Any]:
        return {"id": self.id, "make": self.make, "model": self.model, "type": self.type}


EXTRAS: tuple[Extra, ...] = (
    Extra("child-seat", "Child seat", Decimal("8.00"), "PER_ITEM"),
    Extra("booster-seat", "Booster seat", Decimal("6.00"), "PER_ITEM"),
    Extra("meet-greet", "Meet & greet", Decimal("15.00"), "PER_BOOKING"),
)
EXTRAS_BY_ID = {e.id: e for e in EXTRAS}

FLEET: tuple[Vehicle, ...] = (
    Vehicle("sedan", "Toyota", "Corolla Hybrid", "SEDAN", 3, 2, 2, Decimal("25.00"), Decimal("1.35")),
    Vehicle("estate", "Skoda", "Octavia Estate", "ESTATE", 4, 4, 2, Decimal("28.00"), Decimal("1.45")),
    Vehicle("electric", "Tesla", "Model Y", "ELECTRIC", 4, 3, 2, Decimal("29.00"), Decimal("1.40")),
    Vehicle("minivan", "Mercedes-Benz", "Vito Tourer", "MINIVAN", 7, 7, 7, Decimal("38.00"), Decimal("1.80")),
    Vehicle("minibus", "Mercedes-Benz", "Sprinter", "MINIBUS", 16, 16, 16, Decimal("65.00"), Decimal("2.60")),
    Vehicle("luxury", "Mercedes-Benz", "S-Class", "LUXURY", 3, 3, 2, Decimal("75.00"), Decimal("3.20")),
)
FLEET_BY_ID = {v.id: v for v in FLEET}


def price_text(amount: Decimal, currency: str) -> str:
    """The wire form of every price the partner sends: the currency's decimals as a string. A fleet price
    with more decimals than the currency has (45.10 in JPY) is rounded half-up, as a partner prices."""
    return money.text(money.round_half_up(amount, currency), currency)


def coordinates(location: dict[str, Any]) -> tuple[float, float] | None:
    """The point's coordinates; an airport sent without them is looked up by its IATA code."""
    lat, lng = location.get("lat"), location.get("lng")
    if isinstance(lat, int | float) and isinstance(lng, int | float) and not isinstance(lat, bool):
        return float(lat), float(lng)
    code = location.get("iata_code")
    if isinstance(code, str):
        row = dataset().get(code.upper())
        if row is not None:
            return float(row["lat"]), float(row["lon"])
    return None


def distance_km(origin: dict[str, Any], destination: dict[str, Any]) -> int | None:
    a, b = coordinates(origin), coordinates(destination)
    if a is None or b is None:
        return None
    return round(great_circle_km(a[0], a[1], b[0], b[1]))


def quote(distance: int, party: int, currency: str) -> list[dict[str, Any]]:
    """The search answer's vehicles: every vehicle that seats the party, cheapest first."""
    offers = [v for v in FLEET if v.passengers >= party]
    offers.sort(key=lambda v: v.fare(distance, currency))
    return [
        {
            **v.summary(),
            "price": price_text(v.fare(distance, currency), currency),
            "currency": currency,
            "capacity": {"passengers": v.passengers, "suitcases": v.suitcases, "small_bags": v.small_bags},
            "extras": [e.wire(currency) for e in EXTRAS],
            "cancellation_policy": LUXURY_POLICY if v.type == "LUXURY" else STANDARD_POLICY,
        }
        for v in offers
    ]


# Realistic cancellation policies (docs/rules/cancellation.md): the chauffeured S-Class is planned days ahead,
# so it is free only until 48 h before pickup, half price until 24 h, then the full fare; every
# other vehicle is free until 24 h before pickup.
LUXURY_POLICY = [
    {"hours_before_pickup": 48, "fee_percent": 0},
    {"hours_before_pickup": 24, "fee_percent": 50},
    {"hours_before_pickup": 0, "fee_percent": 100},
]
STANDARD_POLICY = [{"hours_before_pickup": 24, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}]
