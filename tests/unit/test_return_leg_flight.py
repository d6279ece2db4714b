"""A return trip's way back booked without ``return_travel_details`` has no flight
(docs/rules/return-trips.md#create): the resource and the partner's create say null, and the hosted
partner's e-mail says "none given" rather than leaving the line empty."""

from __future__ import annotations

from tests.helpers import booking_row
from transfers.bookings.models import Booking
from transfers.bookings.partner_payloads import create_payload
from transfers.bookings.resource import booking_resource
from transfers.hosted.mail import compose


def _way_back(flight_number: str = "") -> Booking:
    return Booking.from_row(
        booking_row(
            flight_number=flight_number, trip_id="TR-ABCDEFGHJK", trip_leg=2, trip_other_reservation_no="OTHER12345"
        )
    )


def test_the_way_back_without_a_flight_shows_none() -> None:
    back = _way_back()
    assert booking_resource(back, back.created_at)["flight_number"] is None
    assert create_payload(back)["flight_info"]["flight_number"] is None
    body = compose("booking.new", back, ["ops@example.com"], partner_name="Cabs", portal_url="https://x.example").body
    assert "Flight:     none given\n" in body


def test_a_flight_given_is_shown() -> None:
    back = _way_back(flight_number="BA118")
    assert booking_resource(back, back.created_at)["flight_number"] == "BA118"
    body = compose("booking.new", back, ["ops@example.com"], partner_name="Cabs", portal_url="https://x.example").body
    assert "Flight:     BA118\n" in body
