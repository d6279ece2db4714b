"""Events come from every path that changes a booking, not only the client's requests: the
worker's expiry job (PENDING -> FAILED, refunded) and the info sync (PENDING_APPROVAL -> APPROVED
with the driver), each with the next sequence."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import httpx

from tests.clientapi.test_webhook_delivery import (  # noqa: F401 (fixtures)
    Receivers,
    book,
    dispatcher,
    drain,
    receivers,
    subscribe,
    svc,
)
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.webhook_receiver import Receiver
from transfers.clock import ShiftedClock
from transfers.jobs import scheduled
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
ROME = ZoneInfo("Europe/Rome")


def story(receiver: Receiver, reservation_no: str) -> list[tuple[str, str, int]]:
    got = [d.body for d in receiver.of_type() if d.body["data"]["booking"]["reservation_no"] == reservation_no]
    return sorted(((b["type"], b["data"]["booking"]["status"], b["data"]["sequence"]) for b in got),
                  key=lambda item: item[2])


async def test_the_expiry_job_and_the_info_sync_emit_their_events(
    http: httpx.AsyncClient, svc: Services, dispatcher: WebhookDispatcher,  # noqa: F811
    make_client: ClientFactory, make_partner: PartnerFactory, receivers: Receivers, clock: ShiftedClock,  # noqa: F811
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner(airports=("FLR",), create_status="PENDING")
    receiver = await receivers()
    await subscribe(http, key, receiver)
    # The expiry job: a booking whose partner is down stays PENDING, then FAILS (refunded) at its deadline.
    found = await http.post(SEARCH, headers=bearer(key), json=search_body(
        pickup_location={"type": "AIRPORT", "iata_code": "FLR"}, pickup_datetime=future_local(tz=ROME),
        dropoff_location={"type": "POINT", "lat": 43.7696, "lng": 11.2558, "name": "Duomo"}))
    partner.mode, partner.status_code = "status", 503
    created = await http.post(BOOKING, json=booking_body(found.json()["search_id"], "1"), headers=bearer(key))
    failed = created.json()["booking"]
    assert failed["status"] == "PENDING"
    clock.advance(timedelta(hours=25))
    await scheduled.run_all(svc)
    await drain(dispatcher)
    assert story(receiver, failed["reservation_no"]) == [("booking.created", "PENDING", 1),
                                                         ("booking.status_changed", "FAILED", 2)]
    # The info sync: a PENDING_APPROVAL booking the partner reports APPROVED (with its driver).
    partner.mode, partner.info_status = "ok", "APPROVED"
    synced = await book(http, key)
    assert synced["status"] == "PENDING_APPROVAL"
    clock.advance(timedelta(minutes=31))
    await scheduled.run_all(svc)
    await drain(dispatcher)
    assert story(receiver, synced["reservation_no"]) == [
        ("booking.created", "PENDING", 1), ("booking.status_changed", "PENDING_APPROVAL", 2),
        ("booking.status_changed", "APPROVED", 3), ("booking.driver_updated", "APPROVED", 4)]
