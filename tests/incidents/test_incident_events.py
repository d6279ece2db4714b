"""``booking.incident_opened`` / ``booking.incident_resolved`` (docs/rules/incidents.md#client-events) delivered
through the one delivery engine to a real receiver, signed, in sequence with the status change an
incident causes; and the SDK reading them (verify_webhook) and calling the incident API."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.incidents.helpers import approved_booking, at, report
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.deliveries import webhook_dispatcher
from transfers.incidents import service as incidents
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher
from transfers_sdk import AsyncTransfersClient, Incident, InvalidRequest
from transfers_sdk.webhooks import BookingEvent, verify_webhook

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


async def delivered(dispatcher: WebhookDispatcher, receiver: Receiver, count: int) -> None:
    for _ in range(200):  # bounded: each round fans out and sends what is due
        await dispatcher.run_once()
        if len(receiver.received) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{len(receiver.received)} of {count} deliveries arrived")


async def test_a_driver_no_show_tells_opened_refunded_and_resolved_in_sequence(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    dispatcher: WebhookDispatcher,
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    created = await http.post(
        ENDPOINTS, json={"url": receiver.hook_url, "events": ["*"]}, headers={"Authorization": f"Bearer {key}"}
    )
    assert created.status_code == 201, created.text
    secret = created.json()["secret"]
    receiver.secrets.append(secret)
    at(clock, row["pickup_at"], timedelta(minutes=30))
    answer = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert answer.status_code == 201
    await delivered(dispatcher, receiver, 3)
    got = sorted(receiver.received, key=lambda d: d.body["data"]["sequence"])
    assert [d.body["type"] for d in got] == [
        "booking.incident_opened",
        "booking.status_changed",
        "booking.incident_resolved",
    ]
    assert all(d.signed_by == [secret] for d in got)
    sequences = [d.body["data"]["sequence"] for d in got]
    assert sequences == list(range(sequences[0], sequences[0] + 3))
    opened, changed, resolved = (d.body["data"] for d in got)
    assert set(opened) == {"booking", "incident", "sequence"}
    assert opened["incident"]["status"] == "OPEN" and opened["booking"]["status"] == "APPROVED"
    assert changed["previous_status"] == "APPROVED" and changed["booking"]["status"] == "REFUNDED"
    assert resolved["incident"] == answer.json()
    assert resolved["booking"]["status"] == "REFUNDED"
    event = verify_webhook(
        got[2].raw, got[2].headers, secret, now=clock.now().timestamp()
    )  # the shifted clock signed it
    assert isinstance(event, BookingEvent) and isinstance(event.incident, Incident)
    assert event.incident.resolution is not None and str(event.incident.resolution.refund) == "56.05"


async def test_an_operators_resolution_is_told_and_the_sdk_reads_incidents(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    dispatcher: WebhookDispatcher,
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    created = await http.post(
        ENDPOINTS,
        json={"url": receiver.hook_url, "events": ["booking.incident_resolved"]},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert created.status_code == 201, created.text
    receiver.secrets.append(created.json()["secret"])
    at(clock, row["pickup_at"], timedelta(hours=3))
    async with AsyncTransfersClient(service.url, key) as api:
        late = await api.report_incident(reservation_no, "DRIVER_LATE", "40 minutes late")
        assert (late.status, late.resolution) == ("OPEN", None)
        with pytest.raises(InvalidRequest) as refused:
            await api.report_incident(reservation_no, "DRIVER_LATE", "again")
        assert refused.value.code == "INCIDENT_EXISTS" and refused.value.http_status == 409
        await incidents.resolve(db, clock, late.id, responsible="partner", refund="15.00", note="Late", actor="op")
        listed = await api.list_incidents(reservation_no)
    assert [(i.id, i.status) for i in listed] == [(late.id, "RESOLVED")]
    assert listed[0].resolution is not None and str(listed[0].resolution.refund) == "15.00"
    await delivered(dispatcher, receiver, 1)
    assert [d.body["type"] for d in receiver.received] == ["booking.incident_resolved"]
    assert receiver.received[0].body["data"]["incident"]["resolution"]["by"] == "op"
