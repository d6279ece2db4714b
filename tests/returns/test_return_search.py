"""Return searches (docs/rules/return-trips.md#search) over real HTTP with partners on loopback: both
directions in one fan-out under one deadline, 1324 and its place in the order of checks, distinct
ids, and the one-way answer unchanged."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import future_local, search_body
from transfers.db.engine import Database
from transfers.db.tables import search_vehicles, searches

SEARCH = "/api/v1/booking-api/search"


async def _search(http: httpx.AsyncClient, key: str, body: Any) -> httpx.Response:
    return await http.post(SEARCH, json=body, headers=bearer(key))


async def test_a_return_search_asks_both_ways_at_once_and_numbers_on(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    _, key = await make_client()
    partner, partner_id, _ = await make_partner(name="Return Cars", mode="slow", delay=0.4)
    body = search_body(return_datetime=future_local(days=17, hour=18, minute=5))
    started = time.monotonic()
    response = await _search(http, key, body)
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"search_id", "distance_km", "vehicles", "return_vehicles"}
    out_ids = [v["vehicle_id"] for v in answer["vehicles"]]
    back_ids = [v["vehicle_id"] for v in answer["return_vehicles"]]
    assert out_ids == ["1", "2"] and back_ids == ["3", "4"]
    out_extras = {e["id"] for v in answer["vehicles"] for e in v["extra_services"]}
    back_extras = {e["id"] for v in answer["return_vehicles"] for e in v["extra_services"]}
    assert out_extras and back_extras and not out_extras & back_extras
    # same item shape; the way back's policy counts from its own pickup
    assert set(answer["vehicles"][0]) == set(answer["return_vehicles"][0])
    assert answer["return_vehicles"][0]["cancellation_policy"]["free_until"][11:16] == "18:05"
    # both directions were asked, concurrently: the two calls overlap (each takes 0.4 s)
    out_call, back_call = sorted(partner.calls("/booking/search"), key=lambda r: r.body["date"])
    assert out_call.body["from"]["type"] == "AIRPORT" and out_call.body["to"]["type"] == "POINT"
    assert back_call.body["from"]["type"] == "POINT" and back_call.body["to"]["iata_code"] == "LHR"
    assert back_call.body["date"][11:16] == "18:05"
    assert back_call.started < out_call.finished and out_call.started < back_call.finished
    assert elapsed < 3.0  # bounded by one deadline (3 s), never by the sum
    async with db.read() as conn:
        stored = (await conn.execute(select(searches).where(searches.c.search_id == answer["search_id"]))).one()
        legs = (
            await conn.execute(
                select(search_vehicles.c.vehicle_no, search_vehicles.c.leg, search_vehicles.c.partner_id)
                .where(search_vehicles.c.search_pk == stored.id)
                .order_by(search_vehicles.c.vehicle_no)
            )
        ).all()
    assert stored.return_pickup_at is not None and stored.return_pickup_at > stored.pickup_at
    assert [(r.vehicle_no, r.leg, r.partner_id) for r in legs] == [
        (1, 1, partner_id),
        (2, 1, partner_id),
        (3, 2, partner_id),
        (4, 2, partner_id),
    ]


async def test_one_deadline_for_both_ways(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """A partner that hangs is left out of both directions; the answer comes by the one deadline."""
    _, key = await make_client()
    await make_partner(mode="hang")
    await make_partner(name="Answers")
    started = time.monotonic()
    response = await _search(http, key, search_body(return_datetime=future_local(days=12)))
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    answer = response.json()
    assert [v["company"] for v in answer["vehicles"]] == ["Answers", "Answers"]
    assert [v["company"] for v in answer["return_vehicles"]] == ["Answers", "Answers"]
    assert elapsed < 3.0 + 5.0  # the 3 s deadline plus a loaded machine's slack, not two deadlines


async def test_nothing_offered_back_is_an_empty_list(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner(airports=("CDG",))  # serves another airport only
    response = await _search(http, key, search_body(return_datetime=future_local(days=12)))
    assert response.status_code == 200
    assert response.json()["vehicles"] == [] and response.json()["return_vehicles"] == []


async def test_without_a_return_time_the_answer_is_the_one_way_answer(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner()
    plain = (await _search(http, key, search_body())).json()
    null = (await _search(http, key, search_body(return_datetime=None))).json()
    assert set(plain) == set(null) == {"search_id", "distance_km", "vehicles"}
    assert plain["vehicles"] == null["vehicles"]
    assert len(partner.calls("/booking/search")) == 2  # one call per search: no way back asked


@pytest.mark.parametrize(
    "value",
    [
        "",
        "tomorrow",
        True,
        1764600000,
        12.5,
        {"at": "2026-12-01 10:00"},
        ["2026-12-01 10:00"],
        "2026-13-01 10:00",
        "2020-01-01 10:00",
        "x" * 10_000,
        "２０２６-12-01 10:00",
        future_local(days=400),
        future_local(days=10, hour=14, minute=30),  # the pickup itself
        future_local(days=10, hour=15, minute=29),  # 59 minutes after
        future_local(days=10, hour=13, minute=0),  # before the way out
        future_local(days=9),  # a day before
    ],
)
async def test_bad_return_times_are_1324(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, value: Any
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner()
    response = await _search(http, key, search_body(return_datetime=value))
    assert response.status_code == 422, response.text
    assert response.json() == {"status": "Error", "code": 1324, "message": "SEARCH_RETURN_DATETIME_INVALID"}
    assert partner.calls("/booking/search") == []  # refused before any partner is asked


async def test_an_hour_after_is_enough(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner()
    body = search_body(return_datetime=future_local(days=10, hour=15, minute=30))
    response = await _search(http, key, body)
    assert response.status_code == 200, response.text
    assert len(response.json()["return_vehicles"]) == 2


async def test_1324_comes_after_1316_1317_and_before_the_travellers(
    http: httpx.AsyncClient, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    bad = "never"
    assert (await _search(http, key, search_body(pickup_datetime=None, return_datetime=bad))).json()["code"] == 1316
    assert (await _search(http, key, search_body(pickup_datetime="x", return_datetime=bad))).json()["code"] == 1317
    body = search_body(return_datetime=bad, travelers={"adult": 0})
    assert (await _search(http, key, body)).json()["code"] == 1324
    body = search_body(return_datetime=bad, pickup_location={"type": "AIRPORT"})
    assert (await _search(http, key, body)).json()["code"] == 1306
