"""The rate card form's mapping (portal/card_form.py): a card survives card -> form -> card
unchanged, posted fields become the card's types (or the form's own message), blank rows are
dropped, and every card error lands beside the field that caused it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.hosted.conftest import example_card
from transfers.portal import card_errors
from transfers.portal import card_form as cf
from transfers.ratecards import card as cards

TYPES = frozenset({"SEDAN", "MINIVAN"})


def posted(form: cf.CardForm) -> dict[str, str]:
    """What a browser posts for a form as the page renders it."""
    fields = {"currency": form.currency, "min_lead_hours": form.min_lead_hours, "blackout_dates": form.blackout_dates}
    for table, rows in form.rows.items():
        for index, row in enumerate(rows):
            fields.update({f"{table}{index}-{name}": value for name, value in row.items()})
    return fields


def check(form: cf.CardForm) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    mapped = cf.to_card(form)
    errors, general = card_errors.field_errors(form, mapped, cards.validate(mapped.document, vehicle_types=TYPES))
    return mapped.document, errors, general


def test_the_example_card_round_trips_through_the_form_and_a_post() -> None:
    card = example_card()
    form = cf.from_post(posted(cf.from_card(card)))
    document, errors, general = check(form)
    assert (document, errors, general) == (card, {}, [])


def test_a_minimal_card_round_trips_without_optional_parts() -> None:
    card = example_card()
    for key in ("blackout_dates", "cancellation_policy", "extras"):
        del card[key]
    for vehicle in card["vehicles"]:
        vehicle.pop("daily_capacity", None)
        vehicle["prices"].pop("fixed", None)
        vehicle["prices"].pop("night", None)
    assert cf.to_card(cf.from_post(posted(cf.from_card(card)))).document == card


def test_a_new_card_starts_with_one_blank_vehicle() -> None:
    form = cf.from_card(None)
    assert len(form.vehicles) == 1 and not any(form.vehicles[0].values())
    document, errors, general = check(form)
    assert document["vehicles"] == [] and general == []
    assert errors == {"v0-id": "Enter at least one vehicle."}  # beside the blank row's first field


def test_blank_rows_are_dropped_and_fixed_prices_follow_their_vehicle_by_id() -> None:
    form = cf.from_card(example_card())
    for table in "vfxt":
        form.add_row(table)  # all blank
    form.fixed.insert(0, {"vehicle": "van", "airport": "lgw", "radius_km": "10", "price": "30"})
    document, errors, general = check(form)
    assert (errors, general) == ({}, [])
    assert len(document["vehicles"]) == 2 and len(document["extras"]) == 2
    assert document["vehicles"][1]["prices"]["fixed"] == [{"airport": "LGW", "radius_km": 10, "price": "30"}]


def test_rows_are_added_within_the_schemas_limits_and_removed_by_index() -> None:
    form = cf.from_card(example_card())
    for _ in range(30):
        form.add_row("t")
    assert len(form.tiers) == cf.MAX_ROWS["t"]
    form.remove_row("x", 0)
    form.remove_row("x", 99)  # no such row: nothing happens
    assert [x["id"] for x in form.extras] == ["meet-greet"]


@pytest.mark.parametrize(
    ("field", "typed", "message"),
    [
        ("v0-base", "-5", "Enter 0 or more."),
        ("v0-base", "ten", "Enter an amount, like 40.00."),
        ("v0-minimum", "0", "Enter an amount more than 0."),
        ("v0-minimum", "12.345", "EUR amounts have at most two decimals: 12.345 is refused, not rounded"),
        ("v0-minimum", "12.34567", "Enter an amount with at most the card currency's decimals"),
        ("v0-passengers", "three", "Enter a whole number, like 3."),
        ("v0-passengers", "", "Enter a whole number, like 3 (it is required)."),
        ("v0-passengers", "0", "Enter 1 or more."),
        ("v0-suitcases", "1000", "Enter 100 or less."),
        ("v0-make", "x" * 10_000, "Too long: at most 200 characters (this has 10000)"),
        ("v0-make", "   ", "Enter a value (it is required)."),
        ("v0-id", "has space", "Use 1 to 64 letters"),
        ("v0-type", "SPACESHIP", "is not a vehicle type"),
        ("v0-night_from", "25:00", "Enter a time from 00:00 to 23:59"),
        ("f0-airport", "ZZZ", "is not a known IATA airport code"),
        ("f0-vehicle", "bus", "Choose one of the vehicles above"),
        ("x0-pricing_type", "HOURLY", "PER_BOOKING"),
        ("t0-fee", "lots", "Enter a percentage from 0 to 100"),
        ("t0-fee", "150", "Enter 100 or less."),
        ("currency", "euros", "Enter a 3-letter currency code"),
        ("min_lead_hours", "2.5", "Enter a whole number"),
        ("blackout_dates", "15/01/2027", "Enter dates like 2027-01-15"),
    ],
)
def test_a_bad_value_is_reported_beside_its_field(field: str, typed: str, message: str) -> None:
    values = posted(cf.from_card(example_card()))
    values[field] = typed
    form = cf.from_post(values)
    _, errors, general = check(form)
    assert message in errors.get(field, ""), (errors, general)
    assert form.value(field) == typed[: cf.MAX_FIELD_CHARS]  # what was typed is kept


def test_domain_rules_after_the_schema_land_beside_fields_too() -> None:
    values = posted(cf.from_card(example_card()))
    values["v1-id"] = "sedan"  # the first vehicle's id again
    values["v0-night_to"] = "22:00"  # equal to night_from
    _, errors, _ = check(cf.from_post(values))
    assert "used twice" in errors["v1-id"]
    assert "equal" in errors["v0-night_from"]


def test_a_half_typed_night_window_names_the_missing_parts() -> None:
    values = posted(cf.from_card(example_card()))
    values["v1-night_from"] = "23:00"
    _, errors, _ = check(cf.from_post(values))
    assert errors["v1-night_to"].startswith("Enter an end time too")
    assert errors["v1-night_percent"].startswith("Enter a percent too")


def test_decimal_commas_and_lower_case_codes_are_accepted() -> None:
    values = posted(cf.from_card(example_card()))
    values.update({"v0-per_km": "1,35", "currency": "gbp", "f0-airport": "lhr"})
    document, errors, _ = check(cf.from_post(values))
    assert errors == {}
    assert document["currency"] == "GBP"
    assert document["vehicles"][0]["prices"]["per_km"] == "1.35"
    assert document["vehicles"][0]["prices"]["fixed"][0]["airport"] == "LHR"


def test_unicode_is_kept_as_typed() -> None:
    values = posted(cf.from_card(example_card()))
    values.update({"v0-make": "Škoda", "v0-model": "Octavia – 日本", "x0-name": "Kindersitz für Babys"})
    document, errors, _ = check(cf.from_post(values))
    assert errors == {}
    assert document["vehicles"][0]["model"] == "Octavia – 日本"
    assert document["extras"][0]["name"] == "Kindersitz für Babys"


def test_unknown_and_out_of_range_posted_names_are_ignored() -> None:
    values = posted(cf.from_card(example_card()))
    values.update({"v999-make": "ghost", "v0-evil": "x", "z0-id": "x", "t50-hours": "1"})
    form = cf.from_post(values)
    assert len(form.vehicles) == 2 and len(form.tiers) == 2
    assert check(form)[0] == example_card()


def test_errors_are_listed_in_the_order_of_the_page() -> None:
    ordered = card_errors.in_page_order(
        {"t0-fee": "a", "v1-base": "b", "currency": "c", "v0-minimum": "d", "v0-id": "e"}
    )
    assert list(ordered) == ["currency", "v0-id", "v0-minimum", "v1-base", "t0-fee"]


def test_an_empty_vehicle_table_is_a_general_problem() -> None:
    form = cf.from_card(example_card())
    form.rows["v"] = []
    form.rows["f"] = []
    _, errors, general = check(form)
    assert errors == {}
    assert any(g.startswith("$.vehicles") for g in general)


def test_the_mapping_does_not_change_the_card_it_reads() -> None:
    card = example_card()
    kept = copy.deepcopy(card)
    cf.to_card(cf.from_card(card))
    assert card == kept
