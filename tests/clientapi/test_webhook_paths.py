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
    return sorted(
        ((b["type"], b["data"]["booking"]["status"], b["data"]["sequence"]) for b in got), key=lambda item: item[2]
    )


async def test_the_expiry_job_and_the_info_sync_emit_their_events(
    http: httpx.AsyncClient,
    svc: Services,  # noqa: F811
    dispatcher: WebhookDispatcher,  # noqa: F811
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receivers: Receivers,  # noqa: F811
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner(airports=("FLR",), create_status="PENDING")
    receiver = await receivers()
    await subscribe(http, key, receiver)
    # The expiry job: a booking whose partner is down stays PENDING, then FAILS (refunded) at its deadline.
    found = await http.post(
        SEARCH,
        headers=bearer(key),
        json=search_body(
            pickup_location={"type": "AIRPORT", "iata_code": "FLR"},
            pickup_datetime=future_local(tz=ROME),
            dropoff_location={"type": "POINT", "lat": 43.7696, "lng": 11.2558, "name": "Duomo"},
        ),
    )
    partner.mode, partner.status_code = "status", 503
    created = await http.post(BOOKING, json=booking_body(found.json()["search_id"], "1"), headers=bearer(key))
    failed = created.json()["booking"]
    assert failed["status"] == "PENDING"
    clock.advance(timedelta(hours=25))
    await scheduled.run_all(svc)
    await drain(dispatcher)
    assert story(receiver, failed["reservation_no"]) == [
        ("booking.created", "PENDING", 1),
        ("booking.status_changed", "FAILED", 2),
    ]
    # The info sync: a PENDING_APPROVAL booking the partner reports APPROVED (with its driver).
    partner.mode, partner.info_status = "ok", "APPROVED"
    synced = await book(http, key)
    assert synced["status"] == "PENDING_APPROVAL"
    clock.advance(timedelta(minutes=31))
    await scheduled.run_all(svc)
    await drain(dispatcher)
    assert story(receiver, synced["reservation_no"]) == [
        ("booking.created", "PENDING", 1),
        ("booking.status_changed", "PENDING_APPROVAL", 2),
        ("booking.status_changed", "APPROVED", 3),
        ("booking.driver_updated", "APPROVED", 4),
    ]


async def test_events_past_the_retention_go_once_nothing_is_pending(
    http: httpx.AsyncClient,
    svc: Services,  # noqa: F811
    dispatcher: WebhookDispatcher,  # noqa: F811
    make_client: ClientFactory,
    receivers: Receivers,  # noqa: F811
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    fine, down = await receivers(), await receivers(status=500)
    kept_endpoint = await subscribe(http, key, fine)
    failing_endpoint = await subscribe(http, key, down)
    hooks = "/api/v1/booking-api/webhook-endpoints"
    await http.post(f"{hooks}/{kept_endpoint}/test", headers=bearer(key))
    await drain(dispatcher, 1)
    clock.advance(timedelta(days=svc.settings.webhook_retention_days, hours=1))
    await http.post(f"{hooks}/{failing_endpoint}/test", headers=bearer(key))  # pending, young
    await drain(dispatcher, 1)
    pruned = [await scheduled.prune_client_events(svc) for _ in range(50)]  # other tests' events are old too
    assert pruned[0] >= 1 and pruned[-1] == 0
    assert (await http.get(f"{hooks}/{kept_endpoint}/deliveries", headers=bearer(key))).json()["data"] == []
    [pending] = (await http.get(f"{hooks}/{failing_endpoint}/deliveries", headers=bearer(key))).json()["data"]
    assert pending["status"] == "pending"
    clock.advance(timedelta(days=svc.settings.webhook_retention_days, hours=1))
    for _ in range(50):  # still pending (its endpoint keeps failing): kept
        await scheduled.prune_client_events(svc)
    assert len((await http.get(f"{hooks}/{failing_endpoint}/deliveries", headers=bearer(key))).json()["data"]) == 1
    await http.delete(f"{hooks}/{failing_endpoint}", headers=bearer(key))
