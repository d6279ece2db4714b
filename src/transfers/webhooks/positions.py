"""The client's ``booking.driver_position`` (docs/rules/ride.md#client-events) as a delivery kind of
``webhook_deliveries``: the driver's latest position, pushed to the client's endpoints that name that
type (never through "*").

A position is news for seconds, so it is not a client event (no row in ``client_events``, no
``sequence``, no retries): the positions use case (``ride/service.py``) writes one delivery per
endpoint naming the type, with its own webhook-id and body (``client_events/positions_repository``),
coalesced (a newer position replaces a pending older one) and due at most every 15 s per booking.
The kind is registered with ``once=True``: tried once, dropped unsent when stale, claimed ahead of
every retry. It is sent through the table's one ``WebhookSender``, signed like every webhook, over
kept-alive connections.
"""

from __future__ import annotations

from transfers.client_events.positions_repository import DRIVER_POSITION_KIND
from transfers.db.engine import Database
from transfers.delivery.kinds import DeliveryKind, Judged
from transfers.delivery.policy import Verdict
from transfers.delivery.transport import CallResult, Receiver
from transfers.webhooks.kind import record_fast
from transfers.webhooks.models import WebhookDelivery
from transfers.webhooks.sender import WebhookSender


def judge(result: CallResult) -> Judged:
    """Delivered when the endpoint took it; anything else ends it too (tried once: a stale position
    is worth nothing, so it is never retried, and a 410 does not disable the endpoint)."""
    return Judged(Verdict.DONE if result.ok else Verdict.RETRY, result.http_status, result.error, result)


def driver_position_kind(db: Database, sender: WebhookSender) -> DeliveryKind[WebhookDelivery]:
    """The ``client.driver_position`` kind (registered by ``transfers/deliveries.py``)."""
    receiver: Receiver[WebhookDelivery] = Receiver(sender)

    async def route(message: WebhookDelivery, hint: object) -> Receiver[WebhookDelivery]:
        return receiver

    return DeliveryKind(DRIVER_POSITION_KIND, route, judge, once=True, fast_finish=record_fast(db, once=True))
