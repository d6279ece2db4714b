"""E-mails to a partner's users: a new booking, a cancellation (docs/rules/hosted-partners.md), an amendment,
a pickup that followed the flight (docs/rules/flights.md#pickup-moves).

Written as a ``partner_emails`` row in the transaction of the delivery that reports the change
(``hosted/inprocess.email_users``, for hosted partners), and sent by the worker (``send_due``, a scheduled
job), never inside a request. A row per (kind, booking): the unique ``dedupe_key`` keeps a
re-delivered message from mailing twice. Each row is a message of the delivery engine's
``partner.email`` kind (``partner_email_kind``, registered with every other kind in
``transfers/deliveries.py``; ``EmailQueue`` is the table as its queue,
``SmtpMailer`` its transport): the lease keeps two workers off one row; a row is marked sent only
after the SMTP server took the message, and retried on the standard schedule while the server is
down (until ``EMAIL_GIVE_UP``, then ``failed``). Without ``TRANSFERS_SMTP_URL``
nothing is sent: the e-mail is logged (``partner_email_not_sent``) and the row closed as ``logged``.
"""

from __future__ import annotations

import asyncio
import smtplib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers import money, smtp
from transfers.bookings.models import Booking
from transfers.delivery.engine import Engine
from transfers.delivery.kinds import DeliveryKind, Judged, Registry
from transfers.delivery.models import DELIVERED, OutboxMessage, partner_recipient
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.queue import Attempt
from transfers.delivery.transport import CallResult, Receiver
from transfers.hosted import mail_repository as mail_repo
from transfers.reference.airports import local_time
from transfers.services import Services

log = structlog.get_logger("transfers.mail")
BATCH = 20
EMAIL_GIVE_UP = timedelta(hours=24)
LEASE = timedelta(minutes=5)
SUBJECTS = {
    "booking.new": "New booking {no}: please accept or decline",
    "booking.cancelled": "Booking {no} was cancelled",
    "booking.amended": "Booking {no} was changed",
    "booking.pickup_moved": "Booking {no}: the pickup moved to {pickup} (the flight is {why})",
}
OPENINGS = {
    "booking.new": "A new booking is waiting for you. Accept it with a driver, or decline it, in the portal:",
    "booking.cancelled": "This booking was cancelled; the ride is off.",
    "booking.amended": "The client changed this booking; here it is as it stands now:",
    "booking.pickup_moved": "The traveller's flight is {why}: the pickup moved from {before} to {pickup} "
    "(airport time). Send the driver for the new time; here is the booking as it stands now:",
}
# Kinds that may be sent more than once for one booking (the pickup can move again): one e-mail per
# outbox message instead of one per booking.
PER_MESSAGE = frozenset({"booking.pickup_moved"})


async def enqueue(conn: AsyncConnection, message: OutboxMessage, kind: str, now: datetime) -> None:
    """The e-mail ``kind`` about ``message``'s booking, in the caller's transaction: one per (kind, booking),
    or per outbox message for the kinds that repeat (``PER_MESSAGE``), so a re-delivery never mails twice."""
    await mail_repo.enqueue_email(
        conn,
        partner_id=message.partner,
        booking_id=message.booking,
        kind=kind,
        now=now,
        dedupe_key=f"{kind}:{message.booking}:{message.id}" if kind in PER_MESSAGE else None,
    )


@dataclass(frozen=True)
class Mail:
    to: list[str]
    subject: str
    body: str


