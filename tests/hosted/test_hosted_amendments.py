"""docs/rules/hosted-partners.md#amendments: a client's amendment of a hosted partner's booking is judged by
its rate card before it is applied, with the search's own checks: a new pickup on a blackout date, on a
day the vehicle is already full, inside the card's lead time, or at a time the card prices differently
(the night window) is refused (422 ``AMENDMENT_NOT_ALLOWED``, the reason in words) and the booking, its
price and the day's seats stay as they were; a move the card would sell is applied in-process."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, future_local
from tests.hosted.conftest import HostedFactory, example_card
from tests.hosted.test_hosted_search_and_booking import BOOKING, company, search_at
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import hosted_capacity
from transfers.hosted import service as hosted_service

POINT = {"type": "POINT", "lat": 55.9533, "lng": -3.1883, "name": "Princes Street, Edinburgh"}
COMPANY = "Hosted Edinburgh Amend"
LONDON = ZoneInfo("Europe/London")
BLACKOUT = future_local(days=11)[:10]


def card(**changes: Any) -> dict[str, Any]:
    made = example_card(**{"blackout_dates": [BLACKOUT], **changes})
    made["vehicles"][0]["daily_capacity"] = 2  # the sedan: two a day
    return made


@pytest.fixture
async def partner_id(make_hosted: HostedFactory) -> int:
    return await make_hosted(airports=("EDI",), name=COMPANY, card=card())


@pytest.fixture
async def key(make_client: ClientFactory, partner_id: int) -> str:
    return (await make_client(balance="5000.00"))[1]


async def book(http: httpx.AsyncClient, key: str, when: str) -> dict[str, Any]:
    found = await search_at(http, key, "EDI", point=POINT, pickup_datetime=when)
    sedan = next(v for v in company(found, COMPANY) if v["type"] == "SEDAN")
    created = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    return booking


async def amend(http: httpx.AsyncClient, key: str, booking: dict[str, Any], when: str) -> httpx.Response:
    return await http.patch(
        BOOKING,
        params={"reservation_no": booking["reservation_no"]},
        json={"pickup_datetime": when},
        headers=bearer(key),
    )


async def read(http: httpx.AsyncClient, key: str, booking: dict[str, Any]) -> dict[str, Any]:
    answer = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    seen: dict[str, Any] = answer.json()
    return seen


async def seats(db: Database, partner_id: int) -> dict[str, int]:
    """The partner's sedan's seats taken per local date."""
    async with db.read() as conn:
        rows = await conn.execute(
            select(hosted_capacity.c.local_date, hosted_capacity.c.booked).where(
                hosted_capacity.c.partner_id == partner_id,
                hosted_capacity.c.vehicle_id == "sedan",
                hosted_capacity.c.booked > 0,
            )
        )
        return {str(r.local_date): int(r.booked) for r in rows}


async def refused(http: httpx.AsyncClient, key: str, booking: dict[str, Any], when: str, words: str) -> None:
    """The amendment is 422 AMENDMENT_NOT_ALLOWED naming the card's reason, and nothing changed."""
    before = await read(http, key, booking)
    answer = await amend(http, key, booking, when)
    assert (answer.status_code, answer.json()["code"]) == (422, "AMENDMENT_NOT_ALLOWED"), answer.text
    message = answer.json()["message"]
    assert message.startswith("This partner's rate card does not sell the new pickup:") and words in message, message
    after = await read(http, key, booking)
    assert after == before and after["amendment"] is None
    assert after["price"] == booking["price"]


async def test_a_move_onto_a_blackout_date_is_refused(http: httpx.AsyncClient, key: str) -> None:
    booking = await book(http, key, future_local(days=10))
    await refused(http, key, booking, future_local(days=11), f"{BLACKOUT} is a blackout date")


async def test_a_move_onto_a_full_day_is_refused_but_a_move_within_it_is_not(
    http: httpx.AsyncClient, key: str, db: Database, service: LiveServer, partner_id: int
) -> None:
    full = [await book(http, key, future_local(days=12, hour=h)) for h in (9, 10)]
    moving = await book(http, key, future_local(days=10))
    day = future_local(days=12)[:10]
    assert (await seats(db, partner_id))[day] == 2
    await refused(http, key, moving, future_local(days=12, hour=15), f"fully booked on {day} (2 of 2)")
    assert (await seats(db, partner_id))[day] == 2  # not 3 of 2
    # A booking of the full day keeps its seat when it moves within that day.
    within = await amend(http, key, full[0], future_local(days=12, hour=11))
    assert within.status_code == 202, within.text


