"""Authorization sweep (hardening item 8, RELIABILITY A1): every endpoint x every kind of caller.

Each cell names the exact answer. A booking of another client (or partner) must be answered
byte-for-byte like one that does not exist, so nothing leaks its existence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, search_body
from transfers.clients import service as client_service
from transfers.clients.models import ClientStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

UNAUTH = (401, {"status": "Error", "code": "UNAUTHENTICATED", "message": "A valid bearer API key is required."})
SUSPENDED = (403, {"status": "Error", "code": "CLIENT_SUSPENDED", "message": "This client account is suspended."})
PARTNER_UNAUTH = (
    401,
    {"status": "Error", "code": "UNAUTHENTICATED", "message": "A valid partner bearer API key is required."},
)
NOT_FOUND_404 = (404, {"status": "Error", "message": "Booking not found", "data": None, "error_details": None})


@dataclass
class World:
    keys: dict[str, dict[str, str]]
    reservation_no: str
    search_id: str


@pytest.fixture(scope="module")
async def world(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database, clock: ShiftedClock, settings: Any
) -> Any:
    from tests.conftest import PartnerFactory

    partners = PartnerFactory(db, clock, settings)
    _, owner = await make_client()
    _, other = await make_client()
    revoked_id, revoked = await make_client()
    suspended_id, suspended = await make_client()
    _, _, partner_key = await partners(airports=("OPO",))
    _, _, other_partner_key = await partners(airports=("LIS",))
    found = (
        await http.post(
            "/api/v1/booking-api/search",
            headers=bearer(owner),
            json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "OPO"}),
        )
    ).json()
    booked = await http.post(
        "/api/v1/booking-api/booking", json=booking_body(found["search_id"]), headers=bearer(owner)
    )
    reservation_no = booked.json()["booking"]["reservation_no"]
    await client_service.revoke_key(db, clock, revoked.split("_")[0] + "_" + revoked.split("_")[1], actor="tests")
    await client_service.set_status(db, clock, suspended_id, ClientStatus.SUSPENDED, actor="tests")
    assert revoked_id != suspended_id
    keys = {
        "none": {},
        "garbage": bearer("garbage"),
        "empty_bearer": {"Authorization": "Bearer"},
        "revoked": bearer(revoked),
        "suspended": bearer(suspended),
        "other_client": bearer(other),
        "owner": bearer(owner),
        "partner_on_client_api": bearer(partner_key),
        "partner": bearer(partner_key),
        "client_on_reverse_api": bearer(owner),
        "other_partner": bearer(other_partner_key),
    }
    yield World(keys, reservation_no, found["search_id"])
    await partners.close()


CLIENT_ENDPOINTS = ["search", "create", "get", "cancel", "reasons", "list", "quote", "amend"]
ENDPOINT_EXPECT: dict[str, dict[str, Any]] = {
    # caller -> expected (status, body) or a callable check name
    "none": dict.fromkeys(CLIENT_ENDPOINTS, UNAUTH),
    "garbage": dict.fromkeys(CLIENT_ENDPOINTS, UNAUTH),
    "empty_bearer": dict.fromkeys(CLIENT_ENDPOINTS, UNAUTH),
    "revoked": dict.fromkeys(CLIENT_ENDPOINTS, UNAUTH),
    "suspended": dict.fromkeys(CLIENT_ENDPOINTS, SUSPENDED),
    "partner_on_client_api": dict.fromkeys(CLIENT_ENDPOINTS, UNAUTH),
    "other_client": {
        "get": (422, {"status": "Error", "code": 1401, "message": "BOOKING_INFO_RESERVATION_NOT_FOUND"}),
        "cancel": (422, {"status": "Error", "code": 1201, "message": "CANCELLATION_RESERVATION_NOT_FOUND"}),
        "create": (422, {"status": "Error", "code": 1002, "message": "SEARCH_NOT_EXISTS"}),
        # docs/rules/cancellation.md: another client's booking is as invisible to the quote and to amendments
        "quote": (422, {"status": "Error", "code": 1201, "message": "CANCELLATION_RESERVATION_NOT_FOUND"}),
        "amend": (422, {"status": "Error", "code": 1401, "message": "BOOKING_INFO_RESERVATION_NOT_FOUND"}),
    },
}


async def call_client_endpoint(
    http: httpx.AsyncClient, world: World, endpoint: str, headers: dict[str, str], reservation_no: str | None = None
) -> httpx.Response:
    reservation = reservation_no or world.reservation_no
    if endpoint == "search":
        return await http.post("/api/v1/booking-api/search", json=search_body(), headers=headers)
    if endpoint == "create":
        return await http.post("/api/v1/booking-api/booking", json=booking_body(world.search_id), headers=headers)
    if endpoint == "get":
        return await http.get("/api/v1/booking-api/booking", params={"reservation_no": reservation}, headers=headers)
    if endpoint == "cancel":
        return await http.delete(
            "/api/v1/booking-api/booking", headers=headers, params={"reservation_no": reservation, "cancellation_id": 1}
        )
    if endpoint == "quote":
        return await http.get(
            "/api/v1/booking-api/booking/cancellation-quote", params={"reservation_no": reservation}, headers=headers
        )
    if endpoint == "amend":
        return await http.patch(
            "/api/v1/booking-api/booking",
            params={"reservation_no": reservation},
            json={"passenger": {"name": "Mallory"}},
            headers=headers,
        )
    if endpoint == "reasons":
        return await http.get("/api/v1/booking-api/cancellation-reasons", headers=headers)
    return await http.get("/api/v1/booking-api/bookings", headers=headers)


CELLS = [(caller, endpoint) for caller, row in ENDPOINT_EXPECT.items() for endpoint in row]


@pytest.mark.parametrize(("caller", "endpoint"), CELLS, ids=[f"{c}-{e}" for c, e in CELLS])
async def test_client_api_cell(http: httpx.AsyncClient, world: World, caller: str, endpoint: str) -> None:
    expected_status, expected_body = ENDPOINT_EXPECT[caller][endpoint]
    response = await call_client_endpoint(http, world, endpoint, world.keys[caller])
    assert (response.status_code, response.json()) == (expected_status, expected_body)


@pytest.mark.parametrize("endpoint", ["get", "cancel", "quote", "amend"])
async def test_foreign_booking_is_byte_identical_to_a_missing_one(
    http: httpx.AsyncClient, world: World, endpoint: str
) -> None:
    foreign = await call_client_endpoint(http, world, endpoint, world.keys["other_client"])
    missing = await call_client_endpoint(http, world, endpoint, world.keys["other_client"], "TB-ZZZZZZZZZZ")
    assert foreign.status_code == missing.status_code
    assert foreign.content == missing.content
    assert {k: v for k, v in foreign.headers.items() if k not in ("x-request-id", "date")} == {
        k: v for k, v in missing.headers.items() if k not in ("x-request-id", "date")
    }


async def test_owner_still_sees_and_the_booking_is_untouched(http: httpx.AsyncClient, world: World) -> None:
    read = await call_client_endpoint(http, world, "get", world.keys["owner"])
    assert read.status_code == 200
    assert read.json()["status"] == "PENDING_APPROVAL"
    assert read.json()["amendment"] is None and read.json()["passenger"]["name"] != "Mallory"


REVERSE_CALLERS = {
    "none": PARTNER_UNAUTH,
    "garbage": PARTNER_UNAUTH,
    "client_on_reverse_api": PARTNER_UNAUTH,
    "revoked": PARTNER_UNAUTH,
    "other_partner": NOT_FOUND_404,
}


@pytest.mark.parametrize("caller", list(REVERSE_CALLERS))
@pytest.mark.parametrize("endpoint", ["info", "update"])
async def test_reverse_api_cell(http: httpx.AsyncClient, world: World, caller: str, endpoint: str) -> None:
    headers = world.keys[caller]
    if endpoint == "info":
        response = await http.get(f"/api/v1/reverse/booking/info/{world.reservation_no}", headers=headers)
    else:
        response = await http.put(
            "/api/v1/reverse/booking/update",
            headers=headers,
            json={"reservation_no": world.reservation_no, "status": "CANCELLED"},
        )
    assert (response.status_code, response.json()) == REVERSE_CALLERS[caller]


async def test_reverse_foreign_and_missing_are_identical(http: httpx.AsyncClient, world: World) -> None:
    headers = world.keys["other_partner"]
    foreign = await http.get(f"/api/v1/reverse/booking/info/{world.reservation_no}", headers=headers)
    missing = await http.get("/api/v1/reverse/booking/info/TB-ZZZZZZZZZZ", headers=headers)
    assert foreign.content == missing.content and foreign.status_code == missing.status_code == 404


async def test_public_reference_needs_no_key_and_ignores_bad_ones(http: httpx.AsyncClient, world: World) -> None:
    for caller in ("none", "garbage", "revoked"):
        response = await http.get("/api/public/car/type", headers=world.keys[caller])
        assert response.status_code == 200
