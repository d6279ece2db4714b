"""Scenario triggers of the sandbox: magic passenger surnames and flight numbers make the
built-in partner take every path a real partner can take. Each is driven end to end through the
service, with the embedded worker, and checked from the client's side (status and wallet)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.api.test_booking_lifecycle import balance_of
from tests.conftest import ClientFactory, bearer
from tests.e2e.conftest import APPROVE_AFTER
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.jobs import scheduled
from transfers.sandbox_partner.scenarios import SCENARIOS, Scenario
from transfers.services import Services

BOOKING = "/api/v1/booking-api/booking"
START = Decimal("500.00")


async def book(
    http: httpx.AsyncClient, key: str, *, surname: str = "Lovelace", flight: str = "BA117"
) -> tuple[dict[str, Any], Decimal]:
    found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
    body = booking_body(found["search_id"], 1)
    body["passenger"]["surname"] = surname
    body["travel_details"]["flight_number"] = flight
    answer = (await http.post(BOOKING, json=body, headers=bearer(key))).json()
    return answer["booking"], Decimal(answer["booking"]["price"]["total"])


async def read(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    answer: dict[str, Any] = (
        await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    ).json()
    return answer


async def wait_for(
    http: httpx.AsyncClient, key: str, reservation_no: str, status: str, seconds: float = 8.0
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        booking = await read(http, key, reservation_no)
        if booking["status"] == status:
            return booking
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{reservation_no} stayed {booking['status']}, never {status}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def http(sandbox: LiveServer) -> Any:
    async with httpx.AsyncClient(base_url=sandbox.url, timeout=30) as client:
        yield client


def test_every_trigger_is_tested_here() -> None:
    tested = {
        Scenario.DECLINE,
        Scenario.SLOW_APPROVE,
        Scenario.PARTNER_DOWN,
        Scenario.PARTNER_CANCEL,
        Scenario.NO_SHOW,
        Scenario.NO_AMEND,
        Scenario.RIDE,  # in real time below (slow); both rides on the injected clock: tests/ride/test_sandbox_ride.py
        Scenario.CUSTOMER_NO_SHOW,
    }
    assert set(SCENARIOS) == tested


async def test_decline(http: httpx.AsyncClient, make_client: ClientFactory, db: Database) -> None:
    client_id, key = await make_client(balance=str(START))
    booking, _ = await book(http, key, surname="DECLINE")
    assert booking["status"] == "DECLINED"
    assert await balance_of(db, client_id) == START


async def test_partner_down_until_retried(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, key = await make_client(balance=str(START))
    booking, price = await book(http, key, surname="PARTNERDOWN")
    assert booking["status"] == "PENDING"  # first attempt: 503
    assert await balance_of(db, client_id) == START - price
    clock.advance(timedelta(seconds=15))  # second attempt (~10 s later): 503 again
    await asyncio.sleep(0.5)
    assert (await read(http, key, booking["reservation_no"]))["status"] == "PENDING"
    clock.advance(timedelta(seconds=45))  # third attempt (~30 s later): accepted
    await wait_for(http, key, booking["reservation_no"], "PENDING_APPROVAL")
    approved = await wait_for(http, key, booking["reservation_no"], "APPROVED")
    assert approved["driver"] is not None


async def test_slow_approve_is_caught_up_by_reconciliation(
    http: httpx.AsyncClient,
    sandbox: LiveServer,
    make_client: ClientFactory,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client(balance=str(START))
    slow, _ = await book(http, key, surname="SLOWAPPROVE")
    normal, _ = await book(http, key)
    await wait_for(http, key, normal["reservation_no"], "APPROVED")
    assert (await read(http, key, slow["reservation_no"]))["status"] == "PENDING_APPROVAL"
    clock.advance(timedelta(minutes=31))  # the partner has approved by now; the reverse call is still asleep
    svc: Services = sandbox.app.state.services
    await scheduled.run_all(svc)
    approved = await read(http, key, slow["reservation_no"])
    assert approved["status"] == "APPROVED"
    assert approved["driver"]["name"]
    assert APPROVE_AFTER * 10 > 1  # real time never waited for it


async def test_partner_cancels_after_approval_and_the_wallet_is_refunded(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance=str(START))
    booking, price = await book(http, key, surname="PARTNERCANCEL")
    await wait_for(http, key, booking["reservation_no"], "APPROVED")
    assert await balance_of(db, client_id) == START - price
    cancelled = await wait_for(http, key, booking["reservation_no"], "CANCELLED")
    assert cancelled["is_cancelable"] is False
    assert await balance_of(db, client_id) == START


async def test_no_show_is_still_charged_and_completes(
    http: httpx.AsyncClient,
    sandbox: LiveServer,
    make_client: ClientFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance=str(START))
    booking, price = await book(http, key, flight="XX0000")
    await wait_for(http, key, booking["reservation_no"], "APPROVED")
    svc: Services = sandbox.app.state.services
    partner_app = svc.sandbox_partner_app
    info = partner_app.state.partner.info(booking["reservation_no"])
    assert info[1]["booking_details"]["no_show"] is True
    pickup = datetime.fromisoformat(booking["pickup_datetime"])
    clock.advance(pickup - clock.now() + timedelta(hours=13))
    await scheduled.run_all(svc)
    completed = await read(http, key, booking["reservation_no"])
    assert completed["status"] == "COMPLETED"
    assert await balance_of(db, client_id) == START - price  # a no-show is not refunded


async def wait_for_amendment(
    http: httpx.AsyncClient, key: str, reservation_no: str, status: str, seconds: float = 8.0
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        booking = await read(http, key, reservation_no)
        if booking["amendment"] and booking["amendment"]["status"] == status:
            return booking
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{reservation_no}'s amendment stayed {booking['amendment']}, never {status}")
        await asyncio.sleep(0.05)


async def test_amendments_are_accepted_except_for_noamend(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    """The sandbox partner accepts amendments (the worker delivers the AMENDED update),
    and refuses every amendment of a booking whose passenger surname is NOAMEND."""
    _, key = await make_client(balance=str(START))
    accepted, _ = await book(http, key)
    refused, _ = await book(http, key, surname="NOAMEND")
    for booking in (accepted, refused):
        await wait_for(http, key, booking["reservation_no"], "APPROVED")
        response = await http.patch(
            BOOKING,
            params={"reservation_no": booking["reservation_no"]},
            json={"travel_details": {"flight_number": "BA999"}},
            headers=bearer(key),
        )
        assert response.status_code == 202, response.text
    applied = await wait_for_amendment(http, key, accepted["reservation_no"], "APPLIED")
    assert applied["flight_number"] == "BA999"
    rejected = await wait_for_amendment(http, key, refused["reservation_no"], "REJECTED")
    assert rejected["amendment"]["message"] == "Amendments are not possible for this booking"
    assert rejected["flight_number"] == "BA117"


async def test_sandbox_vehicles_carry_realistic_cancellation_policies(
    http: httpx.AsyncClient, make_client: ClientFactory
) -> None:
    _, key = await make_client(balance=str(START))
    found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
    policies = {v["type"]: v["cancellation_policy"]["tiers"] for v in found["vehicles"]}
    assert policies["LUXURY"] == [
        {"hours_before_pickup": 48, "fee_percent": 0},
        {"hours_before_pickup": 24, "fee_percent": 50},
        {"hours_before_pickup": 0, "fee_percent": 100},
    ]
    assert policies["SEDAN"] == [
        {"hours_before_pickup": 24, "fee_percent": 0},
        {"hours_before_pickup": 0, "fee_percent": 100},
    ]
    assert all(v["cancellation_policy"]["free_until"] for v in found["vehicles"])  # 10 days ahead: still free


@pytest.mark.slow
async def test_ride_plays_the_whole_ride_within_a_minute_and_a_half(
    http: httpx.AsyncClient,
    sandbox: LiveServer,
    make_client: ClientFactory,
) -> None:
    """docs/rules/sandbox.md#ride, in real time (the sandbox's own delays, about 50 s): the mounted
    reference partner drives a RIDE booking to COMPLETED through the reverse API."""
    _, key = await make_client(balance=str(START))
    booking, _ = await book(http, key, surname="RIDE")
    number = booking["reservation_no"]
    found: dict[str, Any] = {}
    for _ in range(1800):  # bounded: 180 s on a loaded machine
        found = await read(http, key, number)
        if found["status"] == "COMPLETED":
            break
        await asyncio.sleep(0.1)
    assert found["status"] == "COMPLETED", found
    assert found["ride"]["stage"] == "DROPPED_OFF"
    assert [e["type"] for e in found["ride"]["events"]] == [
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
        "DRIVER_ARRIVED_AT_DROPOFF",
    ]
