"""Reference data (docs/rules/reference-data.md#car-data, docs/rules/reference-data.md) and the cancellation-reasons
list (docs/rules/reference-data.md#cancellation-reasons, docs/rules/booking.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, insert, select

from tests.conftest import ClientFactory, bearer
from transfers.clients import service as client_service
from transfers.clients.models import ClientStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import cancellation_reasons, vehicle_segments

REASONS = "/api/v1/booking-api/cancellation-reasons"

# The seeded catalogues. Their ids are fixed by the seed migration so that documentation, clients
# and partners can rely on them across deployments; operators may add rows afterwards.
SEEDED: dict[str, dict[int, str]] = {
    "type": {1: "SEDAN", 2: "ESTATE", 3: "MINIVAN", 4: "MINIBUS", 5: "BUS", 6: "LUXURY", 7: "ELECTRIC"},
    "segment": {1: "ECONOMY", 2: "STANDARD", 3: "BUSINESS", 4: "FIRST"},
    "services": {1: "PRIVATE_TRANSFER", 2: "SHUTTLE", 3: "MEET_AND_GREET"},
}
SEEDED_REASONS = {"Change of plans", "Flight cancelled", "Booked by mistake", "Found another option", "Other"}


def assert_reference_shape(body: Any) -> list[dict[str, Any]]:
    assert isinstance(body, dict) and list(body) == ["data"], body
    items = body["data"]
    assert isinstance(items, list) and items
    for item in items:
        assert isinstance(item, dict) and set(item) == {"id", "name"}, item
        assert type(item["id"]) is int and item["id"] > 0  # not a bool, not a string
        assert isinstance(item["name"], str) and item["name"]
    assert len({i["id"] for i in items}) == len(items), "duplicate ids"
    assert len({i["name"] for i in items}) == len(items), "duplicate names"
    return items


@pytest.mark.parametrize("catalogue", ["services", "segment", "type"])
async def test_reference_lists_are_public_with_the_exact_shape(http: httpx.AsyncClient, catalogue: str) -> None:
    response = await http.get(f"/api/public/car/{catalogue}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    items = assert_reference_shape(response.json())
    by_id = {i["id"]: i["name"] for i in items}
    assert SEEDED[catalogue].items() <= by_id.items(), by_id
    assert [i["id"] for i in items] == sorted(i["id"] for i in items)  # stable order: by id


async def test_vehicle_types_and_segments_are_exactly_the_seeded_ones(http: httpx.AsyncClient) -> None:
    types = assert_reference_shape((await http.get("/api/public/car/type")).json())
    assert {i["name"] for i in types} == set(SEEDED["type"].values())
    segments = assert_reference_shape((await http.get("/api/public/car/segment")).json())
    assert {i["name"] for i in segments} >= set(SEEDED["segment"].values())


async def test_reference_lists_come_from_the_database(http: httpx.AsyncClient, db: Database) -> None:
    """An operator's new row shows up at once (the lists are not hard-coded, nor cached)."""
    name = "TEST_SEGMENT_REFERENCE"
    async with db.write() as conn:
        new_id = (
            await conn.execute(insert(vehicle_segments).values(name=name).returning(vehicle_segments.c.id))
        ).scalar_one()
    try:
        items = assert_reference_shape((await http.get("/api/public/car/segment")).json())
        assert {"id": int(new_id), "name": name} in items
        assert items[-1] == {"id": int(new_id), "name": name}
    finally:
        async with db.write() as conn:
            await conn.execute(delete(vehicle_segments).where(vehicle_segments.c.id == new_id))
    items = assert_reference_shape((await http.get("/api/public/car/segment")).json())
    assert name not in {i["name"] for i in items}


async def test_reference_lists_ignore_query_strings(http: httpx.AsyncClient) -> None:
    plain = (await http.get("/api/public/car/type")).json()
    assert (await http.get("/api/public/car/type", params={"page": "2", "limit": "1", "id": "x"})).json() == plain


# ---- cancellation reasons ------------------------------------------------------------------------


async def test_cancellation_reasons_need_a_key(http: httpx.AsyncClient) -> None:
    response = await http.get(REASONS)
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHENTICATED"


async def test_cancellation_reasons_refuse_a_suspended_client(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, key = await make_client()
    await client_service.set_status(db, clock, client_id, ClientStatus.SUSPENDED, actor="tests")
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 403 and response.json()["code"] == "CLIENT_SUSPENDED"


def assert_reasons_shape(body: Any) -> list[dict[str, Any]]:
    assert isinstance(body, list) and body, "a bare JSON array"
    for reason in body:
        assert isinstance(reason, dict) and set(reason) == {"id", "name", "description", "position"}, reason
        assert type(reason["id"]) is int and reason["id"] > 0
        assert isinstance(reason["name"], str) and reason["name"]
        assert reason["description"] is None or isinstance(reason["description"], str)
        assert type(reason["position"]) is int
    assert len({r["id"] for r in body}) == len(body)
    positions = [(r["position"], r["id"]) for r in body]
    assert positions == sorted(positions), "ordered by position"
    return body


async def test_cancellation_reasons_are_a_bare_array_ordered_by_position(
    http: httpx.AsyncClient, make_client: ClientFactory
) -> None:
    _, key = await make_client()
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.content.lstrip().startswith(b"[")
    reasons = assert_reasons_shape(response.json())
    assert {r["name"] for r in reasons} >= SEEDED_REASONS
    by_name = {r["name"]: r for r in reasons}
    assert by_name["Other"]["description"] is None  # description is nullable and really null
    assert isinstance(by_name["Change of plans"]["description"], str)
    assert [
        by_name[n]["position"]
        for n in ("Change of plans", "Flight cancelled", "Booked by mistake", "Found another option", "Other")
    ] == [1, 2, 3, 4, 5]


@pytest.fixture
async def extra_reasons(db: Database) -> AsyncIterator[dict[str, int]]:
    """A first-position reason added after the seed (higher id, lower position) and an inactive one."""
    async with db.write() as conn:
        first = (
            await conn.execute(
                insert(cancellation_reasons)
                .values(
                    name="TEST Operator reason first",
                    description=None,
                    position=0,
                    active=True,
                )
                .returning(cancellation_reasons.c.id)
            )
        ).scalar_one()
        hidden = (
            await conn.execute(
                insert(cancellation_reasons)
                .values(
                    name="TEST Retired reason",
                    description="no longer offered",
                    position=3,
                    active=False,
                )
                .returning(cancellation_reasons.c.id)
            )
        ).scalar_one()
    try:
        yield {"first": int(first), "hidden": int(hidden)}
    finally:
        async with db.write() as conn:
            await conn.execute(delete(cancellation_reasons).where(cancellation_reasons.c.id.in_([first, hidden])))


async def test_cancellation_reasons_follow_position_not_id_and_hide_inactive_ones(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database, extra_reasons: dict[str, int]
) -> None:
    _, key = await make_client()
    reasons = assert_reasons_shape((await http.get(REASONS, headers=bearer(key))).json())
    assert reasons[0] == {
        "id": extra_reasons["first"],
        "name": "TEST Operator reason first",
        "description": None,
        "position": 0,
    }
    assert extra_reasons["hidden"] not in {r["id"] for r in reasons}
    async with db.read() as conn:
        active = {
            r.id
            for r in await conn.execute(
                select(cancellation_reasons.c.id).where(cancellation_reasons.c.active.is_(True))
            )
        }
    assert {r["id"] for r in reasons} == active
