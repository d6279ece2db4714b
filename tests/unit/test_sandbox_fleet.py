"""The sandbox partner's pure parts: fares, fleet, drivers, scenario table and time-derived state."""

from __future__ import annotations

import re
from decimal import Decimal

import phonenumbers
import pytest
from pydantic import ValidationError

from transfers.partners.wire import WireDriver, WireInfoAnswer, WireSearchAnswer
from transfers.sandbox_partner import fleet
from transfers.sandbox_partner.drivers import driver_for, meeting_point
from transfers.sandbox_partner.requests import CreateIn, SearchIn
from transfers.sandbox_partner.scenarios import SCENARIOS, Scenario, active_scenarios
from transfers.sandbox_partner.state import Booking, BoundedDict

# The vehicle types seeded by migration 0002 (GET /api/public/car/type).
REFERENCE_TYPES = {"SEDAN", "ESTATE", "MINIVAN", "MINIBUS", "BUS", "LUXURY", "ELECTRIC"}
LHR = {"type": "AIRPORT", "iata_code": "LHR", "name": "London Heathrow Airport", "lat": 51.4706, "lng": -0.46194}
CENTRAL_LONDON = {"type": "POINT", "name": "Trafalgar Square", "lat": 51.508, "lng": -0.128}


def test_fleet_uses_reference_types_and_covers_the_required_ones() -> None:
    types = {v.type for v in fleet.FLEET}
    assert types <= REFERENCE_TYPES
    assert {"SEDAN", "MINIVAN", "MINIBUS", "LUXURY"} <= types
    seats = {v.type: v.passengers for v in fleet.FLEET}
    assert seats["MINIVAN"] == 7 and seats["MINIBUS"] == 16 and seats["LUXURY"] == 3
    assert next(v for v in fleet.FLEET if v.type == "LUXURY").model == "S-Class"
    assert len(fleet.FLEET_BY_ID) == len(fleet.FLEET)


def test_fares_are_base_plus_per_km_in_cents_and_grow_with_distance() -> None:
    sedan = fleet.FLEET_BY_ID["sedan"]
    assert sedan.fare(20, "EUR") == sedan.base_fare + 20 * sedan.per_km
    for vehicle in fleet.FLEET:
        fares = [vehicle.fare(d, "EUR") for d in (1, 5, 25, 60, 250)]
        assert fares == sorted(fares) and len(set(fares)) == len(fares)
        assert all(f == f.quantize(Decimal("0.01")) and f > 0 for f in fares)
    assert sedan.fare(0, "EUR") == sedan.fare(1, "EUR")  # a minimum fare, never a free ride


def test_quote_validates_on_the_wire_and_seats_the_party() -> None:
    distance = fleet.distance_km(LHR, CENTRAL_LONDON)
    assert distance is not None and 20 <= distance <= 26
    answer = {"distance_km": distance, "vehicles": fleet.quote(distance, 2, "EUR")}
    parsed = WireSearchAnswer.model_validate(answer)
    assert len(parsed.vehicles) == len(fleet.FLEET)
    prices = [v.price for v in parsed.vehicles]
    assert prices == sorted(prices)
    for raw in answer["vehicles"]:
        assert re.fullmatch(r"\d+\.\d\d", raw["price"])
        assert {e["pricing_type"] for e in raw["extras"]} == {"PER_ITEM", "PER_BOOKING"}
    big_party = fleet.quote(distance, 9, "EUR")
    assert [v["type"] for v in big_party] == ["MINIBUS"]
    assert fleet.quote(distance, 17, "EUR") == []


def test_distance_falls_back_to_the_airport_dataset() -> None:
    bare = {"type": "AIRPORT", "iata_code": "cdg"}
    assert fleet.distance_km(bare, {"type": "POINT", "name": "Louvre", "lat": 48.8606, "lng": 2.3376}) == 23
    assert fleet.distance_km({"type": "AIRPORT", "iata_code": "QQQ"}, CENTRAL_LONDON) is None
    assert fleet.distance_km(LHR, LHR) == 0


def test_extras_charge_per_item_or_once() -> None:
    seat, greet = fleet.EXTRAS_BY_ID["child-seat"], fleet.EXTRAS_BY_ID["meet-greet"]
    assert seat.charge(2) == Decimal("16.00")
    assert greet.charge(3) == greet.price