async def test_a_move_inside_the_cards_lead_time_is_refused(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory
) -> None:
    _, key = await make_client(balance="500.00")
    await make_hosted(airports=("EDI",), name=COMPANY, card=card(min_lead_hours=72))
    booking = await book(http, key, future_local(days=10))
    soon = (datetime.now(UTC) + timedelta(hours=60)).astimezone(LONDON).strftime("%Y-%m-%d %H:%M")
    await refused(http, key, booking, soon, "pickup sooner than 72 h ahead")


async def test_a_move_into_the_night_window_is_refused(http: httpx.AsyncClient, key: str) -> None:
    booking = await book(http, key, future_local(days=10, hour=14))
    await refused(http, key, booking, future_local(days=10, hour=23), "inside the night-surcharge window")
    # the other way too: a night booking moved into the day would be sold cheaper than it was paid for
    night = await book(http, key, future_local(days=10, hour=23))
    await refused(http, key, night, future_local(days=10, hour=12), "outside the night-surcharge window")


async def test_a_move_the_card_sells_is_applied_and_the_seat_follows(
    http: httpx.AsyncClient, key: str, db: Database, service: LiveServer, partner_id: int
) -> None:
    booking = await book(http, key, future_local(days=10, hour=14))
    old_day, new_day = future_local(days=10)[:10], future_local(days=13)[:10]
    assert (await seats(db, partner_id)).get(old_day) == 1
    answer = await amend(http, key, booking, future_local(days=13, hour=16))
    assert answer.status_code == 202, answer.text
    for _ in range(10):
        await svc_of(service).dispatcher.run_once(limit=200)  # type: ignore[union-attr]
        current = await read(http, key, booking)
        if current["amendment"]["status"] != "PENDING":
            break
    assert current["amendment"]["status"] == "APPLIED", current["amendment"]
    assert current["pickup_datetime"].startswith(future_local(days=13, hour=16).replace(" ", "T"))
    assert current["price"] == booking["price"]
    taken = await seats(db, partner_id)
    assert taken.get(old_day) is None and taken[new_day] == 1


async def test_the_card_is_checked_again_as_the_amendment_is_applied(
    http: httpx.AsyncClient, key: str, db: Database, service: LiveServer, partner_id: int, clock: ShiftedClock
) -> None:
    """The partner blacks out the new day between the request and its delivery: the amendment is rejected
    with the card's reason, and the booking stays on its day."""
    booking = await book(http, key, future_local(days=10))
    assert (await amend(http, key, booking, future_local(days=14))).status_code == 202
    later = card(blackout_dates=[BLACKOUT, future_local(days=14)[:10]])
    await hosted_service.set_rate_card(db, clock, partner_id, later, actor="tests")
    for _ in range(10):
        await svc_of(service).dispatcher.run_once(limit=200)  # type: ignore[union-attr]
        current = await read(http, key, booking)
        if current["amendment"]["status"] != "PENDING":
            break
    assert current["amendment"]["status"] == "REJECTED", current["amendment"]
    assert "rate card no longer sells the new pickup" in current["amendment"]["message"]
    assert "is a blackout date" in current["amendment"]["message"]
    assert current["pickup_datetime"] == booking["pickup_datetime"]
    assert await seats(db, partner_id) == {future_local(days=10)[:10]: 1}


async def test_two_amendments_into_the_last_seat_apply_once(
    http: httpx.AsyncClient, key: str, db: Database, service: LiveServer, partner_id: int
) -> None:
    """Both are asked while one seat is left (each passes the request's check); as they are applied, the
    day's counter is read under its lock, so the second finds the day full and is rejected."""
    day = future_local(days=15)[:10]
    await book(http, key, future_local(days=15, hour=9))
    first, second = [await book(http, key, future_local(days=10, hour=h)) for h in (9, 10)]
    for booking in (first, second):
        assert (await amend(http, key, booking, future_local(days=15, hour=16))).status_code == 202
    for _ in range(10):
        await svc_of(service).dispatcher.run_once(limit=200)  # type: ignore[union-attr]
        states = [(await read(http, key, b))["amendment"]["status"] for b in (first, second)]
        if "PENDING" not in states:
            break
    assert sorted(states) == ["APPLIED", "REJECTED"], states
    rejected = next(b for b, s in zip((first, second), states, strict=True) if s == "REJECTED")
    message = (await read(http, key, rejected))["amendment"]["message"]
    assert f"fully booked on {day} (2 of 2)" in message
    assert (await seats(db, partner_id))[day] == 2
