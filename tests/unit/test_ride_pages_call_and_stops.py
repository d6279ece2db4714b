"""The ride pages' newer rules, pure (docs/rules/ride.md#tracking-page, #driver-page): the traveller's one call
button (the driver while the phone is shown, else the agency), the distance to the drop-off on board, the
no-show's next step, no refresh once nothing will change; the driver's stops with their maps links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.helpers import booking_row
from transfers.bookings.models import Booking
from transfers.bookings.trip import Place
from transfers.tracking import driver
from transfers.tracking.facts import RideNow, Spot, traveller_facts

PICKUP = datetime(2030, 5, 3, 9, 30, tzinfo=UTC)
GEORGE_SQUARE = {"type": "POINT", "name": "George Square, Glasgow", "lat": 55.8611, "lng": -4.2502}


def booking(**changes: object) -> Booking:
    row = booking_row(pickup_at=PICKUP, airport_iata="GLA", **changes)
    row["pickup_location"] = {"type": "AIRPORT", "iata_code": "GLA", "name": "Glasgow Airport"}
    row["dropoff_location"] = GEORGE_SQUARE
    return Booking.from_row(row)


def test_the_call_button_is_the_driver_in_the_phone_window_else_the_agency() -> None:
    early = traveller_facts(booking(), RideNow(), PICKUP - timedelta(hours=3), support_phone="+442079460555")
    assert early["call"] == {
        "who": "agency",
        "phone": "+442079460555",
        "text": "Call your travel agency: +442079460555",
    }
    close = traveller_facts(booking(), RideNow(), PICKUP - timedelta(hours=1), support_phone="+442079460555")
    assert close["call"] is not None and close["call"]["who"] == "driver"
    assert close["call"]["phone"] == close["driver"]["phone"]
    assert traveller_facts(booking(), RideNow(), PICKUP - timedelta(hours=3))["call"] is None


def test_on_board_the_distance_is_to_the_drop_off() -> None:
    now = PICKUP + timedelta(minutes=20)
    spot = Spot(55.8700, -4.2900, now - timedelta(seconds=30))  # ~2.6 km west of George Square
    facts = traveller_facts(booking(), RideNow("ON_BOARD", spot), now)
    position = facts["position"]
    assert position["centre"] == "dropoff" and 2.0 < position["km_to_dropoff"] < 3.5
    assert position["km_from_pickup"] > 8
    assert position["text"].endswith("km from the drop-off") and 225 < position["bearing"] < 315  # west of it
    before = traveller_facts(booking(), RideNow("EN_ROUTE_TO_PICKUP", spot), now)["position"]
    assert before["centre"] == "pickup" and before["km_to_dropoff"] is None
    assert before["text"].endswith("km from the pickup point")


def test_a_no_show_has_a_next_step_and_no_refresh() -> None:
    gone = booking(status="COMPLETED")
    facts = traveller_facts(gone, RideNow("CUSTOMER_NO_SHOW"), PICKUP + timedelta(hours=2), support_phone="+44 1")
    assert facts["next_step"]["headline"] == "Your driver could not find you and has left"
    assert gone.reservation_no in facts["next_step"]["what_now"]
    assert facts["next_step"]["what_now"].startswith("Call your travel agency")
    assert facts["refresh_seconds"] is None
    without = traveller_facts(gone, RideNow("CUSTOMER_NO_SHOW"), PICKUP + timedelta(hours=2))
    assert without["next_step"]["what_now"].startswith("Contact the travel agency you booked with")


@pytest.mark.parametrize(
    ("status", "stage", "refresh"),
    [
        ("PENDING", "NOT_STARTED", 30),
        ("APPROVED", "ON_BOARD", 30),
        ("COMPLETED", "DROPPED_OFF", None),
        ("CANCELLED", "NOT_STARTED", None),
        ("REFUNDED", "NOT_STARTED", None),
    ],
)
def test_only_a_page_that_can_change_refreshes(status: str, stage: str, refresh: int | None) -> None:
    facts = traveller_facts(booking(status=status), RideNow(stage), PICKUP - timedelta(hours=1))
    assert facts["refresh_seconds"] == refresh


def test_the_driver_s_stops_open_the_maps() -> None:
    airport = driver.stop(Place("AIRPORT", "Glasgow Airport", "GLA"), (55.87, -4.43), "Main")
    assert airport.text == "Glasgow Airport, terminal Main"
    assert parse_qs(urlsplit(airport.maps).query) == {"api": ["1"], "query": ["Glasgow Airport, terminal Main"]}
    point = driver.stop(Place("POINT", "George Square", None, 55.8611, -4.2502), (55.8611, -4.2502))
    assert point.text == "George Square" and parse_qs(urlsplit(point.maps).query)["query"] == ["55.86110,-4.25020"]
    unnamed = driver.stop(Place("POINT", None, None, 55.8611, -4.2502), (55.8611, -4.2502))
    assert unnamed.text == "The booked spot (55.86110, -4.25020)"
    assert driver.maps_url("A & B?").startswith("https://www.google.com/maps/search/?api=1&query=A+%26+B%3F")
