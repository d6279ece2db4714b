"""The sandbox partner's RIDE and NOSHOW rides (docs/rules/sandbox.md#ride) through the real reverse API,
on the compressed clock: the driver's waits move the injected clock (no sleeps), the service judges the
sandbox partner's reports on the same clock, and the client's webhook receives every event and position."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import update

from tests.ride.conftest import Ride
from tests.ride.test_client_events import receiver_for
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import partners
from transfers.deliveries import webhook_dispatcher
from transfers.sandbox_partner.reverse import ReverseApi
from transfers.sandbox_partner.ride import RideDriver
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher


@pytest.fixture
async def receivers() -> AsyncIterator[list[LiveServer]]:
    servers: list[LiveServer] = []
    yield servers
    await asyncio.gather(*(server.stop() for server in servers))


async def as_sandbox(db: Database, partner_id: int) -> None:
    async with db.write() as conn:
        await conn.execute(update(partners).where(partners.c.id == partner_id).values(is_sandbox=True))


async def driver_of(
    ride: Ride, service: LiveServer, svc: Services, *, deliver: WebhookDispatcher | None = None
) -> tuple[RideDriver, ReverseApi]:
    """The sandbox driver on the test's clock. With ``deliver`` (the webhook dispatcher), every wait first
    lets it deliver what is due, as the worker does between the driver's reports: a position is tried
    before the clock moves past its deadline (it is tried once and dropped when stale), whatever the
    machine's load."""
    reverse = ReverseApi(service.url, ride.partner_key, retry_delays=(), timeout_seconds=10)

    async def sleep(seconds: float) -> None:
        if deliver is not None:
            await deliver.run_once()
        ride.clock.advance(timedelta(seconds=seconds))
        await asyncio.sleep(0)

    details = {
        "from": {"type": "AIRPORT", "iata_code": "LHR"},
        "to": {"type": "POINT", "lat": 51.5074, "lng": -0.1278},
    }
    return RideDriver(reverse, ride.reservation_no, details, sleep, ride.clock.now), reverse


async def test_ride_plays_the_whole_ride_days_before_the_pickup(
    ride: Ride, service: LiveServer, db: Database, receivers: list[LiveServer]
) -> None:
    svc: Services = service.app.state.services
    ride.at(-timedelta(days=3))  # the compressed clock: the pickup may be days away
    await as_sandbox(db, ride.partner_id)
    hook = await receiver_for(receivers, ride.http, ride.client_key, ["*", "booking.driver_position"])
    dispatcher = webhook_dispatcher(svc)
    driver, reverse = await driver_of(ride, service, svc, deliver=dispatcher)
    try:
        await driver.ride()
        for _ in range(5):
            await dispatcher.run_once()
    finally:
        await reverse.aclose()
        await dispatcher.aclose()
    booking = await ride.booking()
    assert booking["status"] == "COMPLETED" and booking["ride"]["stage"] == "DROPPED_OFF"
    assert [e["type"] for e in booking["ride"]["events"]] == [
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
        "DRIVER_ARRIVED_AT_DROPOFF",
    ]
    types = [d.body["type"] for d in hook.received]
    assert types.count("booking.driver_event") == 4
    assert types.count("booking.driver_position") >= 2


async def test_noshow_reports_the_no_show_once_the_compressed_free_wait_is_over(
    ride: Ride, service: LiveServer, db: Database
) -> None:
    svc: Services = service.app.state.services
    ride.at(-timedelta(days=3))
    await as_sandbox(db, ride.partner_id)
    driver, reverse = await driver_of(ride, service, svc)
    try:
        await driver.no_show()
    finally:
        await reverse.aclose()
    booking = await ride.booking()
    assert booking["status"] == "COMPLETED" and booking["ride"]["stage"] == "CUSTOMER_NO_SHOW"
    arrived, no_show = booking["ride"]["events"][1:]
    assert (arrived["type"], no_show["type"]) == ("DRIVER_ARRIVED_AT_PICKUP", "CUSTOMER_NO_SHOW")


async def test_a_sandbox_no_show_before_the_compressed_free_wait_is_refused(ride: Ride, db: Database) -> None:
    ride.at(-timedelta(days=3))
    await as_sandbox(db, ride.partner_id)
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).status_code == 200
    ride.clock.advance(timedelta(seconds=30))
    early = await ride.event("CUSTOMER_NO_SHOW", ride.clock.now())
    assert early.status_code == 422 and "free_wait_until" in early.json()["message"]
    ride.clock.advance(timedelta(seconds=40))
    assert (await ride.event("CUSTOMER_NO_SHOW", ride.clock.now())).status_code == 200


async def test_another_partner_days_before_the_pickup_is_refused(ride: Ride) -> None:
    ride.at(-timedelta(days=3))
    early = await ride.event("DRIVER_DEPARTED_TO_PICKUP")
    assert early.status_code == 422 and "24 h before the pickup" in early.json()["message"]
    assert (await ride.positions(ride.position())).status_code == 422
