"""Rate-card pricing (docs/rules/hosted-partners.md), rule by rule: table-driven over hand-computed prices."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from transfers.ratecards import card as cards
from transfers.ratecards.pricing import Trip, amendment_refusal, quote, refusal, vehicle_price

EXAMPLE = json.loads((Path(__file__).parents[2] / "examples" / "rate-card.json").read_text())
LONDON = ZoneInfo("Europe/London")
TOKYO = ZoneInfo("Asia/Tokyo")


def card_with(**vehicle_prices: Any) -> cards.RateCard:
    doc = copy.deepcopy(EXAMPLE)
    doc["vehicles"][0]["prices"] = {"base": "10.00", "per_km": "1.20", "minimum": "40.00", **vehicle_prices}
    return cards.parse(doc)


def trip(local: str, km: int, *, airport: str = "LHR", tz: ZoneInfo = LONDON, searched: datetime | None = None) -> Trip:
    pickup = datetime.fromisoformat(local).replace(tzinfo=tz)
    return Trip(airport, tz, pickup, km, searched or pickup - timedelta(days=3))


NIGHT = {"from": "22:00", "to": "06:00", "percent": "20"}
DAY_WINDOW = {"from": "09:00", "to": "17:00", "percent": "12.5"}
FIXED = [
    {"airport": "LHR", "radius_km": 25, "price": "55.00"},
    {"airport": "LHR", "radius_km": 10, "price": "35.00"},
    {"airport": "LGW", "radius_km": 50, "price": "70.00"},
]


@pytest.mark.parametrize(
    ("prices", "the_trip", "expected"),
    [
        # distance price: base + per_km x km, when above the minimum
        ({}, trip("2027-03-01 12:00", 50), "70.00"),
        # the minimum wins over a short trip's distance price
        ({}, trip("2027-03-01 12:00", 5), "40.00"),
        # exactly at the minimum: 10 + 1.2 x 25 = 40
        ({}, trip("2027-03-01 12:00", 25), "40.00"),
        # per_km with cents: 10 + 1.2 x 33 = 49.60
        ({}, trip("2027-03-01 12:00", 33), "49.60"),
        # rounding half-up to cents: 0.005 per km x 1 km
        ({"base": "0", "per_km": "0.01", "minimum": "0.01"}, trip("2027-03-01 12:00", 1), "0.01"),
        # fixed price: smallest radius holding the trip wins; the minimum does not apply to it
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 8), "35.00"),
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 10), "35.00"),
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 11), "55.00"),
        # outside every radius: distance price again
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 26), "41.20"),
        # a fixed price of another airport does not match
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 30, airport="LGW"), "70.00"),
        ({"fixed": FIXED}, trip("2027-03-01 12:00", 60, airport="LGW"), "82.00"),
        # night window across midnight, local time: 22:00 inclusive, 06:00 exclusive
        ({"night": NIGHT}, trip("2027-03-01 22:00", 50), "84.00"),
        ({"night": NIGHT}, trip("2027-03-01 02:30", 50), "84.00"),
        ({"night": NIGHT}, trip("2027-03-01 05:59", 50), "84.00"),
        ({"night": NIGHT}, trip("2027-03-01 06:00", 50), "70.00"),
        ({"night": NIGHT}, trip("2027-03-01 21:59", 50), "70.00"),
        # surcharge on the minimum and on a fixed price alike
        ({"night": NIGHT}, trip("2027-03-01 23:00", 5), "48.00"),
        ({"night": NIGHT, "fixed": FIXED}, trip("2027-03-01 23:00", 5), "42.00"),
        # a window within one day, percent with decimals, rounded half-up: 70 x 1.125 = 78.75
        ({"night": DAY_WINDOW}, trip("2027-03-01 09:00", 50), "78.75"),
        ({"night": DAY_WINDOW}, trip("2027-03-01 17:00", 50), "70.00"),
        # 41.20 x 1.125 = 46.35
        ({"night": DAY_WINDOW}, trip("2027-03-01 12:00", 26), "46.35"),
    ],
)
def test_vehicle_price(prices: dict[str, Any], the_trip: Trip, expected: str) -> None:
    card = card_with(**prices)
    assert vehicle_price(card.vehicles[0], the_trip, card.currency) == Decimal(expected)


def test_night_window_is_the_airport_local_time_not_utc() -> None:
    card = card_with(night=NIGHT)
    # 23:30 in Tokyo is 14:30 UTC: surcharged, because the window is the airport's local time.
    tokyo_night = Trip("NRT", TOKYO, datetime(2027, 3, 1, 14, 30, tzinfo=UTC), 50, datetime(2027, 2, 1, tzinfo=UTC))
    assert vehicle_price(card.vehicles[0], tokyo_night, card.currency) == Decimal("84.00")
    # 23:30 UTC is 08:30 in Tokyo: no surcharge.
    tokyo_morning = Trip("NRT", TOKYO, datetime(2027, 3, 1, 23, 30, tzinfo=UTC), 50, datetime(2027, 2, 1, tzinfo=UTC))
    assert vehicle_price(card.vehicles[0], tokyo_morning, card.currency) == Decimal("70.00")
    # Summer time in London: 22:30 BST is 21:30 UTC, still in the window.
    bst = Trip("LHR", LONDON, datetime(2027, 7, 1, 21, 30, tzinfo=UTC), 50, datetime(2027, 6, 1, tzinfo=UTC))
    assert vehicle_price(card.vehicles[0], bst, card.currency) == Decimal("84.00")


@pytest.mark.parametrize(
    ("pickup_utc", "tz", "offered"),
    [
        # 2027-01-15 is a blackout date of the example card, in the airport's time zone
        (datetime(2027, 1, 15, 0, 30, tzinfo=UTC), LONDON, False),
        (datetime(2027, 1, 15, 23, 59, tzinfo=UTC), LONDON, False),
        (datetime(2027, 1, 16, 0, 0, tzinfo=UTC), LONDON, True),
        # 15:30 UTC on the 14th is 00:30 on the 15th in Tokyo: blacked out there
        (datetime(2027, 1, 14, 15, 30, tzinfo=UTC), TOKYO, False),
        # 15:30 UTC on the 15th is 00:30 on the 16th in Tokyo: offered
        (datetime(2027, 1, 15, 15, 30, tzinfo=UTC), TOKYO, True),
        # 14:59 UTC on the 14th is 23:59 on the 14th in Tokyo: offered
        (datetime(2027, 1, 14, 14, 59, tzinfo=UTC), TOKYO, True),
    ],
)
def test_blackout_dates_in_the_airports_time_zone(pickup_utc: datetime, tz: ZoneInfo, offered: bool) -> None:
    card = cards.parse(EXAMPLE)
    the_trip = Trip("LHR", tz, pickup_utc, 20, pickup_utc - timedelta(days=10))
    assert bool(quote(card, the_trip)) is offered
    assert (refusal(card, the_trip) is None) is offered


@pytest.mark.parametrize(
    ("lead", "offered"),
    [
        (timedelta(hours=2), True),
        (timedelta(hours=1, minutes=59), False),
        (timedelta(days=30), True),
        (timedelta(0), False),
    ],
)
def test_min_lead_hours(lead: timedelta, offered: bool) -> None:
    card = cards.parse(EXAMPLE)  # min_lead_hours 2
    pickup = datetime(2027, 3, 1, 12, tzinfo=UTC)
    assert bool(quote(card, Trip("LHR", LONDON, pickup, 20, pickup - lead))) is offered


def test_daily_capacity_leaves_a_full_vehicle_out() -> None:
    card = cards.parse(EXAMPLE)  # sedan 5 a day, van 2 a day
    t = trip("2027-03-01 12:00", 30)
    assert [q.vehicle.id for q in quote(card, t)] == ["sedan", "van"]
    assert [q.vehicle.id for q in quote(card, t, {"sedan": 4, "van": 2})] == ["sedan"]
    assert [q.vehicle.id for q in quote(card, t, {"sedan": 5, "van": 1})] == ["van"]
    assert quote(card, t, {"sedan": 9, "van": 9}) == []
    doc = copy.deepcopy(EXAMPLE)
    doc["vehicles"][0]["daily_capacity"] = 0
    del doc["vehicles"][1]["daily_capacity"]  # no limit
    assert [q.vehicle.id for q in quote(cards.parse(doc), t, {"van": 10_000})] == ["van"]


def test_quote_carries_currency_extras_and_prices() -> None:
    card = cards.parse(EXAMPLE)
    quotes = quote(card, trip("2027-03-01 12:00", 40))
    assert [(q.vehicle.id, q.net_price, q.currency) for q in quotes] == [
        ("sedan", Decimal("58.00"), "EUR"),
        ("van", Decimal("92.00"), "EUR"),
    ]
    assert [(e.id, e.price, e.pricing_type) for e in quotes[0].extras] == [
        ("child-seat", Decimal("8.00"), "PER_ITEM"),
        ("meet-greet", Decimal("12.00"), "PER_BOOKING"),
    ]


# docs/rules/hosted-partners.md#amendments: the booked trip (14:00 on 1 March 2027, 30 km) moved; the
# card's sedan takes 5 a day, 2027-01-15 is blacked out, 2 h of lead time, night 22:00-06:00 +20 %.
NOW = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


def moved(local: str) -> Trip:
    return trip(local, 30, searched=NOW)


@pytest.mark.parametrize(
    ("to", "taken", "expected"),
    [
        ("2027-03-01 16:00", 0, None),  # the same day, the same price
        ("2027-03-02 09:00", 4, None),  # another day with a seat left
        ("2027-03-01 18:00", 5, None),  # its own day full: the booking keeps the seat it holds
        ("2027-03-02 09:00", 5, "the vehicle sedan is fully booked on 2027-03-02 (5 of 5)"),
        ("2027-01-15 14:00", 0, "2027-01-15 is a blackout date"),
        ("2027-01-10 13:30", 0, "pickup sooner than 2 h ahead"),
        (
            "2027-03-01 23:00",
            0,
            "that pickup time is inside the night-surcharge window: the rate card would price it 55.20 EUR, not 46.00",
        ),
    ],
)
def test_an_amendment_is_judged_by_the_cards_own_checks(to: str, taken: int, expected: str | None) -> None:
    card = card_with(night=NIGHT)
    booked = moved("2027-03-01 14:00")
    assert amendment_refusal(card, "sedan", booked, moved(to), taken) == expected


def test_an_amendment_of_a_vehicle_taken_off_the_card_is_refused() -> None:
    why = amendment_refusal(card_with(), "limousine", moved("2027-03-01 14:00"), moved("2027-03-01 15:00"), 0)
    assert why == "the vehicle limousine is no longer on the rate card"
