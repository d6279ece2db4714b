"""The SDK's wallet and webhook-endpoint calls against the real service, and ``verify_webhook`` /
``parse_event`` against real signed deliveries."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest

from tests.clientapi.test_webhook_delivery import (  # noqa: F401 (receivers: a fixture)
    Receivers,
    book,
    drain,
    receivers,
    subscribe,
)
from tests.conftest import ClientFactory, PartnerFactory
from tests.servers import LiveServer
from transfers.deliveries import webhook_dispatcher
from transfers.partners.signing import new_signing_secret, signature_headers
from transfers_sdk import (
    AsyncTransfersClient,
    BookingEvent,
    BookingStatus,
    InvalidRequest,
    PingEvent,
    WebhookVerificationError,
    parse_event,
    verify_webhook,
)


async def test_wallet_and_endpoint_management_through_the_sdk(
    service: LiveServer,
    make_client: ClientFactory,
    receivers: Receivers,  # noqa: F811
) -> None:
    _, key = await make_client(balance="12.34")
    receiver = await receivers()
    async with AsyncTransfersClient(service.url, key) as api:
        wallet = await api.get_wallet()
        assert (wallet.pay_type, wallet.currency, wallet.balance) == ("wallet", "EUR", Decimal("12.34"))
        entries = [e async for e in api.iter_wallet_entries(page_size=1)]
        assert [(e.kind, e.amount, e.balance_after) for e in entries] == [
            ("top_up", Decimal("12.34"), Decimal("12.34"))
        ]
        created = await api.create_webhook_endpoint(receiver.hook_url, ["booking.created"], description="sdk")
        assert created.secret and created.secret.startswith("whsec_") and created.events == ["booking.created"]
        receiver.secrets.append(created.secret)
        assert [e.id for e in await api.list_webhook_endpoints()] == [created.id]
        assert (await api.get_webhook_endpoint(created.id)).secret is None
        updated = await api.update_webhook_endpoint(created.id, events=["*"], description=None)
        assert updated.events == ["*"] and updated.description is None
        event_id = await api.test_webhook_endpoint(created.id)
        dispatcher = webhook_dispatcher(service.app.state.services)
        try:
            await drain(dispatcher, 1)
        finally:
            await dispatcher.aclose()
        [delivered] = (await api.list_webhook_deliveries(created.id)).deliveries
        assert (delivered.event_id, delivered.status, delivered.attempts) == (event_id, "delivered", 1)
        [ping] = receiver.received
        event = verify_webhook(ping.raw, ping.headers, created.secret)
        assert isinstance(event, PingEvent) and event.id == event_id and event.endpoint_id == created.id
        new_secret = await api.rotate_webhook_secret(created.id)
        assert new_secret != created.secret
        with pytest.raises(InvalidRequest) as refused:
            await api.create_webhook_endpoint("ftp://x.example", ["*"])
        assert refused.value.code == "INVALID_WEBHOOK_URL"
        await api.delete_webhook_endpoint(created.id)
        assert await api.list_webhook_endpoints() == []


async def test_verify_webhook_accepts_only_the_signed_bytes_in_time(
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receivers: Receivers,  # noqa: F811
) -> None:
    _, key = await make_client()
    await make_partner(airports=("FLR",), create_status="PENDING")
    receiver = await receivers()
    async with httpx.AsyncClient(base_url=service.url) as http:
        await subscribe(http, key, receiver, ["booking.created"])
        booking = await book(http, key)
    dispatcher = webhook_dispatcher(service.app.state.services)
    try:
        await drain(dispatcher, 2)
    finally:
        await dispatcher.aclose()
    [got] = receiver.received
    secret = receiver.secrets[0]
    event = verify_webhook(got.raw, got.headers, [new_signing_secret(), secret])  # any of several secrets
    assert isinstance(event, BookingEvent) and event.type == "booking.created" and event.sequence == 1
    assert event.booking.reservation_no == booking["reservation_no"]
    assert event.booking.status is BookingStatus.PENDING and event.previous_status is None
    assert parse_event(got.raw) == event
    with pytest.raises(WebhookVerificationError):
        verify_webhook(got.raw.replace(b"PENDING", b"APPROVED"), got.headers, secret)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(got.raw, got.headers, new_signing_secret())
    with pytest.raises(WebhookVerificationError):
        verify_webhook(got.raw, got.headers, secret, now=time.time() + 600)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(got.raw, {k: v for k, v in got.headers.items() if k != "webhook-signature"}, secret)
    forged = signature_headers(secret, got.raw, "evt_other")  # signed, but not for this event's id
    with pytest.raises(WebhookVerificationError):
        verify_webhook(got.raw, forged, secret)
