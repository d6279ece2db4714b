"""A return trip against the sandbox partner (docs/rules/return-trips.md#create): both legs go out as creates of
their own with ``trip`` {id, leg}; the way back without ``return_travel_details`` (its flight null) is accepted
too, and each leg is approved on its own."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer

BOOKING = "/api/v1/booking-api/booking"


async def _settled(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    booking: dict[str, Any] = {}
    for _ in range(400):  # bounded polling of a real server (the sandbox approves after a few seconds)
        booking = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
        if booking["status"] == "APPROVED":
            return booking
        await asyncio.sleep(0.05)
    raise AssertionError(f"{reservation_no} never approved: {booking}")


async def test_the_sandbox_partner_takes_both_legs(sandbox: LiveServer, make_client: ClientFactory) -> None:
    _, key = await make_client(balance="500.00")
    async with httpx.AsyncClient(base_url=sandbox.url, timeout=30) as http:
        body = search_body(return_datetime=future_local(days=16, hour=20, minute=30))
        found = (await http.post("/api/v1/booking-api/search", json=body, headers=bearer(key))).json()
        assert found["return_vehicles"], found
        pair = await http.post(
            BOOKING,
            json=booking_body(found["search_id"], return_vehicle_id=found["return_vehicles"][0]["vehicle_id"]),
            headers=bearer(key),
        )
        assert pair.status_code == 200, pair.text
        out, back = pair.json()["booking"], pair.json()["return_booking"]
        assert back["flight_number"] is None
        assert out["status"] in ("PENDING_APPROVAL", "APPROVED") and back["status"] in ("PENDING_APPROVAL", "APPROVED")
        approved_out = await _settled(http, key, out["reservation_no"])
        approved_back = await _settled(http, key, back["reservation_no"])
        assert approved_out["driver"] and approved_back["driver"]
        assert approved_back["trip"] == {
            "id": out["trip"]["id"],
            "leg": 2,
            "other_reservation_no": out["reservation_no"],
        }