def test_drivers_are_deterministic_plausible_and_valid_on_the_wire() -> None:
    first = driver_for("TB-7K3M9Q2X")
    assert first == driver_for("TB-7K3M9Q2X")
    WireDriver.model_validate(first)
    assert re.fullmatch(r"\+442079460\d{3}", first["phone"])
    assert phonenumbers.is_valid_number(phonenumbers.parse(first["phone"]))
    assert re.fullmatch(r"[A-Z]{2}\d{2} [A-Z]{3}", first["plate"])
    assert len({driver_for(f"TB-{i:08d}")["name"] for i in range(50)}) > 10


def test_meeting_points() -> None:
    assert meeting_point(LHR) == "Arrivals hall of your terminal, by the Costa Coffee, holding a name board"
    assert "Paris Charles de Gaulle" in meeting_point(
        {"type": "AIRPORT", "iata_code": "CDG", "name": "Paris Charles de Gaulle Airport"}
    )
    assert "Trafalgar Square" in meeting_point(CENTRAL_LONDON)


def test_scenario_table_lists_every_trigger_once() -> None:
    assert set(SCENARIOS) == set(Scenario)
    assert {s.value for s in Scenario} == {
        "DECLINE",
        "SLOWAPPROVE",
        "PARTNERDOWN",
        "PARTNERCANCEL",
        "XX0000",
        "NOAMEND",
        "RIDE",
        "NOSHOW",
    }
    assert {t.field for t in SCENARIOS.values()} == {"passenger_info.surname", "flight_info.flight_number"}
    assert active_scenarios(" decline ", "BA117") == {Scenario.DECLINE}
    assert active_scenarios("Lovelace", "xx0000") == {Scenario.NO_SHOW}
    assert active_scenarios("XX0000", "DECLINE") == frozenset()  # each trigger only in its own field
    assert active_scenarios("noshow", "BA117") == {Scenario.CUSTOMER_NO_SHOW}


def _booking(**overrides: object) -> Booking:
    values: dict[str, object] = {
        "reservation_no": "TB-1",
        "partner_reference": "SBX-1",
        "created_at": 100.0,
        "approve_at": 110.0,
        "details": {},
        "driver": driver_for("TB-1"),
        "meeting_point": "Arrivals",
    }
    values.update(overrides)
    return Booking(**values)  # type: ignore[arg-type]


def test_status_is_derived_from_time() -> None:
    booking = _booking()
    assert booking.status(109.9) == "PENDING" and booking.info(109.9)["driver_info"] is None
    info = booking.info(110.0)
    assert info["status"] == "APPROVED" and info["driver_info"] == booking.driver
    WireInfoAnswer.model_validate(info)
    assert info["booking_details"]["no_show"] is False
    assert _booking(no_show=True).info(120)["booking_details"]["no_show"] is True
    assert _booking(no_show=True).info(105)["booking_details"]["no_show"] is False
    partner_cancel = _booking(partner_cancel_at=120.0)
    assert [partner_cancel.status(t) for t in (105, 115, 120)] == ["PENDING", "APPROVED", "CANCELLED"]
    assert _booking(cancelled_at=105.0).status(200) == "CANCELLED"
    assert _booking(declined=True, partner_reference=None).status(200) == "DECLINED"


def test_bounded_dict_evicts_oldest() -> None:
    store: BoundedDict[str, int] = BoundedDict(3)
    for i in range(5):
        store[str(i)] = i
    assert list(store) == ["2", "3", "4"]


def test_requests_need_one_airport_and_the_documented_fields() -> None:
    search = {
        "booking_type": "ONEWAY",
        "from": LHR,
        "to": CENTRAL_LONDON,
        "date": "2026-12-01T14:30:00+00:00",
        "passengers": {"adult": 2, "children": None, "infant": 0},
    }
    parsed = SearchIn.model_validate(search)
    assert parsed.passengers.party == 2
    SearchIn.model_validate(dict(search, **{"from": CENTRAL_LONDON, "to": LHR}))
    for bad in (
        dict(search, to=LHR),
        dict(search, booking_type="RETURN"),
        dict(search, passengers={"adult": 0}),
        dict(search, to={"type": "POINT", "name": "x"}),
    ):
        with pytest.raises(ValidationError):
            SearchIn.model_validate(bad)
    create = {
        "reservation_no": "TB-1",
        "vehicle_id": 7,
        "passenger_info": {"name": "Ada", "surname": "Lovelace", "email": "a@example.com", "phone": "+4477"},
        "flight_info": {"flight_number": "BA117"},
        "trip": {k: v for k, v in search.items() if k != "booking_type"},
    }
    assert CreateIn.model_validate(create).vehicle_id == "7"
    with pytest.raises(ValidationError):
        CreateIn.model_validate({k: v for k, v in create.items() if k != "flight_info"})
