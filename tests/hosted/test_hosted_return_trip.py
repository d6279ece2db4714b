"""A hosted partner in a return trip (docs/rules/return-trips.md#search, #create): each leg priced on its own
day and time from the rate card (the way back's night surcharge, its blackout date) and each leg holding a
seat of its own day's capacity, both in the pair's one transaction or neither."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import select

from tests.api.test_booking_lifecycle import balance_of
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.hosted.conftest import HostedFactory, example_card
from transfers.db.engine import Database
from transfers.db.tables import bookings, hosted_capacity

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
NAME = "Hosted Glasgow"
POINT = {"type": "POINT", "lat": 55.8642, "lng": -4.2518, "name": "Glasgow"}


async def _search(http: httpx.AsyncClient, key: str, out: str, back: str) -> dict[str, Any]:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": "GLA"}, dropoff_location=POINT, pickup_datetime=out
    )
    body["return_datetime"] = back
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _sedan(vehicles: list[dict[str, Any]]) -> dict[str, Any]:
    return next(v for v in vehicles if v["company"] == NAME and v["type"] == "SEDAN")


async def test_each_leg_is_priced_and_seated_on_its_own_day(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="500.00")
    card = example_card()
    card["vehicles"][0]["daily_capacity"] = 1
    blackout = future_local(days=20)[:10]
    card["blackout_dates"] = [blackout]
    partner_id = await make_hosted(airports=("GLA",), card=card, name=NAME)
    day1, day2, day3 = future_local(days=10), future_local(days=12, hour=23, minute=15), future_local(days=11)
    # the way back at night is priced with the night surcharge (+20 %), the way out by day is not
    first = await _search(http, key, day1, day2)
    second = await _search(http, key, day3, day2)  # searched while both seats are free
    out_sedan, back_sedan = _sedan(first["vehicles"]), _sedan(first["return_vehicles"])
    assert Decimal(str(back_sedan["price"])) == Decimal(str(out_sedan["price"])) * Decimal("1.2")
    # a way back on a blackout date: nothing hosted offered back, the way out still is
    dark = await _search(http, key, day1, f"{blackout} 12:00")
    assert [v for v in dark["return_vehicles"] if v["company"] == NAME] == []
    assert [v for v in dark["vehicles"] if v["company"] == NAME]

    pair = await http.post(
        BOOKING,
        json=booking_body(first["search_id"], out_sedan["vehicle_id"], return_vehicle_id=back_sedan["vehicle_id"]),
        headers=bearer(key),
    )
    assert pair.status_code == 200, pair.text
    assert pair.json()["booking"]["status"] == pair.json()["return_booking"]["status"] == "PENDING_APPROVAL"
    async with db.read() as conn:
        seats = (
            await conn.execute(
                select(hosted_capacity.c.local_date, hosted_capacity.c.booked)
                .where(hosted_capacity.c.partner_id == partner_id)
                .order_by(hosted_capacity.c.local_date)
            )
        ).all()
    assert [(str(d), n) for d, n in seats] == [(day1[:10], 1), (day2[:10], 1)]  # one seat on each leg's day

    # the second pair's way back is on day 2, whose only sedan is taken: refused whole, day 3 not held
    balance = await balance_of(db, client_id)
    refused = await http.post(
        BOOKING,
        json=booking_body(
            second["search_id"],
            _sedan(second["vehicles"])["vehicle_id"],
            return_vehicle_id=_sedan(second["return_vehicles"])["vehicle_id"],
        ),
        headers=bearer(key),
    )
    assert refused.status_code == 409 and refused.json()["code"] == "VEHICLE_UNAVAILABLE"
    assert await balance_of(db, client_id) == balance
    async with db.read() as conn:
        held = (
            await conn.execute(
                select(hosted_capacity.c.local_date, hosted_capacity.c.booked).where(
                    hosted_capacity.c.partner_id == partner_id, hosted_capacity.c.booked > 0
                )
            )
        ).all()
        count = (await conn.execute(select(bookings.c.id).where(bookings.c.client_id == client_id))).all()
    assert day3[:10] not in {str(d) for d, _ in held} and len(count) == 2
