"""The rate card as a form (docs/partners/hosted.md): what a dispatcher types, row by row, mapped to the
card document of ``ratecards/card.py`` and back, and every problem of the card mapped to the field
that caused it (the GOV.UK pattern: a summary linking to each field, the message beside it; the
messages and their order are ``card_errors.py``).

Why a separate, pure module: the mapping is the part that can silently lose data (a night window
dropped, a fixed price moved to another vehicle), so it is tested on its own, both ways, with no
HTTP and no database. Validation stays where it was: the form only turns text into the card's
types (a word in a number field is the form's own message); everything else (ranges, lengths,
patterns, ids used twice, policy rules) is the card's schema and domain rules, whose ``$.path``
errors are moved beside the fields here.

Field names are also the element ids: ``currency``, ``min_lead_hours``, ``blackout_dates``, and per
row ``v{i}-{field}`` (vehicles), ``f{i}-{field}`` (fixed prices, each naming its vehicle by id),
``x{i}-{field}`` (extras), ``t{i}-{field}`` (cancellation tiers). A row left entirely blank is
dropped, so "Add a vehicle" then "Save" with nothing typed changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

VEHICLE_FIELDS = (
    "id",
    "type",
    "make",
    "model",
    "passengers",
    "suitcases",
    "small_bags",
    "base",
    "per_km",
    "minimum",
    "daily_capacity",
    "night_from",
    "night_to",
    "night_percent",
)
FIXED_FIELDS = ("vehicle", "airport", "radius_km", "price")
EXTRA_FIELDS = ("id", "name", "price", "pricing_type")
TIER_FIELDS = ("hours", "fee")
TABLES: dict[str, tuple[str, ...]] = {"v": VEHICLE_FIELDS, "f": FIXED_FIELDS, "x": EXTRA_FIELDS, "t": TIER_FIELDS}
# The schema's own limits on rows (openapi/rate-card.schema.json); one more is room to type into.
MAX_ROWS = {"v": 50, "f": 200, "x": 20, "t": 10}
MAX_FIELD_CHARS = 10_000  # anything longer is cut before mapping (the schema's limits are far lower)
ROW_FIELD = re.compile(r"^([vfxt])(\d{1,3})-([a-z_]+)$")


@dataclass
class CardForm:
    """What the form shows: every value as text, exactly as typed (or as the card holds it)."""

    currency: str = "EUR"
    min_lead_hours: str = "2"
    blackout_dates: str = ""
    rows: dict[str, list[dict[str, str]]] = field(default_factory=lambda: {t: [] for t in TABLES})

    @property
    def vehicles(self) -> list[dict[str, str]]:
        return self.rows["v"]

    @property
    def fixed(self) -> list[dict[str, str]]:
        return self.rows["f"]

    @property
    def extras(self) -> list[dict[str, str]]:
        return self.rows["x"]

    @property
    def tiers(self) -> list[dict[str, str]]:
        return self.rows["t"]

    def add_row(self, table: str) -> None:
        if table in TABLES and len(self.rows[table]) < MAX_ROWS[table]:
            self.rows[table].append(dict.fromkeys(TABLES[table], ""))

    def remove_row(self, table: str, index: int) -> None:
        if table in TABLES and 0 <= index < len(self.rows[table]):
            del self.rows[table][index]

    def has_field(self, name: str) -> bool:
        """The page shows a field of this name (a row's field only while that row exists)."""
        match = ROW_FIELD.match(name)
        if match is None:
            return name in {"currency", "min_lead_hours", "blackout_dates"}
        return int(match.group(2)) < len(self.rows[match.group(1)])

    def value(self, name: str) -> str:
        """The typed value of a field by its name (``v0-base``), for tests and templates."""
        match = ROW_FIELD.match(name)
        if match is None:
            return str(getattr(self, name, ""))
        table, index = match.group(1), int(match.group(2))
        rows = self.rows[table]
        return rows[index].get(match.group(3), "") if index < len(rows) else ""


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def from_card(card: Mapping[str, Any] | None) -> CardForm:
    """The form for a stored (valid) card; a new card starts with one empty vehicle row."""
    form = CardForm()
    if not card:
        form.add_row("v")
        return form
    form.currency = _text(card.get("currency"))
    form.min_lead_hours = _text(card.get("min_lead_hours"))
    form.blackout_dates = "\n".join(str(d) for d in card.get("blackout_dates", []))
    for vehicle in card.get("vehicles", []):
        prices = vehicle.get("prices", {})
        night = prices.get("night") or {}
        form.vehicles.append(
            {
                "id": _text(vehicle.get("id")),
                "type": _text(vehicle.get("type")),
                "make": _text(vehicle.get("make")),
                "model": _text(vehicle.get("model")),
                "passengers": _text(vehicle.get("passengers")),
                "suitcases": _text(vehicle.get("suitcases")),
                "small_bags": _text(vehicle.get("small_bags")),
                "base": _text(prices.get("base")),
                "per_km": _text(prices.get("per_km")),
                "minimum": _text(prices.get("minimum")),
                "daily_capacity": _text(vehicle.get("daily_capacity")),
                "night_from": _text(night.get("from")),
                "night_to": _text(night.get("to")),
                "night_percent": _text(night.get("percent")),
            }
        )
        for fixed in prices.get("fixed", []):
            form.fixed.append(
                {
                    "vehicle": _text(vehicle.get("id")),
                    "airport": _text(fixed.get("airport")),
                    "radius_km": _text(fixed.get("radius_km")),
                    "price": _text(fixed.get("price")),
                }
            )
    for extra in card.get("extras", []):
        form.extras.append({name: _text(extra.get(name)) for name in EXTRA_FIELDS})
    for tier in card.get("cancellation_policy", []) or []:
        form.tiers.append({"hours": _text(tier.get("hours_before_pickup")), "fee": _text(tier.get("fee_percent"))})
    return form


def from_post(posted: Mapping[str, Any]) -> CardForm:
    """The form as posted: scalars and every row field found (rows ordered by their index; a row
    number past the table's limit is ignored). Values are cut at ``MAX_FIELD_CHARS``."""
    form = CardForm()

    def clean(value: Any) -> str:
        return value[:MAX_FIELD_CHARS] if isinstance(value, str) else ""

    form.currency = clean(posted.get("currency"))
    form.min_lead_hours = clean(posted.get("min_lead_hours"))
    form.blackout_dates = clean(posted.get("blackout_dates"))
    found: dict[str, dict[int, dict[str, str]]] = {t: {} for t in TABLES}
    for name in posted:
        match = ROW_FIELD.match(str(name))
        if match is None or match.group(3) not in TABLES[match.group(1)]:
            continue
        table, index = match.group(1), int(match.group(2))
        if index < MAX_ROWS[table]:
            found[table].setdefault(index, dict.fromkeys(TABLES[table], ""))[match.group(3)] = clean(posted.get(name))
    for table, by_index in found.items():
        form.rows[table] = [by_index[i] for i in sorted(by_index)]
    return form


@dataclass
class Mapped:
    """The card a form makes, the form's own problems by field, and where each card path came from."""

    document: dict[str, Any]
    problems: dict[str, str]
    fields: dict[str, str]  # JSON path of a value or row -> the field id that holds it

    def field_for(self, path: str) -> str:
        """The field of a card error's path: the longest known prefix (``$.vehicles[0].prices``
        -> the row's first field); "" for the card as a whole."""
        probe = path
        while probe:
            if probe in self.fields:
                return self.fields[probe]
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""
        return ""


def _blank(row: Mapping[str, str]) -> bool:
    return not any(value.strip() for value in row.values())


def _kept_rows(rows: list[dict[str, str]], prefix: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The rows a person filled in, each with its fields' name prefix (``v3-``: the form's fourth
    vehicle row, whatever blank rows came before it, so an error lands beside the right field)."""
    for i, row in enumerate(rows):
        if not _blank(row):
            yield f"{prefix}{i}-", row


class _Builder:
    def __init__(self) -> None:
        self.problems: dict[str, str] = {}
        self.fields: dict[str, str] = {}

    def text(self, value: str, where: str, name: str) -> str:
        self.fields[where] = name
        return value.strip()

    def integer(self, value: str, where: str, name: str) -> Any:
        self.fields[where] = name
        typed = value.strip()
        try:
            return int(typed)
        except ValueError:
            self.problems.setdefault(name, f"Enter a whole number, like 3{'' if typed else ' (it is required)'}.")
            return typed

    def amount(self, value: str, where: str, name: str, *, positive: bool) -> str:
        """A money amount kept as its decimal string; a decimal comma ("40,50") is accepted."""
        self.fields[where] = name
        typed = value.strip()
        if "," in typed and "." not in typed:
            typed = typed.replace(",", ".")
        try:
            number = Decimal(typed)
        except InvalidOperation:
            number = None
        if number is None or not number.is_finite():
            self.problems.setdefault(name, "Enter an amount, like 40.00.")
        elif number < 0 or (positive and number == 0):
            self.problems.setdefault(name, "Enter an amount more than 0." if positive else "Enter 0 or more.")
        return typed

    def percent(self, value: str, where: str, name: str) -> Any:
        """A cancellation fee percent: a JSON number (an integer when it is one)."""
        self.fields[where] = name
        typed = value.strip()
        try:
            number = Decimal(typed)
        except InvalidOperation:
            self.problems.setdefault(name, "Enter a percentage from 0 to 100, like 50.")
            return typed
        if not number.is_finite():
            self.problems.setdefault(name, "Enter a percentage from 0 to 100, like 50.")
            return typed
        return int(number) if number == number.to_integral_value() else float(number)


def to_card(form: CardForm) -> Mapped:
    """The card document the form describes. Values that cannot be converted stay as typed in the
    document (so the schema still reports the rest of the card) and have the form's own message."""
    b = _Builder()
    b.fields["$.vehicles"] = "v0-id"
    b.fields["$.extras"] = "x0-id"
    b.fields["$.cancellation_policy"] = "t0-hours"
    doc: dict[str, Any] = {
        "currency": b.text(form.currency, "$.currency", "currency").upper(),
        "min_lead_hours": b.integer(form.min_lead_hours, "$.min_lead_hours", "min_lead_hours"),
    }
    dates = [d for d in re.split(r"[\s,;]+", form.blackout_dates) if d]
    if dates:
        doc["blackout_dates"] = dates
    b.fields["$.blackout_dates"] = "blackout_dates"
    vehicles: list[dict[str, Any]] = []
    by_id: dict[str, tuple[int, dict[str, Any]]] = {}
    for name, row in _kept_rows(form.vehicles, "v"):
        at = f"$.vehicles[{len(vehicles)}]"
        b.fields[at] = name + "id"
        b.fields[at + ".prices"] = name + "base"
        vehicle: dict[str, Any] = {
            "id": b.text(row["id"], at + ".id", name + "id"),
            "type": b.text(row["type"], at + ".type", name + "type"),
            "make": b.text(row["make"], at + ".make", name + "make"),
            "model": b.text(row["model"], at + ".model", name + "model"),
            "passengers": b.integer(row["passengers"], at + ".passengers", name + "passengers"),
            "suitcases": b.integer(row["suitcases"], at + ".suitcases", name + "suitcases"),
            "small_bags": b.integer(row["small_bags"], at + ".small_bags", name + "small_bags"),
            "prices": {
                "base": b.amount(row["base"], at + ".prices.base", name + "base", positive=False),
                "per_km": b.amount(row["per_km"], at + ".prices.per_km", name + "per_km", positive=False),
                "minimum": b.amount(row["minimum"], at + ".prices.minimum", name + "minimum", positive=True),
            },
        }
        if row["daily_capacity"].strip():
            vehicle["daily_capacity"] = b.integer(
                row["daily_capacity"], at + ".daily_capacity", name + "daily_capacity"
            )
        night = [row["night_from"].strip(), row["night_to"].strip(), row["night_percent"].strip()]
        if any(night):
            where = at + ".prices.night"
            b.fields[where] = name + "night_from"
            vehicle["prices"]["night"] = {
                "from": b.text(night[0], where + ".from", name + "night_from"),
                "to": b.text(night[1], where + ".to", name + "night_to"),
                "percent": b.text(night[2], where + ".percent", name + "night_percent"),
            }
            for value, part, label in zip(
                night, ("from", "to", "percent"), ("a start time", "an end time", "a percent"), strict=True
            ):
                if not value:
                    b.problems.setdefault(
                        f"{name}night_{part}", f"Enter {label} too, or leave all three night fields empty."
                    )
        vehicles.append(vehicle)
        if vehicle["id"] and vehicle["id"] not in by_id:
            by_id[vehicle["id"]] = (len(vehicles) - 1, vehicle)
    doc["vehicles"] = vehicles
    for name, row in _kept_rows(form.fixed, "f"):
        owner = by_id.get(row["vehicle"].strip())
        if owner is None:
            b.problems.setdefault(name + "vehicle", "Choose one of the vehicles above (by its id).")
            continue
        v_index, vehicle = owner
        fixed = vehicle["prices"].setdefault("fixed", [])
        at = f"$.vehicles[{v_index}].prices.fixed[{len(fixed)}]"
        b.fields[at] = name + "airport"
        fixed.append(
            {
                "airport": b.text(row["airport"], at + ".airport", name + "airport").upper(),
                "radius_km": b.integer(row["radius_km"], at + ".radius_km", name + "radius_km"),
                "price": b.amount(row["price"], at + ".price", name + "price", positive=True),
            }
        )
    extras: list[dict[str, Any]] = []
    for name, row in _kept_rows(form.extras, "x"):
        at = f"$.extras[{len(extras)}]"
        b.fields[at] = name + "id"
        extras.append(
            {
                "id": b.text(row["id"], at + ".id", name + "id"),
                "name": b.text(row["name"], at + ".name", name + "name"),
                "price": b.amount(row["price"], at + ".price", name + "price", positive=True),
                "pricing_type": b.text(row["pricing_type"], at + ".pricing_type", name + "pricing_type"),
            }
        )
    if extras:
        doc["extras"] = extras
    tiers: list[dict[str, Any]] = []
    for name, row in _kept_rows(form.tiers, "t"):
        at = f"$.cancellation_policy[{len(tiers)}]"
        b.fields[at] = name + "hours"
        tiers.append(
            {
                "hours_before_pickup": b.integer(row["hours"], at + ".hours_before_pickup", name + "hours"),
                "fee_percent": b.percent(row["fee"], at + ".fee_percent", name + "fee"),
            }
        )
    if tiers:
        doc["cancellation_policy"] = tiers
    return Mapped(doc, b.problems, b.fields)
