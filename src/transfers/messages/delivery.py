"""Sending messages to travellers: the delivery engine's kind ``traveller.message`` over the
``traveller_messages`` table (its queue: claim with a lease, finish under it), e-mail by SMTP
(``transfers/smtp.py``) and SMS through the configured provider (``messages/sms/``). The rules:
docs/rules/messages.md#sending.

One send, in order:

1. the message is claimed (a lease of ``LEASE``; two workers never hold one message);
2. what it needs is read (in the claim's transaction, for the batch): the booking as it is now (a
   reminder carries the current pickup), the address's opt-outs; the client's settings once a run. A
   message the booking has left behind (not APPROVED any more, but for ``cancelled`` and ``feedback``)
   is ``skipped`` (``outdated``); an address stopped since it was planned ``suppressed``; a number
   that cannot get a text ``skipped`` (``not_mobile``, ``no_address``): none reaches a provider; no SMTP
   server or SMS provider: ``skipped`` (``not_configured``) once the text is rendered and kept;
3. the text is rendered (``messages/text``) and the attempt recorded on the row before the send (its
   count, ``last_error`` = ``sending``, the subject and body), committed;
4. the transport is called, with no transaction open;
5. the outcome is written under the lease: ``sent``; a temporary failure due again on the standard
   schedule (until ``expires_at``, then ``expired``); a permanent one ``failed`` at once.

Never sent twice for one dedupe key: a message whose attempt began (step 3) and never ended (its worker
died; the lease runs out) is not claimed again but ``failed`` with reason ``ambiguous`` (``sweep``), as is
a send that ended without an answer after the data was handed over (an SMTP time-out after DATA, a
provider's ambiguous answer): the provider may have taken it, and a traveller told twice is worse than
the client told it failed. A failure of ``driver_changed``, ``pickup_moved``, ``driver_arrived`` or
``cancelled`` writes the client event ``booking.message_failed``.

Here: the kind (its judge and effect), the sweep and the job's pass. The queue over the table is
``queue.py`` (its SQL ``queue_repository.py``); one send (steps 2 to 4) is ``transport.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as bookings_repo
from transfers.bookings.event_effects import write_booking_event
from transfers.client_events.events import EventType
from transfers.db.engine import Database
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, Judged, Registry
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.transport import CallResult, Receiver
from transfers.messages import addresses, planning
from transfers.messages import queue_repository as queue_repo
from transfers.messages import repository as messages_repo
from transfers.messages.models import OptOutSource
from transfers.messages.queue import TRAVELLER_MESSAGE, QueuedMessage, TravellerQueue
from transfers.messages.sms.provider import SmsProvider, provider_for
from transfers.messages.transport import SendOutcome, TravellerTransport
from transfers.services import Services

log = structlog.get_logger("transfers.messages")
LEASE = timedelta(minutes=5)  # far above a send's bound (the SMTP timeout per step, the SMS provider's)
BATCH = 50
SWEEP = 500


def judge(result: CallResult) -> Judged:
    """The transport decided already (``SendOutcome.verdict``); the error is what operators read."""
    outcome = result.body
    if not isinstance(outcome, SendOutcome):
        return Judged(Verdict.RETRY, None, result.error or "no outcome", result)
    return Judged(outcome.verdict, outcome, outcome.error, result)


async def effect(
    conn: AsyncConnection, message: QueuedMessage, ending: Ending, answer: object, error: str | None, now: datetime
) -> object:
    """The row's end, under the lease, and ``booking.message_failed`` for a failure the client must hear of."""
    outcome = answer if isinstance(answer, SendOutcome) else None
    if ending is Ending.EXPIRED:
        status, reason = "expired", None
    elif outcome is None:
        status, reason = "failed", "refused"
    else:
        status, reason = outcome.status, outcome.reason
    ended = await queue_repo.finish(
        conn,
        message.id,
        message.lease_until,
        status=status,
        reason=reason,
        error=error,
        now=now,
        provider_id=outcome.provider_id if outcome else None,
        sent=status == "sent",
    )
    if ended:
        log.info("traveller_message_ended", status=status, reason=reason, **message.log_fields())
        if status == "failed":
            if reason == "unsubscribed" and message.channel == "sms" and message.to_address:
                # The provider refused the number because it replied STOP to it (Twilio's 21610): kept as
                # the STOP reply it is, so the next texts are suppressed before any provider sees them
                # (docs/rules/messages.md#opt-out).
                await messages_repo.add_optout(
                    conn, "sms", message.to_address, booking_id=None, source=OptOutSource.SMS_REPLY, now=now
                )
            await report_failure(conn, message.id, now)
    return ended


