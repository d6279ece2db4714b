"""Search ranked by partner quality over real HTTP (docs/rules/quality.md#ranking): equal prices by
score, ``sort=recommended``, ``quality`` on each vehicle, 1326, and a booking of the first vehicle
books the partner shown first."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import bookings
from transfers.quality import repository
from transfers.quality import service as quality
from transfers_sdk import Airport, AsyncTransfersClient, Point, VehicleQuality

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


@pytest.fixture
async def partners(db: Database, make_partner: PartnerFactory) -> AsyncIterator[dict[str, int]]:
    """Three partners at Luton, one sedan each: A (40.00, scored 70 AT_RISK), B (40.00, scored 95
    PREFERRED), C (43.00, no scorecard yet: 91)."""
    ids = {}
    for name, price in (("A Cars", "40.00"), ("B Cars", "40.00"), ("C Cars", "43.00")):
        _, ids[name], _ = await make_partner(airports=("LTN",), name=name, vehicles=default_vehicles(price)[:1])
    as_of = datetime.now(UTC)
    cards = [("A Cars", 70, "AT_RISK"), ("B Cars", 95, "PREFERRED")]
    async with db.write() as conn:
        for name, score, tier in cards:
            card: dict[str, Any] = {"partner_id": ids[name], "score": score, "tier": tier}
            row = {"partner_id": ids[name], "airport_iata": "*", "card": card}
            await repository.replace_day(conn, "2999-01-01", as_of, [row], now=as_of, partner_id=ids[name])
    quality.forget_cached()
    yield ids
    async with db.write() as conn:
        for name, _, _ in cards:
            await repository.replace_day(conn, "2999-01-01", as_of, [], now=as_of, partner_id=ids[name])
    quality.forget_cached()


async def searched(http: httpx.AsyncClient, key: str, **more: Any) -> httpx.Response:
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "LTN"}, **more)
    return await http.post(SEARCH, json=body, headers=bearer(key))


async def test_equal_prices_by_score_and_recommended(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partners: dict[str, int]
) -> None:
    _, key = await make_client(balance="500.00")
    by_price = await searched(http, key)
    assert by_price.status_code == 200, by_price.text
    vehicles = by_price.json()["vehicles"]
    assert [(v["vehicle_id"], v["company"], v["quality"]) for v in vehicles] == [
        ("1", "B Cars", {"score": 95, "preferred": True}),
        ("2", "A Cars", {"score": 70, "preferred": False}),  # never AT_RISK, never counts
        ("3", "C Cars", {"score": 91, "preferred": False}),
    ]
    recommended = await searched(http, key, sort="recommended")
    assert [v["company"] for v in recommended.json()["vehicles"]] == ["B Cars", "C Cars", "A Cars"]
    assert [v["price"] for v in recommended.json()["vehicles"]] == [40.0, 43.0, 40.0]  # prices unchanged
    # vehicle 2 of that search is C's: the stored offers follow the order shown
    search = recommended.json()
    created = await http.post(BOOKING, json=booking_body(search["search_id"], "2"), headers=bearer(key))
    assert created.status_code == 200, created.text
    reservation_no = created.json()["booking"]["reservation_no"]
    async with db.read() as conn:
        booked = await conn.execute(
            select(bookings.c.partner_id, bookings.c.total).where(bookings.c.reservation_no == reservation_no)
        )
        assert tuple(booked.one()) == (partners["C Cars"], Decimal("43.00"))


async def test_an_unknown_sort_is_1326(
    http: httpx.AsyncClient, make_client: ClientFactory, partners: dict[str, int]
) -> None:
    _, key = await make_client()
    for bad in ("cheapest", "", 3):
        answer = await searched(http, key, sort=bad)
        assert answer.status_code == 422 and answer.json()["code"] == 1326, answer.text
    assert (await searched(http, key, sort=None)).status_code == 200
    # checked after every other search code, the currency's 1325 included
    both = await searched(http, key, sort="bogus", currency="XXX")
    assert both.json()["code"] == 1325, both.text
    assert (await searched(http, key, sort="bogus", travelers=None)).json()["code"] == 1318


async def test_the_sdk_sends_sort_and_reads_quality(
    service: LiveServer, make_client: ClientFactory, partners: dict[str, int]
) -> None:
    _, key = await make_client()
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=future_local(),
            pickup=Airport("LTN"),
            dropoff=Point(51.5, -0.12, "Centre"),
            adult=2,
            sort="recommended",
        )
    assert [(v.company, v.quality) for v in found.vehicles] == [
        ("B Cars", VehicleQuality(95, True)),
        ("C Cars", VehicleQuality(91, False)),
        ("A Cars", VehicleQuality(70, False)),
    ]
