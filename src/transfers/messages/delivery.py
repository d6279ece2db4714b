"""Sending messages to travellers: the delivery engine's kind ``traveller.message`` over the
``traveller_messages`` table (its queue: claim with a lease, finish under it), e-mail by SMTP
(``transfers/smtp.py``) and SMS through the configured provider (``messages/sms/``). The rules:
docs/rules/messages.md#sending.

One send, in order:

1. the message is claimed (a lease of ``LEASE``; two workers never hold one message);
2. what it needs is read (in the claim's transaction, for the batch): the booking as it is now (a
   reminder carries the current pickup), the address's opt-outs; the client's settings once a run. A
   message the booking has left behind (not APPROVED any more, but for ``cancelled`` and ``feedback``)
   is ``skipped`` (``outdated``); an address stopped since it was planned ``suppressed``; no SMTP
   server or SMS provider ``skipped`` (``not_configured``); a number that cannot get a text
   ``skipped`` (``not_mobile``, ``no_address``): none reaches a provider;
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
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import public_urls, smtp
from transfers.bookings import repository as bookings_repo
from transfers.bookings.event_effects import write_booking_event
from transfers.bookings.models import Booking
from transfers.bookings.rating_link import rating_url
from transfers.bookings.tracking_link import tracking_url
from transfers.client_events.events import EventType
from transfers.db.engine import Database
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, Judged, Registry
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.queue import Attempt
from transfers.delivery.transport import CallResult, Outcome, Receiver
from transfers.messages import addresses, planning, timing
from transfers.messages import queue_repository as queue_repo
from transfers.messages import repository as messages_repo
from transfers.messages.models import MessageSettings, OptOutSource
from transfers.messages.optout_link import optout_url
from transfers.messages.sms.provider import SmsProvider, provider_for, status_callback_url
from transfers.messages.sms.senders import NoSms, route
from transfers.messages.text import MessageContext, render
from transfers.reference.airports import find_airport
from transfers.rows import row_type
from transfers.services import Services

log = structlog.get_logger("transfers.messages")
TRAVELLER_MESSAGE = "traveller.message"  # the delivery engine's kind of every traveller_messages row
LEASE = timedelta(minutes=5)  # far above a send's bound (the SMTP timeout per step, the SMS provider's)
BATCH = 50
SWEEP = 500
STILL_TOLD = frozenset({"cancelled", "feedback"})  # sent whatever the booking's status is now


@row_type
class QueuedMessage(queue_repo.QueueRow):
    """A claimed ``traveller_messages`` row (its columns are ``QueueRow``'s): a message of the engine's
    ``traveller.message`` kind, given up at its ``expires_at``. Read in the claim's transaction, for the
    whole batch at once: the booking as it is now (None: gone) and whether the address is stopped for it."""

    booking: Booking | None = None
    stopped: bool = False
    kind: str = TRAVELLER_MESSAGE

    @classmethod
    def from_row(cls, row: queue_repo.QueueRow, booking: Booking | None = None, stopped: bool = False) -> QueuedMessage:
        columns = {f.name: getattr(row, f.name) for f in fields(queue_repo.QueueRow)}
        return cls(**columns, booking=booking, stopped=stopped)

    @property
    def deadline_at(self) -> datetime:
        return self.expires_at or self.created_at + timedelta(days=1)

    @property
    def recipient(self) -> str:
        return f"traveller:{self.booking_id}:{self.channel}"

    def log_fields(self) -> dict[str, object]:
        return {
            "message_id": self.id,
            "template": self.template,
            "channel": self.channel,
            "booking_id": self.booking_id,
        }


@dataclass(frozen=True, slots=True)
class SendOutcome:
    """What a send came to, for the judge and the effect: the verdict, the status and reason the row
    takes when it ends, the provider's id, one line of error."""

    verdict: Verdict
    status: str
    reason: str | None = None
    provider_id: str | None = None
    error: str | None = None


def _result(outcome: SendOutcome) -> CallResult:
    kind: Outcome = "ok" if outcome.verdict is Verdict.DONE else "connect_error"
    return CallResult(kind, None, outcome, outcome.error, 0.0)


class TravellerTransport:
    """The ``traveller.message`` kind's ``Transport`` (the module's docstring, steps 2 to 4)."""

    def __init__(self, svc: Services, sms: SmsProvider) -> None:
        self.svc = svc
        self.sms = sms
        # The clients' settings, read once for the transport's life (one run of the job): a batch of
        # messages mostly shares a few clients.
        self._settings: dict[int, MessageSettings | None] = {}

    async def _client(self, client_id: int) -> MessageSettings | None:
        if client_id not in self._settings:
            async with self.svc.db.read() as conn:
                self._settings[client_id] = await messages_repo.settings_of(conn, client_id)
        return self._settings[client_id]

    async def send(self, kind: str, message: QueuedMessage, *, timeout: float, target: object) -> CallResult:
        now = self.svc.clock.now()
        if message.expires_at is not None and now >= message.expires_at:
            return _result(SendOutcome(Verdict.DONE, "expired"))
        booking = message.booking
        if booking is not None and timing.expires_at_pickup(message.template) and now >= booking.trip.pickup_at:
            # "at the pickup" is the pickup as it is now: one moved earlier since the planning ends it sooner
            return _result(SendOutcome(Verdict.DONE, "expired"))
        client = await self._client(message.client_id)
        if booking is None or client is None:
            return _result(SendOutcome(Verdict.DONE, "skipped", "outdated"))
        early = self._not_sent(message, booking, client, message.stopped)
        if early is not None:
            return _result(early)
        try:
            text = render(message.template, message.channel, message.language, context_of(booking, client, message))
        except ValueError as exc:
            return _result(SendOutcome(Verdict.DONE, "skipped", "not_renderable", error=str(exc)[:500]))
        if message.channel == "email":
            return await self._email(message, client, text.subject or "", text.body)
        return await self._sms(message, client, text.body)

    def _not_sent(
        self, message: QueuedMessage, booking: Booking, client: MessageSettings, stopped: bool
    ) -> SendOutcome | None:
        """The reasons a message ends before reaching any provider (step 2), or None."""
        if message.template not in STILL_TOLD and booking.status.value != "APPROVED":
            return SendOutcome(Verdict.DONE, "skipped", "outdated")
        if message.template != "feedback" and message.channel not in {str(c) for c in client.channels}:
            return SendOutcome(Verdict.DONE, "skipped", "channel_off")
        if not message.to_address:
            return SendOutcome(Verdict.DONE, "skipped", "no_address")
        if stopped:
            return SendOutcome(Verdict.DONE, "suppressed", "opted_out")
        if message.channel == "email" and not self.svc.settings.smtp_url:
            log.info("traveller_email_not_sent", reason="TRANSFERS_SMTP_URL is not set", **message.log_fields())
            return SendOutcome(Verdict.DONE, "skipped", "not_configured")
        return None

    async def _begin(self, message: QueuedMessage, subject: str | None, body: str) -> bool:
        """Step 3: the attempt recorded (and committed) before the send, under the lease."""
        async with self.svc.db.write() as conn:
            return await queue_repo.start_attempt(conn, message.id, message.lease_until, subject=subject, body=body)

    async def _email(self, message: QueuedMessage, client: MessageSettings, subject: str, body: str) -> CallResult:
        settings = self.svc.settings
        mail = smtp.compose(
            sender=settings.smtp_from,
            sender_name=client.brand_name,
            reply_to=client.reply_to,
            to=[message.to_address or ""],
            subject=subject,
            body=body,
        )
        if not await self._begin(message, subject, body):
            return _result(SendOutcome(Verdict.RETRY, "scheduled", error="the lease was lost before the send"))
        try:
            await asyncio.to_thread(
                smtp.send_blocking,
                settings.smtp_url,
                settings.smtp_from,
                [message.to_address or ""],
                mail,
                settings.smtp_timeout_seconds,
            )
        except smtp.SmtpFailure as exc:
            error = str(exc)[:500]
            if exc.ambiguous:
                return _result(SendOutcome(Verdict.PERMANENT, "failed", "ambiguous", error=error))
            if exc.permanent:
                return _result(SendOutcome(Verdict.PERMANENT, "failed", "refused", error=error))
            return _result(SendOutcome(Verdict.RETRY, "scheduled", error=error))
        return _result(SendOutcome(Verdict.DONE, "sent"))

    async def _sms(self, message: QueuedMessage, client: MessageSettings, body: str) -> CallResult:
        settings = self.svc.settings
        way = route(
            message.to_address or "",
            client_sender=client.sms_sender,
            long_code=settings.sms_long_code,
            default_sender=settings.sms_sender,
        )
        if isinstance(way, NoSms):
            return _result(SendOutcome(Verdict.DONE, "skipped", way.reason))
        text = way.text(body)
        if not await self._begin(message, None, text):
            return _result(SendOutcome(Verdict.RETRY, "scheduled", error="the lease was lost before the send"))
        answer = await self.sms.send(way.to, way.sender, text, status_callback_url(settings.service_url))
        if answer.outcome == "sent":
            return _result(SendOutcome(Verdict.DONE, "sent", provider_id=answer.provider_id))
        if answer.outcome == "skipped":
            return _result(SendOutcome(Verdict.DONE, "skipped", answer.reason or "not_configured", error=answer.error))
        if answer.ambiguous:
            return _result(SendOutcome(Verdict.PERMANENT, "failed", "ambiguous", error=answer.error))
        if answer.outcome == "failed":
            return _result(SendOutcome(Verdict.PERMANENT, "failed", answer.reason or "refused", error=answer.error))
        return _result(SendOutcome(Verdict.RETRY, "scheduled", error=answer.error))


def context_of(booking: Booking, client: MessageSettings, message: QueuedMessage) -> MessageContext:
    """What the text may say, from the booking as it is now (docs/rules/messages.md#templates)."""
    trip = booking.trip
    iata = trip.route.airport_iata
    airport = find_airport(iata)
    driver = trip.driver
    base = public_urls.base_url()
    previous = None
    if message.template == "pickup_moved" and trip.original_pickup_at != trip.pickup_at:
        previous = trip.original_pickup_at.astimezone(trip.local_pickup.tzinfo)
    return MessageContext(
        brand_name=client.brand_name or "",
        reservation_no=booking.reservation_no,
        pickup_local=trip.local_pickup,
        airport_iata=iata,
        airport_name=airport.name if airport else None,
        tracking_url=tracking_url(booking.tracking_token, base) or base,
        optout_url=optout_url(base, booking.id, message.channel, message.to_address or ""),
        support_phone=client.support_phone,
        driver_first_name=_first_name(driver.name if driver is not None else None),
        driver_plate=driver.plate if driver is not None else None,
        vehicle=f"{trip.vehicle.make} {trip.vehicle.model}".strip() or None,
        previous_pickup_local=previous,
        rating_url=rating_url(booking.reservation_no, trip.ride) if message.template == "feedback" else None,
        meeting_point=trip.meeting_point,
        pickup_place=trip.route.pickup.name,
        dropoff_place=trip.route.dropoff.name,
    )


def _first_name(name: str | None) -> str | None:
    words = (name or "").split()
    return words[0] if words else None


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


def _stopped(row: queue_repo.QueueRow, optouts: set[tuple[int | None, str, str]]) -> bool:
    if not row.to_address:
        return False
    address = messages_repo.normalize_address(row.channel, row.to_address)
    return (None, row.channel, address) in optouts or (row.booking_id, row.channel, address) in optouts


class TravellerQueue:
    """The ``traveller_messages`` table as the engine's ``Queue``: no attempt log (the row keeps the count
    and the last error); the end of a message is written by the kind's effect, which reads the outcome."""

    name = "traveller_messages"
    log_event = "traveller_message_delivery"

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[QueuedMessage]:
        rows = await queue_repo.claim_due(conn, now=now, lease_until=lease_until, limit=limit)
        if not rows:
            return []
        bookings: dict[int, Booking | None] = {}
        for booking_id in sorted({r.booking_id for r in rows}):
            bookings[booking_id] = await bookings_repo.get_by_id(conn, booking_id)
        addresses = {
            (r.channel, messages_repo.normalize_address(r.channel, r.to_address)) for r in rows if r.to_address
        }
        stopped = await messages_repo.stopped(conn, addresses, list(bookings))
        return [QueuedMessage.from_row(r, bookings.get(r.booking_id), _stopped(r, stopped)) for r in rows]

    async def record_attempt(self, conn: AsyncConnection, message: QueuedMessage, attempt: Attempt) -> None:
        return None

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: QueuedMessage,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return await queue_repo.reschedule(conn, message.id, message.lease_until, when=next_attempt_at, error=error)

    async def finish(
        self,
        conn: AsyncConnection,
        message: QueuedMessage,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return True  # the effect writes the end, with the outcome's status and reason, under the lease

    async def drop(self, conn: AsyncConnection, message: QueuedMessage, *, now: datetime, reason: str) -> bool:
        return await queue_repo.finish(
            conn, message.id, message.lease_until, status="expired", reason=None, error=reason, now=now
        )

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[QueuedMessage]:
        return []  # ``sweep`` ends them (expired, or ambiguous when a send began)


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
