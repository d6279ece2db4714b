"""The ride pages' pure rules (docs/rules/ride.md#tracking-page, #driver-page): tokens, windows, the words
and the distance the traveller reads, the driver's next step."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tests.helpers import booking_row
from transfers.bookings import tracking_link
from transfers.bookings.models import Booking
from transfers.tracking import driver
from transfers.tracking import rules as tracking
from transfers.tracking.facts import RideNow, Spot, bearing, distance_words, first_name, traveller_facts

PICKUP = datetime(2030, 5, 3, 9, 30, tzinfo=UTC)


def test_tokens_are_128_bit_and_unique() -> None:
    tokens = {tracking_link.new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(len(t) == 22 and tracking.looks_like_token(t) for t in tokens)


@pytest.mark.parametrize(
    "value", ["", "a" * 15, "a" * 33, "ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ", "a/b" * 8, "a b" * 8, "../../etc/passwd/x"]
)
def test_what_cannot_be_a_token(value: str) -> None:
    assert not tracking.looks_like_token(value)


def test_the_windows() -> None:
    assert not tracking.traveller_page_gone(PICKUP, PICKUP + timedelta(days=7) - timedelta(microseconds=1))
    assert tracking.traveller_page_gone(PICKUP, PICKUP + timedelta(days=7))
    assert not tracking.phone_visible(PICKUP, PICKUP - timedelta(hours=2, seconds=1), ride_over=False)
    assert tracking.phone_visible(PICKUP, PICKUP - timedelta(hours=2), ride_over=False)
    assert not tracking.phone_visible(PICKUP, PICKUP, ride_over=True)
    assert not tracking.driver_link_open(PICKUP, PICKUP - timedelta(hours=24, seconds=1))
    assert tracking.driver_link_open(PICKUP, PICKUP - timedelta(hours=24))
    assert tracking.driver_link_open(PICKUP, PICKUP + timedelta(hours=24) - timedelta(seconds=1))
    assert not tracking.driver_link_open(PICKUP, PICKUP + timedelta(hours=24))


def test_urls() -> None:
    assert tracking_link.tracking_url("abc", "https://t.example/") == "https://t.example/t/abc"
    assert tracking_link.tracking_url(None, "https://t.example") is None
    assert tracking.driver_url("https://t.example/", "xyz") == "https://t.example/d/xyz"


def test_words() -> None:
    assert first_name("Morag  Campbell") == "Morag" and first_name("   ") == ""
    assert distance_words(0.05) == "at the pickup point"
    assert distance_words(3.44) == "about 3.4 km from the pickup point"
    assert distance_words(23.6) == "about 24 km from the pickup point"
    assert round(bearing((55.0, -4.0), (56.0, -4.0))) == 0  # due north
    assert round(bearing((55.0, -4.0), (55.0, -3.0))) in (89, 90)  # east


def booking(**changes: object) -> Booking:
    row = booking_row(pickup_at=PICKUP, airport_iata="GLA", **changes)
    row["pickup_location"] = {"type": "AIRPORT", "iata_code": "GLA", "name": "Glasgow Airport"}
    return Booking.from_row(row)


def test_the_position_while_the_ride_is_on() -> None:
    now = PICKUP - timedelta(minutes=20)
    # ~3.3 km east-north-east of Glasgow Airport (55.8719, -4.4331)
    ride = RideNow("EN_ROUTE_TO_PICKUP", Spot(55.8800, -4.3830, now - timedelta(minutes=3, seconds=10)))
    facts = traveller_facts(booking(), ride, now)
    assert facts["position"]["minutes_ago"] == 3
    assert facts["position"]["text"].startswith("Updated 3 min ago, about 3.")
    assert facts["position"]["text"].endswith(" km from the pickup point")
    assert facts["ride_on"] and facts["stage_text"] == "Your driver is on the way to the pickup point"
    over = traveller_facts(booking(), replace(ride, stage="DROPPED_OFF"), now)
    assert over["position"] is None and over["driver"]["phone"] is None  # the ride ended: no phone


def test_never_the_forbidden_fields() -> None:
    facts = traveller_facts(booking(), RideNow(), PICKUP - timedelta(hours=1))
    text = repr(facts)
    b = booking()
    for secret in (b.passenger_email, b.passenger_phone, str(b.total), b.partner_reference or "P-1"):
        assert secret not in text


def test_the_driver_s_next_step() -> None:
    assert [driver.next_step(s).event for s in ("NOT_STARTED", "EN_ROUTE_TO_PICKUP", "AT_PICKUP", "ON_BOARD")] == [  # type: ignore[union-attr]
        driver.DEPARTED,
        driver.ARRIVED,
        driver.ON_BOARD,
        driver.DROPPED,
    ]
    assert driver.next_step("DROPPED_OFF") is None and driver.next_step("CUSTOMER_NO_SHOW") is None
    assert driver.offers_no_show("AT_PICKUP") and not driver.offers_no_show("ON_BOARD")
    assert driver.counted(1, "small bag") == "1 small bag" and driver.counted(2, "child") == "2 children"


def test_the_flight_in_words() -> None:
    state = {
        "status": "EN_ROUTE",
        "scheduled_arrival": "2030-05-03T08:50:00+00:00",
        "estimated_arrival": "2030-05-03T09:25:00+00:00",
        "delay_minutes": 35,
        "terminal": "1",
        "checked_at": "2030-05-03T08:00:00+00:00",
    }
    facts = traveller_facts(booking(flight_state=state), RideNow(), PICKUP - timedelta(hours=1))
    assert facts["flight"]["number"] == "BA117" and facts["flight"]["status"] == "EN_ROUTE"
    assert facts["flight"]["text"] == "In the air, delayed 35 min; lands 10:25, terminal 1"  # GLA in May: BST
    plain = traveller_facts(booking(), RideNow(), PICKUP - timedelta(hours=1))
    assert plain["flight"]["number"] == "BA117" and plain["flight"]["text"] == "No news yet"
