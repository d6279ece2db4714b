"""The client's ``booking.driver_position`` (docs/rules/ride.md#client-events): the driver's latest
position, pushed to the client's endpoints that name that type (never through "*").

A position is news for seconds, so it is not a client event (no row in ``client_events``, no
``sequence``, no retries): the positions use case (``ride/service.py``) writes an ``outbox``
message of the ``client.driver_position`` kind, registered with ``once=True``: coalesced (a newer
position replaces a pending older one, ``delivery.repository.enqueue_latest``), due at most every
15 s per booking, tried once, dropped unsent when stale, claimed ahead of every retry. The delivery
POSTs it, signed like every webhook, to each endpoint naming the type at the time it is sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from transfers.client_events.events import EventType
from transfers.delivery.kinds import DeliveryKind, Judged
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import Verdict
from transfers.delivery.transport import CallResult, Receiver
from transfers.ride.service import DRIVER_POSITION_KIND
from transfers.services import Services
from transfers.webhooks import repository as repo
from transfers.webhooks.models import SigningTarget
from transfers.webhooks.sender import WebhookSender

POSITION_EVENT = EventType.BOOKING_DRIVER_POSITION.value


def position_body(message: OutboxMessage) -> bytes:
    """The bytes every endpoint gets: ``{"id", "type", "created_at", "data": {"reservation_no", "position"}}``."""
    payload = message.payload
    data = {"reservation_no": payload["reservation_no"], "position": payload["position"]}
    return orjson.dumps(
        {"id": message.webhook_id, "type": POSITION_EVENT, "created_at": message.created_at.isoformat(), "data": data}
    )


class PositionPush:
    """The kind's ``Transport``: one signed POST to each endpoint (``target``), side by side, through
    a sender opened for this message and closed after it (a push every 15 s per ride at most)."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc

    async def send(self, kind: DeliveryKind, message: Any, *, timeout: float, target: Any) -> CallResult:
        endpoints: list[SigningTarget] = target
        if not endpoints:
            return CallResult("ok", None, None, "no endpoint names booking.driver_position any more", 0.0)
        settings = self.svc.settings
        sender = WebhookSender(
            allow_private=settings.private_partner_urls_allowed,
            per_host=settings.webhook_per_endpoint * 2,
            box=self.svc.box,
            clock=self.svc.clock,
        )
        body = position_body(message)
        try:
            results = await asyncio.gather(
                *(
                    sender.signed_post(
                        ep.url,
                        body,
                        message.webhook_id,
                        secret_enc=ep.secret_enc,
                        old_secret_enc=ep.old_secret_enc,
                        old_secret_until=ep.old_secret_until,
                        timeout=min(timeout, settings.webhook_timeout_seconds),
                    )
                    for ep in endpoints
                )
            )
        finally:
            await sender.aclose()
        failed = [r for r in results if not r.ok]
        slowest = max(r.duration_ms for r in results)
        if not failed:
            return CallResult("ok", results[0].http_status, None, None, slowest)
        first = failed[0]
        return CallResult(
            first.outcome, first.http_status, None, f"{len(failed)} of {len(results)} endpoints: {first.error}", slowest
        )


def judge(kind: DeliveryKind, result: CallResult) -> Judged:
    """Delivered when every endpoint took it; anything else ends it too (tried once: a stale
    position is worth nothing, so it is never retried)."""
    return Judged(Verdict.DONE if result.ok else Verdict.RETRY, result.http_status, result.error, result)


def driver_position_kind(svc: Services) -> DeliveryKind:
    transport = PositionPush(svc)

    async def route(message: OutboxMessage, hint: Any) -> Receiver:
        async with svc.db.read() as conn:
            endpoints = await repo.endpoints_naming(conn, message.payload["client_id"], POSITION_EVENT)
        return Receiver(transport, target=endpoints)

    return DeliveryKind(DRIVER_POSITION_KIND, route, judge, once=True)
