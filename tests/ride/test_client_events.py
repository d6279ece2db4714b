"""The client's ride events at a real webhook receiver (docs/rules/ride.md#client-events):
``booking.driver_event`` in the booking's ``sequence`` like every event, ``booking.driver_position``
only to endpoints naming it, coalesced, at most every 15 s, tried once, dropped when stale; both
delivered by the webhook dispatcher through its one sender (kept-alive connections)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import bearer
from tests.ride.conftest import Ride
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.db.engine import Database
from transfers.db.tables import bookings, webhook_deliveries
from transfers.deliveries import webhook_dispatcher
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher
from transfers_sdk import BookingEvent, DriverPositionEvent, parse_event

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
POSITION_KIND = "client.driver_position"


@pytest.fixture
def svc(service: LiveServer) -> Services:
    found: Services = service.app.state.services
    return found


@pytest.fixture
async def receivers() -> AsyncIterator[list[LiveServer]]:
    servers: list[LiveServer] = []
    yield servers
    await asyncio.gather(*(server.stop() for server in servers))


async def receiver_for(
    servers: list[LiveServer], http: httpx.AsyncClient, key: str, events: list[str], **options: Any
) -> Receiver:
    receiver = Receiver(**options)
    server = await LiveServer(receiver.app()).start()
    servers.append(server)
    receiver.url = server.url
    created = await http.post(ENDPOINTS, json={"url": receiver.hook_url, "events": events}, headers=bearer(key))
    assert created.status_code == 201, created.text
    receiver.secrets.append(created.json()["secret"])
    return receiver


@pytest.fixture
async def hooks(svc: Services) -> AsyncIterator[WebhookDispatcher]:
    """The worker's webhook dispatcher: client events and driver positions, one sender."""
    dispatcher = webhook_dispatcher(svc)
    try:
        yield dispatcher
    finally:
        await dispatcher.aclose()


async def position_messages(db: Database, reservation_no: str) -> list[tuple[str, str | None]]:
    D = webhook_deliveries.c
    async with db.read() as conn:
        rows = await conn.execute(
            select(D.status, D.last_error)
            .join(bookings, bookings.c.id == D.booking_id)
            .where(bookings.c.reservation_no == reservation_no, D.kind == POSITION_KIND)
            .order_by(D.id)
        )
        return [(r.status, r.last_error) for r in rows]


async def test_driver_events_arrive_in_sequence_and_positions_never_through_every_event(
    ride: Ride, svc: Services, receivers: list[LiveServer], db: Database
) -> None:
    every = await receiver_for(receivers, ride.http, ride.client_key, ["*"])
    dispatcher = webhook_dispatcher(svc)
    try:
        await dispatcher.run_once()  # whatever the booking's creation and approval wrote before the endpoint
        every.received.clear()
        assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP", lat=51.47, lng=-0.45)).status_code == 200
        assert (await ride.positions(ride.position())).status_code == 200
        ride.at(timedelta(minutes=1))
        assert (await ride.event("DRIVER_ARRIVED_AT_DROPOFF")).status_code == 200
        for _ in range(5):
            await dispatcher.run_once()
    finally:
        await dispatcher.aclose()
    mine = [d for d in every.received if d.body["data"].get("booking", {}).get("reservation_no") == ride.reservation_no]
    assert [d.body["type"] for d in mine] == [
        "booking.driver_event",
        "booking.driver_event",
        "booking.status_changed",
    ]
    assert all(d.signed_by == every.secrets for d in mine)
    sequences = [d.body["data"]["sequence"] for d in mine]
    assert sequences == sorted(sequences) and len(set(sequences)) == 3
    first = mine[0].body["data"]
    assert first["event"]["type"] == "DRIVER_DEPARTED_TO_PICKUP" and first["event"]["lat"] == 51.47
    assert first["booking"]["ride"]["stage"] == "EN_ROUTE_TO_PICKUP"
    assert mine[1].body["data"]["booking"]["ride"]["stage"] == "DROPPED_OFF"
    typed = parse_event(mine[0].raw)
    assert isinstance(typed, BookingEvent) and typed.ride_event is not None
    assert typed.ride_event.type == "DRIVER_DEPARTED_TO_PICKUP" and typed.booking.ride is not None
    # "*" never includes positions: nobody named the type, so none was even written.
    assert not any(d.body["type"] == "booking.driver_position" for d in every.received)
    assert await position_messages(db, ride.reservation_no) == []


