"""The application's deliveries: every kind the delivery engine (``transfers/delivery/``) carries is
registered here, at start-up, in the registry of the queue that stores its messages, and every engine
is built here from its registry (``transfers/worker.py`` runs them beside the scheduled jobs). One
kind is one module that builds it; adding one is docs/architecture/deliveries.md, "Add a kind of
delivery":

* the ``outbox`` (``Dispatcher``, ``outbox_kinds``): partner calls (``partners/calls.MessageKind``):
  a partner with a server is called over HTTP (``partners/calls.PartnerHttp``), a hosted partner
  answers in-process (``hosted/inprocess``) and its users get an e-mail once a message is
  delivered; what the answer means for the booking is ``bookings/partner_answers``;
* ``webhook_deliveries`` (``webhook_dispatcher``, ``webhook_kinds``): the ``client.webhook`` kind
  (``webhooks/kind.py``), every client event, and the client's driver positions, the
  ``client.driver_position`` kind (``webhooks/positions.py``), tried once
  (docs/rules/ride.md#client-events); both through one ``WebhookSender``, with the fan-out and the
  per-endpoint fairness around them (``webhooks/delivery.WebhookDispatcher``);
* ``partner_emails`` (``send_partner_emails``, the scheduled ``partner_emails`` job): the
  ``partner.email`` kind (``hosted/mail.partner_email_kind``);
* ``traveller_messages`` (``send_traveller_messages``, the scheduled ``traveller_messages`` job): the
  ``traveller.message`` kind (``messages/delivery.traveller_message_kind``), e-mail and SMS to travellers
  (docs/rules/messages.md#sending).

This module is the only place that knows them all (the engine imports none of them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from transfers.bookings import partner_answers
from transfers.bookings.lifecycle import ConcurrentChange, retry_concurrent
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, Registry, Router
from transfers.delivery.models import OutboxMessage
from transfers.delivery.repository import OutboxQueue
from transfers.delivery.transport import CallResult, Receiver
from transfers.hosted import inprocess as hosted
from transfers.hosted import mail
from transfers.messages import delivery as traveller_messages
from transfers.messages.queue import QueuedMessage
from transfers.messages.sms.provider import provider_for
from transfers.observability.metrics import observe_partner_call
from transfers.partners import calls
from transfers.partners.client import PartnerEndpoint
from transfers.partners.service import endpoint_for
from transfers.services import Services
from transfers.webhooks import positions
from transfers.webhooks.delivery import WebhookDispatcher
from transfers.webhooks.kind import client_webhook_kind
from transfers.webhooks.models import WebhookDelivery
from transfers.webhooks.sender import WebhookSender

_HOSTED = hosted.HostedPartner()
_UNREACHABLE = calls.Unreachable()


def _observe(name: str, kind: str, result: CallResult) -> None:
    observe_partner_call(name, calls.MessageKind.of(kind).path, result.outcome, result.duration_ms)


def partner_router(svc: Services) -> Router[OutboxMessage]:
    """A partner call's receiver: the partner's server, the hosted partner's portal, or nobody."""
    http = calls.PartnerHttp(svc.partner_client)

    async def route(message: OutboxMessage, hint: object) -> Receiver[OutboxMessage]:
        endpoint = hint if isinstance(hint, PartnerEndpoint) else None
        if endpoint is None:
            endpoint = await endpoint_for(svc.db, svc.box, message.partner)
        if endpoint is None:
            return Receiver(_UNREACHABLE)
        if endpoint.hosted:  # no server to call; the portal is where it answers
            return Receiver(_HOSTED, in_process=True, after_delivery=hosted.email_users)
        return Receiver(http, target=endpoint, name=endpoint.name, observe=partial(_observe, endpoint.name))

    return route


