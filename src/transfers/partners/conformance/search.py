"""The search check (PARTNER_API.md 3.1): a search built exactly as the service builds one for a
client (from the airport to a point 20 km away, three days ahead at 14:30 local time, two adults),
judged by the service's validator, the reference vehicle types and partner.yaml.

It is the first check because everything after it books the vehicle it returns; ``transfers
doctor`` also runs it alone as its probe of a live partner (``ops/partner_probe.py``).
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from transfers import money
from transfers.partners.conformance.judging import parsed
from transfers.partners.conformance.session import CheckSession
from transfers.partners.wire import WireSearchAnswer, WireVehicle, search_request

# The reference data set (migration 0002, ``GET /api/public/car/type``; ``VehicleType`` in partner.yaml).
REFERENCE_VEHICLE_TYPES = frozenset({"SEDAN", "ESTATE", "MINIVAN", "MINIBUS", "BUS", "LUXURY", "ELECTRIC"})
DISTANCE_KM = 20.0  # how far from the airport the test drop-off point lies
DAYS_AHEAD = 3
PARTY_ADULTS = 2


def destination_point(lat: float, lng: float, distance_km: float, bearing_deg: float) -> tuple[float, float]:
    """The point ``distance_km`` away from (lat, lng) on the given initial bearing (a sphere)."""
    radius = 6371.0088
    delta, theta = distance_km / radius, math.radians(bearing_deg)
    p1, l1 = math.radians(lat), math.radians(lng)
    p2 = math.asin(math.sin(p1) * math.cos(delta) + math.cos(p1) * math.sin(delta) * math.cos(theta))
    l2 = l1 + math.atan2(
        math.sin(theta) * math.sin(delta) * math.cos(p1), math.cos(delta) - math.sin(p1) * math.sin(p2)
    )
    lng2 = (math.degrees(l2) + 540) % 360 - 180
    return round(math.degrees(p2), 6), round(lng2, 6)


def unknown_types(body: Any) -> list[str]:
    """Vehicle types outside the reference set: the service would show clients a type it cannot name."""
    out = []
    for i, vehicle in enumerate(body.get("vehicles", [])):
        if vehicle.get("type") not in REFERENCE_VEHICLE_TYPES:
            out.append(
                f"vehicles[{i}].type: {vehicle.get('type')!r} is not a reference vehicle type "
                f"({', '.join(sorted(REFERENCE_VEHICLE_TYPES))})"
            )
    return out[:3]


def _decimal_problem(where: str, price: Any, currency: str) -> str | None:
    try:
        money.parse(price, currency)
    except money.MoneyError as exc:
        return f"{where}: {exc}; the service leaves it out of searches"
    return None


def wrong_decimals(body: Any) -> list[str]:
    """Prices with more decimals than their currency has (EUR 45.123, JPY 10010.5): the wire takes up to
    four, the currency's own rule (docs/partners/index.md) leaves such a vehicle or extra out."""
    out = []
    for i, vehicle in enumerate(body.get("vehicles", [])):
        currency = str(vehicle.get("currency"))
        if not money.is_currency(currency):
            out.append(f"vehicles[{i}].currency: {currency[:10]!r} is not an ISO 4217 currency code")
            continue
        problem = _decimal_problem(f"vehicles[{i}].price", vehicle.get("price"), currency)
        out += [problem] if problem else []
        for j, extra in enumerate(vehicle.get("extras") or []):
            problem = _decimal_problem(f"vehicles[{i}].extras[{j}].price", extra.get("price"), currency)
            out += [problem] if problem else []
    return out[:3]


def search_rules(body: Any) -> list[str]:
    """What the service's rules refuse beyond the wire's validator: unknown types, too many decimals."""
    return (unknown_types(body) + wrong_decimals(body))[:3]


class SearchChecks(CheckSession):
    def airport_location(self) -> dict[str, Any]:
        a = self.airport
        return {"type": "AIRPORT", "iata_code": a.iata, "name": a.name, "lat": a.lat, "lng": a.lng}

    def point_location(self) -> dict[str, Any]:
        lat, lng = destination_point(self.airport.lat, self.airport.lng, DISTANCE_KM, 45.0)
        return {
            "type": "POINT",
            "name": f"Conformance check point, {DISTANCE_KM:.0f} km from {self.airport.iata}",
            "lat": lat,
            "lng": lng,
        }

    def pickup_date(self) -> str:
        local = (self.now or datetime.now(self.airport.tz)).astimezone(self.airport.tz) + timedelta(days=DAYS_AHEAD)
        return local.replace(hour=14, minute=30, second=0, microsecond=0).isoformat()

    def search_payload(self) -> dict[str, Any]:
        return search_request(
            pickup=self.airport_location(),
            dropoff=self.point_location(),
            date=self.pickup_date(),
            adult=PARTY_ADULTS,
            children=0,
            infant=0,
        )

    async def check_search(self, search: dict[str, Any]) -> WireVehicle | None:
        """The vehicle to book (the first that seats the party), or None."""
        deadline = self.deadlines.search
        result = await self.call("POST", "/booking/search", search, deadline)
        problems = self.judge(result, deadline, WireSearchAnswer, "POST", "/booking/search", search_rules)
        answer = parsed(WireSearchAnswer, result.body) if result.ok else None
        note = None
        if answer is not None:
            types = ", ".join(dict.fromkeys(v.type for v in answer.vehicles))
            note = (
                f"{len(answer.vehicles)} vehicles ({types}), distance_km {answer.distance_km}"
                if answer.vehicles
                else f"no vehicles at {self.airport.iata} (try --airport with an airport you serve)"
            )
        self.record("search", "POST", "/booking/search", result, deadline, problems, note)
        # the vehicles a client could be offered: a price with more decimals than its currency is left out
        offered = [v for v in answer.vehicles if _decimal_problem("", v.price, v.currency) is None] if answer else []
        if not offered:
            return None
        seats = [v for v in offered if v.capacity.passengers >= PARTY_ADULTS]
        return (seats or offered)[0]