async def report_failure(conn: AsyncConnection, message_id: int, now: datetime) -> None:
    """``booking.message_failed`` (``data``: ``booking``, ``message``, ``sequence``) for the templates whose
    failure the client must hear of (docs/rules/messages.md#sending)."""
    failed = await messages_repo.message(conn, message_id)
    if failed is None or failed.template not in planning.FAILURE_REPORTED:
        return
    booking = await bookings_repo.lock_by_id(conn, failed.booking_id)
    if booking is None:
        return
    resource = {
        "id": failed.id,
        "template": failed.template,
        "channel": failed.channel,
        "to": addresses.mask(failed.channel, failed.to_address),
        "language": failed.language,
        "status": failed.status,
        "reason": failed.reason,
        "scheduled_for": failed.scheduled_for.isoformat(),
        "sent_at": None if failed.sent_at is None else failed.sent_at.isoformat(),
    }
    await write_booking_event(conn, booking, EventType.BOOKING_MESSAGE_FAILED, {"message": resource}, now=now)


def traveller_message_kind(svc: Services, sms: SmsProvider) -> DeliveryKind[QueuedMessage]:
    """The ``traveller.message`` kind: e-mail or SMS, the standard schedule, until the message expires."""
    receiver: Receiver[QueuedMessage] = Receiver(TravellerTransport(svc, sms), in_process=True)

    async def route_to(message: QueuedMessage, hint: object) -> Receiver[QueuedMessage]:
        return receiver

    return DeliveryKind(TRAVELLER_MESSAGE, route_to, judge, effect)


def traveller_message_kinds(svc: Services, sms: SmsProvider | None = None) -> Registry[QueuedMessage]:
    """The kinds stored in ``traveller_messages`` (registered by ``transfers/deliveries.py``)."""
    return Registry((traveller_message_kind(svc, sms or provider_for(svc.settings)),))


async def sweep(db: Database, now: datetime, *, limit: int = SWEEP) -> int:
    """Messages no worker will send: a send begun by a worker that died (``failed``, ``ambiguous``, the
    client told) and waiting messages past their expiry (``expired``). How many were ended."""
    ended = 0
    async with db.write() as conn:
        for row in await queue_repo.abandoned(conn, now=now, limit=limit):
            if await queue_repo.finish(
                conn,
                row.id,
                row.lease_until,
                status="failed",
                reason="ambiguous",
                error="the worker stopped during the send; the provider may have taken it",
                now=now,
            ):
                ended += 1
                await report_failure(conn, row.id, now)
        for row in await queue_repo.overdue(conn, now=now, limit=limit):
            ended += await queue_repo.end_unleased(conn, row.id, status="expired", reason=None, now=now)
    return ended


async def send_due(svc: Services, kinds: Registry[QueuedMessage], *, limit: int = BATCH, concurrency: int = 8) -> int:
    """The due messages sent (the scheduled ``traveller_messages`` job): the sweep, then one batch through
    the delivery engine; how many messages were handled."""
    ended = await sweep(svc.db, svc.clock.now())
    engine = Engine(
        svc.db,
        svc.clock,
        kinds,
        queue=TravellerQueue(),
        lease_seconds=LEASE.total_seconds(),
        timeout=svc.settings.smtp_timeout_seconds,
        concurrency=concurrency,
    )
    return ended + await engine.run_once(limit=limit)


BODY_KEPT = timedelta(days=30)


async def purge_bodies(conn: AsyncConnection, now: datetime, *, limit: int) -> int:
    """The rendered texts of messages that ended more than 30 days ago, emptied (docs/rules/messages.md#seen)."""
    return await queue_repo.purge_bodies(conn, now - BODY_KEPT, limit=limit)
