"""Sending one message to a traveller (docs/rules/messages.md#sending): the ``traveller.message`` kind's
transport, steps 2 to 4 of ``delivery.py``'s order: what ends a message before any provider sees it, the
text rendered from the booking as it is now (``context_of``), the attempt recorded, then the SMTP or SMS
call, with no transaction open. The outcome (``SendOutcome``) is the verdict the kind's judge reads.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog

from transfers import public_urls, smtp
from transfers.bookings.models import Booking
from transfers.bookings.rating_link import rating_url
from transfers.bookings.tracking_link import tracking_url
from transfers.delivery.policy import Verdict
from transfers.delivery.transport import CallResult, Outcome
from transfers.messages import queue_repository as queue_repo
from transfers.messages import repository as messages_repo
from transfers.messages import timing
from transfers.messages.models import MessageSettings
from transfers.messages.optout_link import optout_url
from transfers.messages.queue import QueuedMessage
from transfers.messages.sms.provider import SmsProvider, status_callback_url
from transfers.messages.sms.senders import NoSms, route
from transfers.messages.text import MessageContext, render
from transfers.reference.airports import find_airport
from transfers.services import Services

log = structlog.get_logger("transfers.messages")
STILL_TOLD = frozenset({"cancelled", "feedback"})  # sent whatever the booking's status is now


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
        return None

    async def _begin(self, message: QueuedMessage, subject: str | None, body: str) -> bool:
        """Step 3: the attempt recorded (and committed) before the send, under the lease."""
        async with self.svc.db.write() as conn:
            return await queue_repo.start_attempt(conn, message.id, message.lease_until, subject=subject, body=body)

    async def _email(self, message: QueuedMessage, client: MessageSettings, subject: str, body: str) -> CallResult:
        settings = self.svc.settings
        if not settings.smtp_url:
            # No SMTP server (the sandbox's default): nothing is sent, but the text is kept, as the sandbox SMS
            # provider keeps its texts, so `transfers messages show` shows what would have gone
            # (docs/rules/messages.md#sending).
            async with self.svc.db.write() as conn:
                await queue_repo.keep_text(conn, message.id, message.lease_until, subject=subject, body=body)
            log.info("traveller_email_not_sent", reason="TRANSFERS_SMTP_URL is not set", **message.log_fields())
            return _result(SendOutcome(Verdict.DONE, "skipped", "not_configured"))
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