def compose(kind: str, booking: Booking, recipients: list[str], *, partner_name: str, portal_url: str) -> Mail:
    """The e-mail's text: what happened, the trip in the airport's local time, where to act."""
    no, trip = booking.reservation_no, booking.trip
    pickup = trip.local_pickup
    before = local_time(trip.route.airport_iata, trip.original_pickup_at)
    words = {
        "no": no,
        "pickup": f"{pickup:%H:%M}",
        "before": f"{before:%H:%M}",
        "why": "late" if trip.pickup_at >= trip.original_pickup_at else "early",
    }
    lines = [
        f"Hello {partner_name},",
        "",
        OPENINGS[kind].format(**words),
        "",
        f"Booking:    {no}",
        f"Pickup:     {pickup.strftime('%Y-%m-%d %H:%M')} ({trip.route.airport_iata} local time)",
        f"From:       {trip.route.pickup.name or ''}",
        f"To:         {trip.route.dropoff.name or ''}",
        f"Vehicle:    {trip.vehicle.make} {trip.vehicle.model} ({trip.vehicle.type})",
        f"Passengers: {trip.party.adult} adults, {trip.party.children} children, {trip.party.infant} infants",
        # docs/rules/return-trips.md#create: a way back booked without the departing flight has none
        f"Flight:     {trip.flight.number or 'none given'}",
        f"Your price: {_own_price(booking)}",
        "",
        f"{portal_url}/partner/bookings/{no}",
    ]
    return Mail(recipients, SUBJECTS[kind].format(**words), "\n".join(lines) + "\n")


def _send_blocking(smtp_url: str, sender: str, mail: Mail, timeout: float) -> None:
    """One SMTP exchange (``transfers/smtp.py``, in a worker thread)."""
    message = smtp.compose(sender=sender, to=mail.to, subject=mail.subject, body=mail.body)
    smtp.send_blocking(smtp_url, sender, mail.to, message, timeout)


PARTNER_EMAIL = "partner.email"  # the delivery engine's kind of every partner_emails row
SENT, LOGGED = "sent", "logged"


@dataclass(frozen=True, slots=True)
class PartnerEmail:
    """A claimed ``partner_emails`` row: a message of the engine's ``partner.email`` kind (its
    ``mail_kind`` is what the e-mail is about: ``booking.new``, ...), given up 24 h after it was
    written (``EMAIL_GIVE_UP``)."""

    id: int
    partner_id: int
    booking_id: int
    mail_kind: str
    attempts: int
    lease_until: datetime | None
    created_at: datetime
    kind: str = PARTNER_EMAIL

    @classmethod
    def from_row(cls, row: mail_repo.EmailRow) -> PartnerEmail:
        return cls(row.id, row.partner_id, row.booking_id, row.kind, row.attempts, row.lease_until, row.created_at)

    @property
    def deadline_at(self) -> datetime:
        return self.created_at + EMAIL_GIVE_UP

    @property
    def recipient(self) -> str:
        return partner_recipient(self.partner_id)

    def log_fields(self) -> dict[str, object]:
        return {"email_id": self.id, "mail_kind": self.mail_kind, "partner_id": self.partner_id}


