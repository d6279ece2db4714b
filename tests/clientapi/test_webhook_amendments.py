"""An amendment the partner settles is a change clients hear about (docs/rules/webhooks.md, docs/rules/cancellation.md):
``booking.amendment_applied`` with the amended booking, or ``booking.amendment_rejected``; the
request itself (still PENDING) sends nothing."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_amendments import amend, amended_calls, book, local
from tests.clientapi.test_webhook_delivery import Receivers, drain, receivers, subscribe  # noqa: F401 (fixture)
from tests.conftest import ClientFactory, PartnerFactory
from tests.servers import LiveServer
from transfers.deliveries import webhook_dispatcher


@pytest.mark.parametrize(
    ("answer", "event", "surname"),
    [("Success", "booking.amendment_applied", "Byron"), ("Error", "booking.amendment_rejected", "Lovelace")],
)
async def test_a_settled_amendment_is_an_event_in_sequence(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receivers: Receivers,  # noqa: F811
    answer: str,
    event: str,
    surname: str,
) -> None:
    partner, _, _ = await make_partner(amend_status=answer, **({"amend_message": "no"} if answer == "Error" else {}))
    _, key = await make_client()
    receiver = await receivers()
    await subscribe(http, key, receiver)
    booking = await book(http, key)
    requested = await amend(
        http, key, booking["reservation_no"], {"passenger": {"surname": "Byron"}, "pickup_datetime": local(12)}
    )
    assert requested.status_code == 202, requested.text
    assert len(await amended_calls(service, partner)) == 1
    dispatcher = webhook_dispatcher(service.app.state.services)
    try:
        await drain(dispatcher)
    finally:
        await dispatcher.aclose()
    got = sorted(receiver.of_type(), key=lambda d: d.body["data"]["sequence"])
    assert [d.body["type"] for d in got] == ["booking.created", "booking.status_changed", event]
    assert [d.body["data"]["sequence"] for d in got] == [1, 2, 3]
    last = got[-1].body["data"]["booking"]
    assert last["amendment"]["status"] == ("APPLIED" if answer == "Success" else "REJECTED")
    assert last["passenger"]["surname"] == surname
    assert all(d.signed_by == receiver.secrets for d in got)
