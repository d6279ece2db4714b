"""SIGKILL of the API during a burst of driver events ("Bad input and faults"): every event
the API answered Success is there after the restart, and the events cut off by the kill, sent again
(repeats are harmless), are recorded exactly once each."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.process.conftest import FreshDatabase, Partners, Proc, Processes, eventually, report
from transfers.auth.keys import issue_key
from transfers.clients import repository as clients_repo
from transfers.db.tables import bookings, ride_events

pytestmark = [pytest.mark.slow]

BOOKINGS = 20
TYPES = (
    "DRIVER_DEPARTED_TO_PICKUP",
    "DRIVER_ARRIVED_AT_PICKUP",
    "DRIVER_DEPARTED_TO_DROPOFF",
    "DRIVER_ARRIVED_AT_DROPOFF",
)
CONCURRENCY = 10
KILL_AT = int(BOOKINGS * len(TYPES) * 0.4)


async def test_sigkill_during_a_burst_of_driver_events_keeps_every_answered_event(
    fresh_db: FreshDatabase, procs: Processes, partners: Partners
) -> None:
    _, partner_id = await partners.add(fresh_db, airports=("LHR",), name="Ride partner")
    issued = issue_key("pk")
    async with fresh_db.db.write() as conn:
        await clients_repo.insert_api_key(conn, issued, datetime.now(UTC), partner_id=partner_id)
    env = procs.env(fresh_db.url, min_lead_time_seconds=0, idempotency_lock_seconds=3, outbox_lease_seconds=3)
    api = await procs.serve("api", env)
    _, client_key = await fresh_db.make_client(balance="100000.00")
    pickup = (datetime.now(UTC) + timedelta(hours=1)).astimezone(ZoneInfo("Europe/London"))
    answered = 0
    up = asyncio.Event()
    up.set()
    async with httpx.AsyncClient(base_url=api.url, timeout=30) as http:
        found = await http.post(
            "/api/v1/booking-api/search",
            json=search_body(pickup_datetime=pickup.strftime("%Y-%m-%d %H:%M")),
            headers=bearer(client_key),
        )
        assert found.status_code == 200, found.text
        search = found.json()
        numbers = []
        for _ in range(BOOKINGS):
            created = await http.post(
                "/api/v1/booking-api/booking",
                json=booking_body(search["search_id"], search["vehicles"][0]["vehicle_id"]),
                headers=bearer(client_key),
            )
            assert created.status_code == 200, created.text
            number = created.json()["booking"]["reservation_no"]
            approve = {
                "reservation_no": number,
                "status": "APPROVED",
                "driver_info": {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"},
            }
            approved = await http.put("/api/v1/reverse/booking/update", json=approve, headers=bearer(issued.key))
            assert approved.status_code == 200, approved.text
            numbers.append(number)
        events = [(no, kind) for kind in TYPES for no in numbers]
        queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        for item in events:
            queue.put_nowait(item)
        succeeded: set[tuple[str, str]] = set()
        unanswered: list[tuple[str, str]] = []
        restarted: list[Proc] = []
        base = [api.url]

        async def send(client: httpx.AsyncClient, item: tuple[str, str]) -> dict[str, Any] | None:
            body = {"reservation_no": item[0], "type": item[1], "occurred_at": datetime.now(UTC).isoformat()}
            try:
                answer = await client.post("/api/v1/reverse/booking/events", json=body, headers=bearer(issued.key))
            except httpx.TransportError:
                return None
            assert answer.status_code == 200, answer.text
            result: dict[str, Any] = answer.json()
            return result

        async def lane() -> None:
            nonlocal answered
            async with httpx.AsyncClient(base_url=base[0], timeout=30) as client:
                while True:
                    try:
                        item = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        return
                    await asyncio.wait_for(up.wait(), timeout=60)
                    result = await send(client, item)
                    if result is None:
                        unanswered.append(item)
                        continue
                    assert result["status"] == "Success"
                    succeeded.add(item)
                    answered += 1

        async def killer() -> None:
            await eventually(lambda: answered >= KILL_AT, timeout=120, interval=0.01, what="answers before the kill")
            up.clear()
            await procs.kill(api)
            restarted.append(await procs.serve("api-restarted", env, port=api.port))
            up.set()

        await asyncio.gather(*(lane() for _ in range(CONCURRENCY)), killer())
        # Every Success before the kill is stored: read it from the database, not from the API.
        async with fresh_db.db.read() as conn:
            stored = {
                (r.reservation_no, r.type)
                for r in await conn.execute(
                    select(bookings.c.reservation_no, ride_events.c.type).join(
                        bookings, bookings.c.id == ride_events.c.booking_id
                    )
                )
            }
        assert succeeded <= stored, sorted(succeeded - stored)[:5]
        # The cut-off ones, sent again to the restarted API: recorded once, repeats harmless.
        async with httpx.AsyncClient(base_url=api.url, timeout=30) as client:
            for item in unanswered:
                result = await send(client, item)
                assert result is not None and result["status"] == "Success"
            for number in numbers:
                booking = (
                    await client.get(
                        "/api/v1/booking-api/booking", params={"reservation_no": number}, headers=bearer(client_key)
                    )
                ).json()
                assert booking["status"] == "COMPLETED", booking["status"]
                # by occurred_at: an event sent again after the restart happened later than the ones that got through
                assert sorted(e["type"] for e in booking["ride"]["events"]) == sorted(TYPES)
        async with fresh_db.db.read() as conn:
            rows = (await conn.execute(select(ride_events.c.booking_id, ride_events.c.type))).all()
        assert len(rows) == len(events) == len(set(rows))
    report(
        f"ride events SIGKILL: {len(events)} events, {len(succeeded)} answered Success before/after the kill, "
        f"{len(unanswered)} cut off and sent again; every answered one stored, each recorded once"
    )
