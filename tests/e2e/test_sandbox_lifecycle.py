"""The sandbox as a new user meets it: the service with its built-in reference partner mounted,
the worker running in-process, and nothing else. A booking goes PENDING -> PENDING_APPROVAL ->
APPROVED by itself; cancelling refunds the wallet and tells the partner."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import httpx

from tests.api.test_booking_lifecycle import balance_of
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.services import Services

BOOKING = "/api/v1/booking-api/booking"


async def poll(http: httpx.AsyncClient, key: str, reservation_no: str, wanted: str) -> dict[str, Any]:
    for _ in range(100):
        booking: dict[str, Any] = (
            await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
        ).json()
        if booking["status"] == wanted:
            return booking
        await asyncio.sleep(0.05)
    raise AssertionError(f"{reservation_no} never reached {wanted}; last {booking['status']}")


async def test_sandbox_booking_is_approved_by_itself_and_cancel_refunds(
    sandbox: LiveServer,
    make_client: ClientFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="300.00")
    async with httpx.AsyncClient(base_url=sandbox.url, timeout=30) as http:
        found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
        assert found["vehicles"], "the built-in sandbox partner offers vehicles at every airport"
        assert {v["company"] for v in found["vehicles"]} == {"Sandbox Transfers Ltd"}
        assert {"SEDAN", "MINIVAN"} <= {v["type"] for v in found["vehicles"]}
        vehicle = found["vehicles"][0]
        created = (
            await http.post(BOOKING, json=booking_body(found["search_id"], vehicle["vehicle_id"]), headers=bearer(key))
        ).json()
        booking = created["booking"]
        assert booking["status"] == "PENDING_APPROVAL"
        price = Decimal(booking["price"]["total"])
        assert Decimal(str(vehicle["price"])) == price
        assert await balance_of(db, client_id) == Decimal("300.00") - price
        approved = await poll(http, key, booking["reservation_no"], "APPROVED")
        assert approved["driver"]["name"] and approved["driver"]["plate"]
        assert approved["meeting_point"]
        cancel = await http.delete(
            BOOKING, params={"reservation_no": booking["reservation_no"], "cancellation_id": 2}, headers=bearer(key)
        )
        assert cancel.json() == {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
        assert await balance_of(db, client_id) == Decimal("300.00")
        svc: Services = sandbox.app.state.services
        for _ in range(100):  # the embedded worker tells the partner through the outbox
            async with db.read() as conn:
                from sqlalchemy import select

                from transfers.db.tables import outbox

                rows = (
                    await conn.execute(
                        select(outbox.c.kind, outbox.c.status).where(
                            outbox.c.payload["reservation_no"].as_string() == booking["reservation_no"]
                        )
                    )
                ).all()
            if ("booking.update", "delivered") in {tuple(r) for r in rows}:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"cancellation never delivered: {rows}")
        assert svc.dispatcher is not None