async def test_positions_reach_only_endpoints_naming_them_coalesced_every_15_s(
    ride: Ride, svc: Services, receivers: list[LiveServer], db: Database, hooks: WebhookDispatcher
) -> None:
    named = await receiver_for(receivers, ride.http, ride.client_key, ["booking.driver_position"])
    other = await receiver_for(receivers, ride.http, ride.client_key, ["booking.driver_event", "booking.created"])
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).status_code == 200
    for i in range(5):  # a burst: one message, the latest position
        assert (await ride.positions(ride.position(51.4 + i / 100, -0.45, ago=5 - i))).status_code == 200
    statuses = await position_messages(db, ride.reservation_no)
    assert [s for s, _ in statuses].count("pending") == 1 and len(statuses) == 5
    await hooks.run_once()
    (first,) = [d for d in named.received if d.body["type"] == "booking.driver_position"]
    assert first.signed_by == named.secrets
    assert first.body["data"]["reservation_no"] == ride.reservation_no
    assert first.body["data"]["position"]["lat"] == pytest.approx(51.44)
    assert "sequence" not in first.body["data"]
    typed = parse_event(first.raw)
    assert isinstance(typed, DriverPositionEvent) and typed.position.lat == pytest.approx(51.44)
    assert not any(d.body["type"] == "booking.driver_position" for d in other.received)

    # Within 15 s of the last one: due only when the 15 s are up.
    ride.clock.advance(timedelta(seconds=5))
    assert (await ride.positions(ride.position(51.5, -0.4))).status_code == 200
    await hooks.run_once()
    assert len([d for d in named.received if d.body["type"] == "booking.driver_position"]) == 1
    ride.clock.advance(timedelta(seconds=10))
    await hooks.run_once()
    pushed = [d for d in named.received if d.body["type"] == "booking.driver_position"]
    assert len(pushed) == 2 and pushed[1].body["data"]["position"]["lat"] == 51.5
    assert pushed[0].headers["webhook-id"] != pushed[1].headers["webhook-id"]
    assert pushed[0].peer is not None and pushed[0].peer == pushed[1].peer  # one sender, the connection kept alive


async def test_a_position_is_tried_once_and_a_stale_one_is_dropped(
    ride: Ride, svc: Services, receivers: list[LiveServer], db: Database, hooks: WebhookDispatcher
) -> None:
    failing = await receiver_for(receivers, ride.http, ride.client_key, ["booking.driver_position"], status=500)
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).status_code == 200
    assert (await ride.positions(ride.position())).status_code == 200
    await hooks.run_once()
    assert len(failing.received) == 1
    ride.clock.advance(timedelta(minutes=10))
    await hooks.run_once()
    assert len(failing.received) == 1  # never retried
    assert [s for s, _ in await position_messages(db, ride.reservation_no)] == ["failed"]

    # A position claimed after its deadline is dropped unsent.
    assert (await ride.positions(ride.position())).status_code == 200
    ride.clock.advance(timedelta(seconds=40))
    await hooks.run_once()
    assert len(failing.received) == 1
    (_, stale) = await position_messages(db, ride.reservation_no)
    assert stale[0] == "failed" and "stale" in (stale[1] or "")


async def test_sent_position_pushes_go_a_day_later(
    ride: Ride, svc: Services, receivers: list[LiveServer], db: Database, hooks: WebhookDispatcher
) -> None:
    from transfers.jobs import scheduled

    await receiver_for(receivers, ride.http, ride.client_key, ["booking.driver_position"])
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).status_code == 200
    assert (await ride.positions(ride.position())).status_code == 200
    await hooks.run_once()
    assert [s for s, _ in await position_messages(db, ride.reservation_no)] == ["delivered"]
    ride.clock.advance(timedelta(hours=23))
    await scheduled.prune_ride_positions(svc)
    assert len(await position_messages(db, ride.reservation_no)) == 1
    ride.clock.advance(timedelta(hours=2))
    await scheduled.prune_ride_positions(svc)
    assert await position_messages(db, ride.reservation_no) == []
