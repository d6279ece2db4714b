"""The agency's rating over real HTTP (docs/rules/ratings.md#api): 201 with the exact shape, one per
booking (409 RATING_EXISTS), the window from the drop-off on the injected clock (422
RATING_NOT_ALLOWED), every bad input answered INVALID_RATING with nothing written, and
``ride.rating_url`` in the client's resource only."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.incidents.helpers import at
from tests.ratings.helpers import dropped_off_ride, rate, rating_rows
from transfers.bookings.rating_link import rating_token
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


async def test_a_rating_is_recorded_once_and_the_link_appears_at_the_drop_off(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    answer = await rate(http, key, reservation_no, {"stars": 4, "comment": "  Kind driver, ünïcødé ✈\nthanks  "})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert set(body) == {"reservation_no", "stars", "comment", "created_at"}
    assert (body["reservation_no"], body["stars"], body["comment"]) == (
        reservation_no,
        4,
        "Kind driver, ünïcødé ✈\nthanks",
    )
    stored = await rating_rows(db, row["id"])
    assert len(stored) == 1
    assert (stored[0]["partner_id"], stored[0]["stars"], stored[0]["source"]) == (row["partner_id"], 4, "client")
    again = await rate(http, key, reservation_no, {"stars": 5})
    assert again.status_code == 409 and again.json()["code"] == "RATING_EXISTS"
    assert await rating_rows(db, row["id"]) == stored

    resource = (
        await http.get("/api/v1/booking-api/booking", params={"reservation_no": reservation_no}, headers=bearer(key))
    ).json()
    assert resource["ride"]["rating_url"].endswith("/r/" + rating_token(reservation_no))


async def test_no_rating_and_no_link_before_the_drop_off(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner, drop_off=False)
    answer = await rate(http, key, reservation_no, {"stars": 5})
    assert answer.status_code == 422 and answer.json()["code"] == "RATING_NOT_ALLOWED"
    assert await rating_rows(db, row["id"]) == []
    resource = (
        await http.get("/api/v1/booking-api/booking", params={"reservation_no": reservation_no}, headers=bearer(key))
    ).json()
    assert resource["ride"]["rating_url"] is None


@pytest.mark.parametrize(
    ("shift", "allowed"),
    [
        (timedelta(), True),
        (timedelta(days=7, seconds=-1), True),
        (timedelta(days=7), False),
        (timedelta(days=30), False),
    ],
)
async def test_the_window_is_seven_days_from_the_drop_off(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    shift: timedelta,
    allowed: bool,
) -> None:
    key, reservation_no, row, dropped, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    at(clock, dropped, shift)
    answer = await rate(http, key, reservation_no, {"stars": 3})
    if allowed:
        assert answer.status_code == 201, answer.text
    else:
        assert answer.status_code == 422 and answer.json()["code"] == "RATING_NOT_ALLOWED", answer.text
        assert await rating_rows(db, row["id"]) == []


BAD: list[Any] = [
    {"stars": 0},
    {"stars": 6},
    {"stars": -1},
    {"stars": "5"},
    {"stars": True},
    {"stars": None},
    {"stars": 4.0},
    {"stars": 4.5},
    {"stars": [5]},
    {},
    {"stars": 5, "comment": "x" * 1001},
    {"stars": 5, "comment": "x" * 10_000},
    {"stars": 5, "comment": 12},
    {"stars": 5, "comment": "evil\u202eflip"},
    {"stars": 5, "comment": "nul\x00here"},
    {"stars": 5, "extra": 1},
]


async def test_bad_input_is_refused_and_nothing_is_written(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    for body in BAD:
        answer = await rate(http, key, reservation_no, body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["code"] == "INVALID_RATING", (body, answer.text)
    huge = await rate(http, key, reservation_no, {"stars": 5, "comment": "x" * 100_000})
    assert huge.status_code == 413 and huge.json()["code"] == "PAYLOAD_TOO_LARGE"  # the body limit, before parsing
    not_object = await rate(http, key, reservation_no, [5])
    assert not_object.status_code == 400  # not a JSON object: the API's usual answer
    assert await rating_rows(db, row["id"]) == []
    # exactly 1000 characters is allowed
    answer = await rate(http, key, reservation_no, {"stars": 1, "comment": "é" * 1000})
    assert answer.status_code == 201, answer.text


async def test_the_reservation_is_required_and_scoped_to_the_client(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    missing = await rate(http, key, None, {"stars": 5})
    assert missing.status_code == 422 and missing.json()["code"] == 1200, missing.text
    _, other_key = await make_client()
    stranger = await rate(http, other_key, reservation_no, {"stars": 5})
    assert stranger.status_code == 422 and stranger.json()["code"] == 1201, stranger.text
    assert await rating_rows(db, row["id"]) == []


async def test_two_ratings_at_once_record_one(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row, _, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    answers = await asyncio.gather(*(rate(http, key, reservation_no, {"stars": 5}) for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [201, 409, 409, 409], [a.text for a in answers]
    assert len(await rating_rows(db, row["id"])) == 1
