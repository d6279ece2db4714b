"""A hosted partner's rate card (docs/rules/hosted-partners.md): validation against the published schema, and the
parsed, typed card the pricing reads. Pure: no HTTP, no SQL.

Why a published JSON Schema (``openapi/rate-card.schema.json``) and not only code: partners edit
their card as JSON (CLI, portal), and tools can check a card before sending it. Whatever the
schema cannot say (ids unique within the card, a fixed price's airport that exists, a night window
that is not empty, a vehicle type of the reference data) is checked here, after it. Every problem
is reported at once, each with the JSON path and the reason, so a partner fixes a card in one go.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, cast

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

from transfers import money
from transfers.cancellation import policy
from transfers.errors import Invalid
from transfers.reference.airports import is_known

PricingType = Literal["PER_BOOKING", "PER_ITEM"]
SCHEMA_RESOURCE = "openapi/rate-card.schema.json"


@dataclass(frozen=True, slots=True)
class CardError:
    """One problem of a card: where (``$.vehicles[0].prices.base``) and why."""

    path: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class InvalidRateCard(Invalid, ValueError):
    """A card that breaks its schema; ``errors`` lists every problem."""

    def __init__(self, errors: list[CardError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


@dataclass(frozen=True, slots=True)
class FixedPrice:
    airport: str
    radius_km: int
    price: Decimal


@dataclass(frozen=True, slots=True)
class NightSurcharge:
    start: time  # inclusive, local time
    end: time  # exclusive; end < start: the window crosses midnight
    percent: Decimal

    def covers(self, local: time) -> bool:
        if self.start < self.end:
            return self.start <= local < self.end
        return local >= self.start or local < self.end


@dataclass(frozen=True, slots=True)
class Prices:
    base: Decimal
    per_km: Decimal
    minimum: Decimal
    fixed: tuple[FixedPrice, ...] = ()
    night: NightSurcharge | None = None


@dataclass(frozen=True, slots=True)
class CardVehicle:
    id: str
    type: str
    make: str
    model: str
    passengers: int
    suitcases: int
    small_bags: int
    prices: Prices
    daily_capacity: int | None = None  # None: no limit


@dataclass(frozen=True, slots=True)
class CardExtra:
    id: str
    name: str
    price: Decimal
    pricing_type: PricingType


@dataclass(frozen=True, slots=True)
class RateCard:
    currency: str
    min_lead_hours: int
    vehicles: tuple[CardVehicle, ...]
    extras: tuple[CardExtra, ...] = ()
    blackout_dates: frozenset[date] = frozenset()
    cancellation_policy: tuple[dict[str, Any], ...] | None = None

    def vehicle(self, vehicle_id: str) -> CardVehicle | None:
        return next((v for v in self.vehicles if v.id == vehicle_id), None)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The published schema, as shipped in the package (``transfers/openapi``)."""
    text = resources.files("transfers").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    return Draft202012Validator(schema(), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _reason(error: ValidationError) -> str:
    """The validator's message without echoing a huge or hostile value back in full; a pattern that
    has a description in the schema is explained by it rather than quoted as a regular expression."""
    message = str(error.message)
    described = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "maxLength" and isinstance(error.instance, str):
        return f"too long: at most {error.validator_value} characters (this has {len(error.instance)})"
    if error.validator == "pattern" and described:
        shown = repr(error.instance)
        message = f"{shown if len(shown) <= 60 else shown[:57] + '...'} is not {described}"
    return message if len(message) <= 300 else message[:297] + "..."


def validate(document: Any, *, vehicle_types: frozenset[str] | None = None) -> list[CardError]:
    """Every problem of ``document`` (already parsed JSON), schema errors first, in path order.

    ``vehicle_types``: the reference data's names; None skips that check (pure callers)."""
    errors = sorted(_validator().iter_errors(document), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    found = [CardError(e.json_path, _reason(e)) for e in errors]
    if not found and isinstance(document, dict):
        found.extend(_semantic_errors(document, vehicle_types))
    return found


def _duplicates(items: list[dict[str, Any]], key: str, where: str) -> list[CardError]:
    seen: set[Any] = set()
    out = []
    for index, item in enumerate(items):
        if item[key] in seen:
            out.append(CardError(f"{where}[{index}].{key}", f"{item[key]!r} is used twice in {where}"))
        seen.add(item[key])
    return out


def _amounts(card: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every money amount of the card with its path: vehicles' base, per km, minimum and fixed prices,
    and extras' prices."""
    found: list[tuple[str, Any]] = []
    for v_index, vehicle in enumerate(card["vehicles"]):
        prices, where = vehicle["prices"], f"$.vehicles[{v_index}].prices"
        found += [(f"{where}.{name}", prices[name]) for name in ("base", "per_km", "minimum") if name in prices]
        found += [(f"{where}.fixed[{i}].price", f["price"]) for i, f in enumerate(prices.get("fixed", []))]
    found += [(f"$.extras[{i}].price", e["price"]) for i, e in enumerate(card.get("extras", []))]
    return found


def _decimal_errors(card: dict[str, Any]) -> list[CardError]:
    """Amounts with more decimals than the card's currency has (EUR two, JPY none, KWD three: the schema
    takes up to four, any currency's most): refused, never rounded (docs/architecture/money.md)."""
    currency = card["currency"]
    if not money.is_currency(currency):
        return [CardError("$.currency", f"{currency!r} is not an ISO 4217 currency code")]
    errors = []
    for path, value in _amounts(card):
        try:
            money.parse(value, currency)
        except money.MoneyError as exc:
            errors.append(CardError(path, str(exc)))
    return errors


def _semantic_errors(card: dict[str, Any], vehicle_types: frozenset[str] | None) -> list[CardError]:
    """What the schema cannot express."""
    errors = _duplicates(card["vehicles"], "id", "$.vehicles") + _duplicates(card.get("extras", []), "id", "$.extras")
    errors += _decimal_errors(card)
    for index, day in enumerate(card.get("blackout_dates", [])):
        try:
            date.fromisoformat(day)
        except ValueError:
            errors.append(CardError(f"$.blackout_dates[{index}]", f"{day!r} is not a calendar date"))
    # the rules every policy keeps (docs/rules/cancellation.md, cancellation/policy.py)
    if "cancellation_policy" in card:
        try:
            policy.from_json(card["cancellation_policy"])
        except policy.PolicyError as exc:
            errors.append(CardError("$.cancellation_policy", str(exc)))
    for v_index, vehicle in enumerate(card["vehicles"]):
        where = f"$.vehicles[{v_index}]"
        if vehicle_types is not None and vehicle["type"] not in vehicle_types:
            errors.append(
                CardError(
                    f"{where}.type",
                    f"{vehicle['type']!r} is not a vehicle type of the reference "
                    f"data ({', '.join(sorted(vehicle_types))})",
                )
            )
        prices = vehicle["prices"]
        for f_index, fixed in enumerate(prices.get("fixed", [])):
            if not is_known(fixed["airport"]):
                errors.append(
                    CardError(
                        f"{where}.prices.fixed[{f_index}].airport",
                        f"{fixed['airport']!r} is not a known IATA airport code",
                    )
                )
        seen = set()
        for f_index, fixed in enumerate(prices.get("fixed", [])):
            pair = (fixed["airport"], fixed["radius_km"])
            if pair in seen:
                errors.append(
                    CardError(
                        f"{where}.prices.fixed[{f_index}]", f"a second fixed price for {pair[0]} within {pair[1]} km"
                    )
                )
            seen.add(pair)
        night = prices.get("night")
        if night is not None and night["from"] == night["to"]:
            errors.append(CardError(f"{where}.prices.night", "'from' and 'to' are equal: the window would be empty"))
    return errors


def parse(document: Any, *, vehicle_types: frozenset[str] | None = None) -> RateCard:
    """The typed card of a valid document; InvalidRateCard listing every problem otherwise."""
    errors = validate(document, vehicle_types=vehicle_types)
    if errors:
        raise InvalidRateCard(errors)
    return _typed(document)


def load_stored(document: dict[str, Any]) -> RateCard:
    """A card read back from the database: it was validated when it was set (no re-validation on
    the search path, which is timed)."""
    return _typed(document)


def _typed(card: dict[str, Any]) -> RateCard:
    vehicles = []
    for v in card["vehicles"]:
        p = v["prices"]
        night = p.get("night")
        vehicles.append(
            CardVehicle(
                id=v["id"],
                type=v["type"],
                make=v["make"],
                model=v["model"],
                passengers=v["passengers"],
                suitcases=v["suitcases"],
                small_bags=v["small_bags"],
                daily_capacity=v.get("daily_capacity"),
                prices=Prices(
                    base=Decimal(p["base"]),
                    per_km=Decimal(p["per_km"]),
                    minimum=Decimal(p["minimum"]),
                    fixed=tuple(
                        FixedPrice(f["airport"], f["radius_km"], Decimal(f["price"]))
                        for f in sorted(p.get("fixed", []), key=lambda f: f["radius_km"])
                    ),
                    night=None
                    if night is None
                    else NightSurcharge(
                        time.fromisoformat(night["from"]), time.fromisoformat(night["to"]), Decimal(night["percent"])
                    ),
                ),
            )
        )
    policy = card.get("cancellation_policy")
    return RateCard(
        currency=card["currency"],
        min_lead_hours=card["min_lead_hours"],
        vehicles=tuple(vehicles),
        extras=tuple(
            CardExtra(e["id"], e["name"], Decimal(e["price"]), cast(PricingType, e["pricing_type"]))
            for e in card.get("extras", [])
        ),
        blackout_dates=frozenset(date.fromisoformat(d) for d in card.get("blackout_dates", [])),
        cancellation_policy=None if policy is None else tuple(dict(t) for t in policy),
    )