def partner_call_kinds(svc: Services) -> tuple[DeliveryKind[OutboxMessage], ...]:
    """Every partner call (``partners/calls.MessageKind``), one kind each."""
    router = partner_router(svc)
    fast = partner_answers.acknowledge_fast(svc.db)
    return tuple(
        DeliveryKind(
            name=kind.value,
            router=router,
            judge=partial(calls.judge, kind),
            effect=partner_answers.effect_of(kind),
            fast_finish=fast if kind is calls.MessageKind.CREATE else None,
            retrying=retry_concurrent,
            unapplied=(ConcurrentChange,),
        )
        for kind in calls.MessageKind
    )


def outbox_kinds(svc: Services) -> Registry[OutboxMessage]:
    """The kinds stored in the ``outbox``: the partner calls."""
    return Registry(partner_call_kinds(svc))


def webhook_kinds(svc: Services, sender: WebhookSender) -> Registry[WebhookDelivery]:
    """The kinds stored in ``webhook_deliveries``, all sent through ``sender``: client events and the
    client's driver positions (tried once, claimed first: docs/rules/ride.md#client-events)."""
    return Registry((client_webhook_kind(svc.db, sender), positions.driver_position_kind(svc.db, sender)))


def webhook_sender(svc: Services) -> WebhookSender:
    """The one sender (one HTTP session, kept-alive connections) of every client-endpoint delivery."""
    settings = svc.settings
    return WebhookSender(
        allow_private=settings.private_webhook_urls_allowed,
        per_host=settings.webhook_per_endpoint * 2,
        box=svc.box,
        clock=svc.clock,
        resolver=svc.webhook_resolver,
    )


@dataclass(frozen=True)
class Kinds:
    """Every kind this process delivers, by the queue that stores it; a name is taken once across them."""

    outbox: Registry[OutboxMessage]
    webhooks: Registry[WebhookDelivery]
    partner_emails: Registry[mail.PartnerEmail]
    traveller_messages: Registry[QueuedMessage]

    def __post_init__(self) -> None:
        names = self.names()
        if len(names) != len(set(names)):
            raise ValueError(f"a delivery kind is registered in two queues: {sorted(names)}")

    def names(self) -> list[str]:
        return [
            *self.outbox.names(),
            *self.webhooks.names(),
            *self.partner_emails.names(),
            *self.traveller_messages.names(),
        ]


def registry(svc: Services) -> Kinds:
    """Every kind of every queue (each engine builds only its own registry: a kind's transport, such
    as the webhooks' HTTP session, lives as long as its engine)."""
    return Kinds(
        outbox_kinds(svc),
        webhook_kinds(svc, webhook_sender(svc)),
        mail.partner_email_kinds(svc),
        traveller_messages.traveller_message_kinds(svc),
    )


class Dispatcher(Engine[OutboxMessage]):
    """The engine over the ``outbox`` table, with the application's kinds registered."""

    def __init__(self, svc: Services, *, concurrency: int = 16) -> None:
        super().__init__(
            svc.db,
            svc.clock,
            outbox_kinds(svc),
            queue=OutboxQueue(),
            lease_seconds=svc.settings.outbox_lease_seconds,
            timeout=svc.settings.partner_timeout_seconds,
            concurrency=concurrency,
        )


def webhook_dispatcher(svc: Services) -> WebhookDispatcher:
    """The engine over ``webhook_deliveries`` with its fan-out and its one sender; ``aclose`` it when
    done (``run`` does)."""
    sender = webhook_sender(svc)
    return WebhookDispatcher(svc, webhook_kinds(svc, sender), sender)


async def send_partner_emails(svc: Services) -> int:
    """The due partner e-mails sent (or logged): the scheduled ``partner_emails`` job."""
    return await mail.send_due(svc, mail.partner_email_kinds(svc))


async def send_traveller_messages(svc: Services) -> int:
    """The due messages to travellers sent (docs/rules/messages.md#sending): the scheduled
    ``traveller_messages`` job. The SMS provider lives as long as the run."""
    sms = provider_for(svc.settings)
    try:
        return await traveller_messages.send_due(svc, traveller_messages.traveller_message_kinds(svc, sms))
    finally:
        await sms.aclose()
