"""docs/rules/webhooks.md x 14: amendment outcomes reach the client's webhook endpoint as
``booking.amendment_applied`` / ``booking.amendment_rejected``, with the booking as of the event
(real receivers and a recording partner on loopback)."""

from __future__ import annotations

import httpx

from tests.clientapi.test_webhook_delivery import (
    BOOKING,
    Receivers,
    book,
    dispatcher,  # noqa: F401  (fixture)
    drain,
    receivers,  # noqa: F401  (fixture)
    subscribe,
    svc,  # noqa: F401  (fixture)
)
from tests.conftest import ClientFactory, PartnerFactory, bearer
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

EVENTS = ["booking.amendment_applied", "booking.amendment_rejected"]


async def settle(services: Services) -> None:
    """Deliver the AMENDED updates (the partner's answers settle the amendments)."""
    outbox = services.dispatcher
    assert outbox is not None
    for _ in range(5):
        await outbox.run_once(limit=200)


async def test_applied_rejected_and_cancelled_amendments_are_pushed(
    http: httpx.AsyncClient,
    svc: Services,  # noqa: F811
    dispatcher: WebhookDispatcher,  # noqa: F811
    receivers: Receivers,  # noqa: F811
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, _, _ = await make_partner(airports=("FLR",))
    _, key = await make_client()
    receiver = await receivers()
    await subscribe(http, key, receiver, EVENTS)
    applied = await book(http, key)
    response = await http.patch(
        BOOKING,
        params={"reservation_no": applied["reservation_no"]},
        json={"passenger": {"surname": "Byron"}},
        headers=bearer(key),
    )
    assert response.status_code == 202
    await settle(svc)
    partner.amend_status, partner.amend_message = "Error", "No driver free at that hour"
    rejected = await book(http, key)
    await http.patch(
        BOOKING,
        params={"reservation_no": rejected["reservation_no"]},
        json={"travel_details": {"flight_number": "AZ1"}},
        headers=bearer(key),
    )
    await settle(svc)
    overtaken = await book(http, key)
    await http.patch(
        BOOKING,
        params={"reservation_no": overtaken["reservation_no"]},
        json={"passenger": {"name": "Never"}},
        headers=bearer(key),
    )
    await http.delete(
        BOOKING, params={"reservation_no": overtaken["reservation_no"], "cancellation_id": 1}, headers=bearer(key)
    )
    await drain(dispatcher)
    got = {(d.body["data"]["booking"]["reservation_no"], d.body["type"]): d.body for d in receiver.received}
    assert set(got) == {
        (applied["reservation_no"], "booking.amendment_applied"),
        (rejected["reservation_no"], "booking.amendment_rejected"),
        (overtaken["reservation_no"], "booking.amendment_rejected"),
    }
    first = got[(applied["reservation_no"], "booking.amendment_applied")]["data"]["booking"]
    assert first["amendment"]["status"] == "APPLIED" and first["passenger"]["surname"] == "Byron"
    second = got[(rejected["reservation_no"], "booking.amendment_rejected")]["data"]["booking"]
    assert second["amendment"]["message"] == "No driver free at that hour" and second["flight_number"] == "BA117"
    third = got[(overtaken["reservation_no"], "booking.amendment_rejected")]["data"]["booking"]
    assert third["status"] == "CANCELLED" and third["cancellation"]["by"] == "client"
    assert all(d.signed_by == receiver.secrets for d in receiver.received)