class SmtpMailer:
    """The ``partner.email`` kind's ``Transport``: the e-mail composed from the booking as it is now
    and handed to the SMTP server (in a worker thread). Without recipients, or without
    ``TRANSFERS_SMTP_URL``, nothing is sent and the answer says ``logged``."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc

    async def send(self, kind: str, email: PartnerEmail, *, timeout: float, target: object) -> CallResult:
        settings = self.svc.settings
        async with self.svc.db.read() as conn:
            booking, recipients, partner_name = await mail_repo.email_context(
                conn, booking_id=email.booking_id, partner_id=email.partner_id
            )
        if booking is None or not recipients:
            log.warning(
                "partner_email_not_sent", kind=email.mail_kind, partner_id=email.partner_id, reason="no recipients"
            )
            why = "no active partner user to write to" if booking else "booking not found"
            return CallResult("ok", None, {"status": LOGGED, "recipients": [], "error": why}, None, 0.0)
        mail = compose(email.mail_kind, booking, recipients, partner_name=partner_name, portal_url=settings.service_url)
        if not settings.smtp_url:
            log.info(
                "partner_email_not_sent",
                reason="TRANSFERS_SMTP_URL is not set",
                to=recipients,
                subject=mail.subject,
                reservation_no=booking.reservation_no,
            )
            return CallResult("ok", None, {"status": LOGGED, "recipients": recipients, "error": None}, None, 0.0)
        try:
            await asyncio.to_thread(
                _send_blocking, settings.smtp_url, settings.smtp_from, mail, settings.smtp_timeout_seconds
            )
        except (OSError, smtplib.SMTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            log.warning(
                "partner_email_failed",
                kind=email.mail_kind,
                attempt=email.attempts + 1,
                error=error,
                reservation_no=booking.reservation_no,
            )
            return CallResult("connect_error", None, None, error, 0.0)
        log.info("partner_email_sent", kind=email.mail_kind, to=recipients, reservation_no=booking.reservation_no)
        return CallResult("ok", None, {"status": SENT, "recipients": recipients, "error": None}, None, 0.0)


def judge(result: CallResult) -> Judged:
    """Taken by the SMTP server (or logged): answered; anything else: tried again."""
    if result.ok:
        return Judged(Verdict.DONE, result.body, None, result)
    return Judged(Verdict.RETRY, None, result.error, result)


async def _closed(
    conn: AsyncConnection, email: PartnerEmail, ending: Ending, answer: object, error: str | None, now: datetime
) -> None:
    """An answered e-mail: how it went (``sent`` or ``logged``) and to whom, on its row."""
    if ending is Ending.ANSWERED and isinstance(answer, dict):
        await mail_repo.close_email(
            conn, email.id, status=answer["status"], recipients=answer["recipients"], error=answer["error"]
        )


class EmailQueue:
    """The ``partner_emails`` table as the engine's ``Queue`` (no attempt log: the row keeps the
    attempts and the last error)."""

    name = "partner_emails"
    log_event = "partner_email_delivery"

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[PartnerEmail]:
        rows = await mail_repo.claim_due_emails(conn, now=now, lease_until=lease_until, limit=limit)
        return [PartnerEmail.from_row(row) for row in rows]

    async def record_attempt(self, conn: AsyncConnection, message: PartnerEmail, attempt: Attempt) -> None:
        return None

    async def reschedule(
        self,
        conn: AsyncConnection,
        email: PartnerEmail,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        await mail_repo.retry_email(
            conn, email.id, email.lease_until, next_attempt_at=next_attempt_at, error=error or "not sent"
        )
        return True

    async def finish(
        self,
        conn: AsyncConnection,
        email: PartnerEmail,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        stored = SENT if status == DELIVERED else "failed"  # refused or past EMAIL_GIVE_UP
        return await mail_repo.finish_email(conn, email.id, email.lease_until, status=stored, now=now, error=error)

    async def drop(self, conn: AsyncConnection, email: PartnerEmail, *, now: datetime, reason: str) -> bool:
        return await mail_repo.finish_email(conn, email.id, email.lease_until, status="failed", now=now, error=reason)

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[PartnerEmail]:
        return []  # an e-mail gives up at the attempt whose next one would fall past its deadline


def partner_email_kind(svc: Services) -> DeliveryKind[PartnerEmail]:
    """The ``partner.email`` kind: SMTP, the standard schedule, until 24 h after it was written."""
    receiver: Receiver[PartnerEmail] = Receiver(SmtpMailer(svc), in_process=True)  # no fast path: an e-mail is rare

    async def route(message: PartnerEmail, hint: object) -> Receiver[PartnerEmail]:
        return receiver

    return DeliveryKind(PARTNER_EMAIL, route, judge, _closed)


def partner_email_kinds(svc: Services) -> Registry[PartnerEmail]:
    """The kinds stored in ``partner_emails`` (registered by ``transfers/deliveries.py``)."""
    return Registry((partner_email_kind(svc),))


async def send_due(svc: Services, kinds: Registry[PartnerEmail]) -> int:
    """Send (or log) the due e-mails, one at a time, through the delivery engine; returns how many
    rows were handled (the scheduled ``partner_emails`` job, ``deliveries.send_partner_emails``)."""
    engine = Engine(
        svc.db,
        svc.clock,
        kinds,
        queue=EmailQueue(),
        lease_seconds=LEASE.total_seconds(),
        timeout=svc.settings.smtp_timeout_seconds,
        concurrency=1,
    )
    return await engine.run_once(limit=BATCH)


def _own_price(booking: Booking) -> str:
    """The partner's own net total in its own currency (docs/rules/fx.md#booking), converted or not."""
    return f"{money.text(booking.own_net_total, booking.own_currency)} {booking.own_currency}"
