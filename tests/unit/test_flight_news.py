"""A booking's flight news in words (docs/rules/flights.md#in-words), table-driven on bookings built from rows:
what happened to the flight, whether the pickup moved with it, a disruption while the booking waits for its
ride, and a booked pickup before the scheduled arrival. GLA in May is on BST (UTC+1)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.helpers import booking_row
from transfers.bookings.models import Booking
from transfers.flights.news import duration, flight_news
from transfers.tracking.facts import RideNow, traveller_facts

PICKUP = datetime(2030, 5, 3, 9, 30, tzinfo=UTC)  # 10:30 at Glasgow


def booking(**changes: Any) -> Booking:
    changes.setdefault("original_pickup_at", PICKUP)
    row = booking_row(pickup_at=changes.pop("pickup_at", PICKUP), airport_iata="GLA", **changes)
    row["pickup_location"] = {"type": "AIRPORT", "iata_code": "GLA", "name": "Glasgow Airport"}
    return Booking.from_row(row)


def state(status: str, delay: int | None = None, *, landed: bool = False, **more: Any) -> dict[str, Any]:
    arrival = None if delay is None else (PICKUP + timedelta(minutes=delay)).isoformat()
    return {
        "status": status,
        "scheduled_arrival": PICKUP.isoformat(),
        "estimated_arrival": arrival,
        "actual_arrival": arrival if landed else None,
        "delay_minutes": delay,
        "terminal": None,
        "checked_at": (PICKUP - timedelta(hours=3)).isoformat(),
        **more,
    }


@pytest.mark.parametrize(
    ("flight", "line"),
    [
        (state("SCHEDULED", 45), "Delayed 45 min; lands 11:15"),
        (state("SCHEDULED", 0), "On time; lands 10:30"),
        (state("SCHEDULED", -20), "Early by 20 min; lands 10:10"),
        (state("EN_ROUTE", 130), "In the air, delayed 2 h 10 min; lands 12:40"),
        (state("LANDED", 45, landed=True), "Landed 11:15 (45 min late)"),
        (state("LANDED", 0, landed=True), "Landed 10:30"),
        (state("SCHEDULED", 900), "Delayed 15 h; lands 01:30 on Sat 4 May"),
        (state("CANCELLED"), "Cancelled"),
        (state("DIVERTED"), "Diverted to another airport"),
        (state("UNKNOWN"), "No news of this flight from the airline yet"),
        (None, "No news yet"),
    ],
)
def test_what_happened_to_the_flight(flight: dict[str, Any] | None, line: str) -> None:
    news = flight_news(booking(flight_state=flight).trip)
    assert news is not None and news.line == line
    assert "On schedule" not in news.text


def test_an_untracked_number_says_nothing_and_a_point_pickup_has_no_flight() -> None:
    news = flight_news(booking(flight_number="CHARTER 7").trip)
    assert news is not None and (news.status, news.line) == ("UNTRACKED", "")
    row = booking_row(pickup_at=PICKUP, original_pickup_at=PICKUP)
    row["pickup_location"] = {"type": "POINT", "lat": 55.86, "lng": -4.25, "name": "George Square"}
    assert flight_news(Booking.from_row(row).trip) is None


def test_the_pickup_moved_with_the_flight() -> None:
    late = flight_news(booking(pickup_at=PICKUP + timedelta(minutes=45), flight_state=state("SCHEDULED", 45)).trip)
    assert late is not None and late.moved == "Moved from 10:30 because the flight is late"
    early = flight_news(booking(pickup_at=PICKUP - timedelta(minutes=20), flight_state=state("SCHEDULED", -20)).trip)
    assert early is not None and early.moved == "Moved from 10:30 because the flight is early"
    still = flight_news(booking(flight_state=state("SCHEDULED", 5)).trip)
    assert still is not None and (still.moved, still.moved_from) == ("", None)


@pytest.mark.parametrize(
    ("flight", "what"),
    [
        (state("CANCELLED"), "was cancelled"),
        (state("DIVERTED"), "was diverted to another airport"),
        (state("SCHEDULED", 250), "is 4 h 10 min late"),
        (state("SCHEDULED", -200), "lands 3 h 20 min early"),
    ],
)
def test_a_disruption_while_the_booking_waits_for_its_ride(flight: dict[str, Any], what: str) -> None:
    since = PICKUP - timedelta(hours=3)
    disrupted = booking(flight_state=flight, flight_disrupted_at=since)
    news = flight_news(disrupted.trip, "APPROVED")
    assert news is not None and news.disruption is not None
    assert (news.disruption.what, news.disruption.since) == (what, since)
    for over in ("COMPLETED", "CANCELLED", "REFUNDED"):
        gone = flight_news(disrupted.trip, over)
        assert gone is not None and gone.disruption is None


def test_the_traveller_reads_the_disruption_first_and_the_agency_phone() -> None:
    disrupted = booking(flight_state=state("CANCELLED"), flight_disrupted_at=PICKUP - timedelta(hours=3))
    facts = traveller_facts(disrupted, RideNow(), PICKUP - timedelta(hours=2), support_phone="+441415550100")
    lead = facts["disruption"]
    assert lead["headline"] == "Your flight BA117 was cancelled"
    assert lead["pickup_text"] == "Your pickup has not moved: 10:30 on Fri 3 May (local time)."
    assert lead["support_phone"] == "+441415550100" and lead["free_text"] == "Cancelling is now free of charge."
    assert traveller_facts(booking(), RideNow(), PICKUP)["disruption"] is None
    # it followed the flight (45 min), then the flight went beyond the limit: it stays where it got to
    followed = booking(
        pickup_at=PICKUP + timedelta(minutes=45),
        flight_state=state("SCHEDULED", 250),
        flight_disrupted_at=PICKUP - timedelta(hours=1),
    )
    later = traveller_facts(followed, RideNow(), PICKUP - timedelta(minutes=30))["disruption"]
    assert later["headline"] == "Your flight BA117 is 4 h 10 min late"
    assert later["pickup_text"] == (
        "Your pickup stays at 11:15 on Fri 3 May (local time): it will not follow the flight any further."
    )


def test_a_pickup_booked_before_the_scheduled_arrival_is_flagged() -> None:
    later = state("SCHEDULED", 0, scheduled_arrival=(PICKUP + timedelta(minutes=50)).isoformat())
    news = flight_news(booking(flight_state=later).trip)
    assert news is not None
    assert news.early_pickup.startswith("The booked pickup (10:30) is before the flight's scheduled arrival (11:20)")
    fine = flight_news(booking(flight_state=state("SCHEDULED", 0)).trip)
    assert fine is not None and fine.early_pickup == ""


def test_durations() -> None:
    assert [duration(m) for m in (5, 60, 61, -130)] == ["5 min", "1 h", "1 h 1 min", "2 h 10 min"]
