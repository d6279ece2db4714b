"""Each leg of a return trip tells the client about itself (docs/rules/return-trips.md#legs): client events to a
real receiver on loopback, one ``booking.created`` per leg, and a leg declined by its partner or cancelled
by the client sends its own ``booking.status_changed`` while the other leg sends nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.deliveries import webhook_dispatcher
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    server = await LiveServer(made.app()).start()
    made.url = server.url
    yield made
    await server.stop()


@pytest.fixture
async def dispatcher(service: LiveServer) -> AsyncIterator[WebhookDispatcher]:
    svc: Services = service.app.state.services
    made = webhook_dispatcher(svc)
    yield made
    await made.aclose()


def _events(receiver: Receiver) -> list[tuple[str, str, str]]:
    """(type, reservation_no, status) of every booking event received, in order."""
    return [
        (d.body["type"], d.body["data"]["booking"]["reservation_no"], d.body["data"]["booking"]["status"])
        for d in receiver.of_type("booking.")
    ]


async def _deliver_all(dispatcher: WebhookDispatcher) -> None:
    for _ in range(20):  # bounded: each pass sends what is due
        if not await dispatcher.run_once():
            return


async def test_each_leg_has_its_own_events(
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    dispatcher: WebhookDispatcher,
) -> None:
    _, key = await make_client(balance="500.00")
    await make_partner(airports=("MAN",), decline_leg=2)
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        created = await http.post(ENDPOINTS, json={"url": receiver.hook_url, "events": ["*"]}, headers=bearer(key))
        assert created.status_code == 201, created.text
        receiver.secrets.append(created.json()["secret"])
        body = search_body(
            pickup_location={"type": "AIRPORT", "iata_code": "MAN"},
            dropoff_location={"type": "POINT", "lat": 53.4808, "lng": -2.2426, "name": "Manchester"},
            return_datetime=future_local(days=14, hour=19, minute=0),
        )
        found = (await http.post("/api/v1/booking-api/search", json=body, headers=bearer(key))).json()
        pair = (
            await http.post(
                "/api/v1/booking-api/booking",
                json=booking_body(found["search_id"], return_vehicle_id=found["return_vehicles"][0]["vehicle_id"]),
                headers=bearer(key),
            )
        ).json()
        out, back = pair["booking"]["reservation_no"], pair["return_booking"]["reservation_no"]
        assert pair["return_booking"]["status"] == "DECLINED"
        await _deliver_all(dispatcher)
        events = _events(receiver)
        assert ("booking.created", out, "PENDING") in events and ("booking.created", back, "PENDING") in events
        assert ("booking.status_changed", back, "DECLINED") in events
        assert ("booking.status_changed", out, "PENDING_APPROVAL") in events
        assert not any(r == out and s in ("DECLINED", "CANCELLED") for _, r, s in events)
        assert all(d.signed_by for d in receiver.received)
        # the client cancels the way out: its own event, the declined way back untouched
        before = len(receiver.received)
        cancelled = await http.delete(
            "/api/v1/booking-api/booking", params={"reservation_no": out, "cancellation_id": 1}, headers=bearer(key)
        )
        assert cancelled.status_code == 200, cancelled.text
        await _deliver_all(dispatcher)
        later = _events(receiver)[before:]
        assert [(t, r, s) for t, r, s in later if t == "booking.status_changed"] == [
            ("booking.status_changed", out, "CANCELLED")
        ]
        got = (
            await http.get("/api/v1/booking-api/booking", params={"reservation_no": back}, headers=bearer(key))
        ).json()
        assert got["status"] == "DECLINED" and got["trip"]["other_reservation_no"] == out
