"""The rating rules, pure (docs/rules/ratings.md): the signed link (another key, a changed character, the
tracking token: nothing), the window from the drop-off's instant, and what a body or form may hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from transfers.bookings.rating_link import rating_token, rating_url, reservation_of
from transfers.bookings.ride_field import NO_RIDE, Milestone, Ride, RideEventType
from transfers.errors import DomainError, ErrorCode
from transfers.ratings import rules

KEY = b"k" * 32
DROPPED = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)


def ride_until(*types: RideEventType) -> Ride:
    ride = NO_RIDE
    for n, kind in enumerate(types):
        at = DROPPED - timedelta(minutes=10 * (len(types) - 1 - n))
        ride = ride.with_event(Milestone(kind, at, None, None, at))
    return ride


DROPPED_OFF = ride_until(
    RideEventType.DRIVER_DEPARTED_TO_PICKUP,
    RideEventType.DRIVER_ARRIVED_AT_PICKUP,
    RideEventType.DRIVER_DEPARTED_TO_DROPOFF,
    RideEventType.DRIVER_ARRIVED_AT_DROPOFF,
)
ON_BOARD = ride_until(RideEventType.DRIVER_DEPARTED_TO_PICKUP, RideEventType.DRIVER_DEPARTED_TO_DROPOFF)
NO_SHOW = ride_until(RideEventType.DRIVER_ARRIVED_AT_PICKUP, RideEventType.CUSTOMER_NO_SHOW)


def test_the_token_opens_its_booking_only_under_its_key() -> None:
    token = rating_token("TB-ABCDEFGH23", KEY)
    assert reservation_of(token, KEY) == "TB-ABCDEFGH23"
    assert reservation_of(token, b"x" * 32) is None
    flipped = token[:5] + ("A" if token[5] != "A" else "B") + token[6:]
    assert reservation_of(flipped, KEY) is None
    assert reservation_of(token[:22] + "TB-ABCDEFGH24", KEY) is None  # another booking's number, same signature
    for junk in ("", "short", "k3bq0m5YcF2Xz8Wn1Lp4Tg", "é" * 40, "a" * 200, token + "/"):
        assert reservation_of(junk, KEY) is None


def test_the_url_appears_at_the_drop_off() -> None:
    assert rating_url("TB-ABCDEFGH23", NO_RIDE) is None
    assert rating_url("TB-ABCDEFGH23", ON_BOARD) is None
    assert rating_url("TB-ABCDEFGH23", NO_SHOW) is None
    url = rating_url("TB-ABCDEFGH23", DROPPED_OFF)
    assert url is not None and "/r/" in url and url.endswith("TB-ABCDEFGH23")


@pytest.mark.parametrize(
    ("ride", "now", "open_"),
    [
        (DROPPED_OFF, DROPPED, True),
        (DROPPED_OFF, DROPPED + timedelta(days=7) - timedelta(microseconds=1), True),
        (DROPPED_OFF, DROPPED + timedelta(days=7), False),
        (ON_BOARD, DROPPED, False),
        (NO_SHOW, DROPPED, False),
        (NO_RIDE, DROPPED, False),
    ],
)
def test_the_window(ride: Ride, now: datetime, open_: bool) -> None:
    assert rules.window_open(ride, now) is open_
    if open_:
        rules.check_open(ride, now)
    else:
        with pytest.raises(DomainError) as refused:
            rules.check_open(ride, now)
        assert refused.value.code is ErrorCode.RATING_NOT_ALLOWED


@pytest.mark.parametrize(
    "body",
    [
        {"stars": 0},
        {"stars": 6},
        {"stars": "5"},
        {"stars": True},
        {"stars": False},
        {"stars": None},
        {"stars": 5.0},
        {},
        {"stars": 5, "comment": "x" * 1001},
        {"stars": 5, "comment": ["x"]},
        {"stars": 5, "comment": "a\u2066b"},
        {"stars": 5, "comment": "a\x1bb"},
        {"stars": 5, "other": 1},
    ],
)
def test_bad_bodies(body: dict[str, Any]) -> None:
    with pytest.raises(DomainError) as invalid:
        rules.parse_body(body)
    assert invalid.value.code is ErrorCode.INVALID_RATING


def test_good_bodies_and_forms() -> None:
    assert rules.parse_body({"stars": 1}) == (1, None)
    assert rules.parse_body({"stars": 5, "comment": "  \n "}) == (5, None)
    assert rules.parse_body({"stars": 3, "comment": " ok\r\n\tfine "}) == (3, "ok\r\n\tfine")
    assert rules.parse_body({"stars": 2, "comment": " " + "ü" * 1000 + " "}) == (2, "ü" * 1000)
    assert rules.parse_form("4", "") == (4, None)
    assert rules.parse_form(" 5 ", "great") == (5, "great")
    for stars in (None, "", "0", "6", "4.0", "٣"):
        with pytest.raises(DomainError):
            rules.parse_form(stars, "")
