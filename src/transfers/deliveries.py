"""The application's deliveries: every kind the delivery engine (``transfers/delivery/``) carries
is registered here, in ``registry``, and every engine is built here from that one registry
(``transfers/worker.py`` runs them beside the scheduled jobs). An engine delivers the kinds stored
in its own queue (``DeliveryKind.queue``):

* the ``outbox`` (``Dispatcher``): partner calls (``partners/calls.MessageKind``): a partner with a
  server is called over HTTP (``partners/calls.PartnerHttp``), a hosted partner answers in-process
  (``hosted/inprocess``) and its users get an e-mail once a message is delivered; what the answer
  means for the booking is ``bookings/partner_answers``; and the client's driver positions, the
  ``client.driver_position`` kind (``webhooks/positions.py``), tried once
  (docs/rules/ride.md#client-events);
* ``webhook_deliveries`` (``webhook_dispatcher``): the ``client.webhook`` kind
  (``webhooks/kind.client_webhook_kind``), every client event, with the fan-out and the
  per-endpoint fairness around it (``webhooks/delivery.WebhookDispatcher``);
* ``partner_emails`` (``send_partner_emails``, the scheduled ``partner_emails`` job): the
  ``partner.email`` kind (``hosted/mail.partner_email_kind``).

This module is the only place that knows them all (the engine imports none of them).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from transfers.bookings import partner_answers
from transfers.bookings.lifecycle import ConcurrentChange, retry_concurrent
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, Registry, Router
from transfers.delivery.models import OutboxMessage
from transfers.delivery.transport import CallResult, Receiver
from transfers.hosted import inprocess as hosted
from transfers.hosted import mail
from transfers.observability.metrics import observe_partner_call
from transfers.partners import calls
from transfers.partners.client import PartnerEndpoint
from transfers.partners.service import endpoint_for
from transfers.services import Services
from transfers.webhooks import positions
from transfers.webhooks.delivery import WebhookDispatcher
from transfers.webhooks.kind import client_webhook_kind

_HOSTED = hosted.HostedPartner()
_UNREACHABLE = calls.Unreachable()


def _observe(name: str, kind: DeliveryKind, result: CallResult) -> None:
    spec: calls.MessageKind = kind.spec
    observe_partner_call(name, spec.path, result.outcome, result.duration_ms)


def partner_router(svc: Services) -> Router:
    """A partner call's receiver: the partner's server, the hosted partner's portal, or nobody."""
    http = calls.PartnerHttp(svc.partner_client)

    async def route(message: OutboxMessage, hint: Any) -> Receiver:
        endpoint: PartnerEndpoint | None = hint
        if endpoint is None:
            endpoint = await endpoint_for(svc.db, svc.box, message.partner_id)
        if endpoint is None:
            return Receiver(_UNREACHABLE)
        if endpoint.hosted:  # issue 16: no server to call; the portal is where it answers
            return Receiver(_HOSTED, in_process=True, after_delivery=hosted.email_users)
        return Receiver(http, target=endpoint, name=endpoint.name, observe=partial(_observe, endpoint.name))

    return route


def partner_call_kinds(svc: Services) -> tuple[DeliveryKind, ...]:
    router = partner_router(svc)
    fast = partner_answers.acknowledge_fast(svc.db)
    return tuple(
        DeliveryKind(
            name=kind.value,
            router=router,
            judge=calls.judge,
            effect=partner_answers.effect_of(kind),
            fast_finish=fast if kind is calls.MessageKind.CREATE else None,
            retrying=retry_concurrent,
            unapplied=(ConcurrentChange,),
            spec=kind,
        )
        for kind in calls.MessageKind
    )


def registry(svc: Services) -> Registry:
    """Every kind this process delivers, of every queue: the partner calls, the client's driver
    positions (tried once, claimed first: docs/rules/ride.md#client-events), the client webhooks and
    the partner e-mails. Each engine is built from a registry of its own (a kind's transport, such as
    the webhooks' HTTP session, lives as long as its engine)."""
    return Registry(
        (
            *partner_call_kinds(svc),
            positions.driver_position_kind(svc),
            client_webhook_kind(svc),
            mail.partner_email_kind(svc),
        )
    )


class Dispatcher(Engine):
    """The engine over the ``outbox`` table, with the application's kinds registered."""

    def __init__(self, svc: Services, *, concurrency: int = 16) -> None:
        super().__init__(
            svc.db,
            svc.clock,
            registry(svc),
            lease_seconds=svc.settings.outbox_lease_seconds,
            timeout=svc.settings.partner_timeout_seconds,
            concurrency=concurrency,
        )


def webhook_dispatcher(svc: Services) -> WebhookDispatcher:
    """The engine over ``webhook_deliveries`` with its fan-out; ``aclose`` it when done (``run`` does)."""
    return WebhookDispatcher(svc, registry(svc))


async def send_partner_emails(svc: Services) -> int:
    """The due partner e-mails sent (or logged): the scheduled ``partner_emails`` job."""
    return await mail.send_due(svc, registry(svc))
