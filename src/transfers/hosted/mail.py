"""E-mails to a partner's users: a new booking, a cancellation (docs/rules/hosted-partners.md), an amendment.

Written as a ``partner_emails`` row in the transaction of the delivery that reports the change
(``hosted/inprocess.email_users``, for hosted partners), and sent by the worker (``send_due``, a scheduled
job), never inside a request. A row per (kind, booking): the unique ``dedupe_key`` keeps a
re-delivered message from mailing twice; the lease keeps two workers off one row; a row is
marked sent only after the SMTP server took the message, and retried with the outbox's backoff
while the server is down (for ``EMAIL_GIVE_UP``, then ``failed``). Without ``TRANSFERS_SMTP_URL``
nothing is sent: the e-mail is logged (``partner_email_not_sent``) and the row closed as ``logged``.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any
from urllib.parse import unquote, urlsplit

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import next_attempt
from transfers.hosted import repository as repo
from transfers.search.airports import local_time
from transfers.services import Services

log = structlog.get_logger("transfers.mail")
BATCH = 20
EMAIL_GIVE_UP = timedelta(hours=24)
SUBJECTS = {
    "booking.new": "New booking {no}: please accept or decline",
    "booking.cancelled": "Booking {no} was cancelled",
    "booking.amended": "Booking {no} was changed",
}
OPENINGS = {
    "booking.new": "A new booking is waiting for you. Accept it with a driver, or decline it, in the portal:",
    "booking.cancelled": "This booking was cancelled; the ride is off.",
    "booking.amended": "The client changed this booking; here it is as it stands now:",
}


async def enqueue(conn: AsyncConnection, message: OutboxMessage, kind: str, now: datetime) -> None:
    """The e-mail ``kind`` about ``message``'s booking, in the caller's transaction."""
    await repo.enqueue_email(conn, partner_id=message.partner_id, booking_id=message.booking_id, kind=kind, now=now)


@dataclass(frozen=True)
class Mail:
    to: list[str]
    subject: str
    body: str


def compose(kind: str, booking: Booking, recipients: list[str], *, partner_name: str, portal_url: str) -> Mail:
    """The e-mail's text: what happened, the trip in the airport's local time, where to act."""
    no = booking.reservation_no
    pickup = local_time(booking.airport_iata, booking.pickup_at)
    where_from = booking.pickup_location.get("name", "")
    where_to = booking.dropoff_location.get("name", "")
    lines = [
        f"Hello {partner_name},",
        "",
        OPENINGS[kind],
        "",
        f"Booking:    {no}",
        f"Pickup:     {pickup.strftime('%Y-%m-%d %H:%M')} ({booking.airport_iata} local time)",
        f"From:       {where_from}",
        f"To:         {where_to}",
        f"Vehicle:    {booking.vehicle_make} {booking.vehicle_model} ({booking.vehicle_type})",
        f"Passengers: {booking.adult} adults, {booking.children} children, {booking.infant} infants",
        f"Flight:     {booking.flight_number}",
        f"Your price: {booking.net_total:.2f} {booking.currency}",
        "",
        f"{portal_url}/partner/bookings/{no}",
    ]
    return Mail(recipients, SUBJECTS[kind].format(no=no), "\n".join(lines) + "\n")


def _send_blocking(smtp_url: str, sender: str, mail: Mail, timeout: float) -> None:
    """One SMTP exchange (smtplib, in a worker thread): ``smtps://`` is TLS from the start,
    ``smtp://`` plain (with STARTTLS when the server offers it and credentials are given)."""
    parts = urlsplit(smtp_url)
    host = parts.hostname or "localhost"
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, ", ".join(mail.to), mail.subject
    message.set_content(mail.body)
    client: smtplib.SMTP
    if parts.scheme == "smtps":
        client = smtplib.SMTP_SSL(host, parts.port or 465, timeout=timeout, context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(host, parts.port or 25, timeout=timeout)
    with client:
        if parts.scheme == "smtp" and parts.username and client.has_extn("starttls"):
            client.starttls(context=ssl.create_default_context())
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        client.send_message(message)


async def send_due(svc: Services) -> int:
    """Send (or log) the due e-mails; returns how many rows were handled."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        due = await repo.claim_due_emails(conn, now=now, lease_until=now + timedelta(minutes=5), limit=BATCH)
    for email in due:
        await _send_one(svc, email)
    return len(due)


async def _send_one(svc: Services, email: dict[str, Any]) -> None:
    settings = svc.settings
    async with svc.db.read() as conn:
        booking, recipients, partner_name = await repo.email_context(conn, email)
    now = svc.clock.now()
    if booking is None or not recipients:
        async with svc.db.write() as conn:
            await repo.finish_email(
                conn,
                email,
                status="logged",
                now=now,
                recipients=[],
                error="no active partner user to write to" if booking else "booking not found",
            )
        log.warning(
            "partner_email_not_sent", kind=email["kind"], partner_id=email["partner_id"], reason="no recipients"
        )
        return
    mail = compose(email["kind"], booking, recipients, partner_name=partner_name, portal_url=settings.service_url)
    if not settings.smtp_url:
        async with svc.db.write() as conn:
            await repo.finish_email(conn, email, status="logged", now=now, recipients=recipients)
        log.info(
            "partner_email_not_sent",
            reason="TRANSFERS_SMTP_URL is not set",
            to=recipients,
            subject=mail.subject,
            reservation_no=booking.reservation_no,
        )
        return
    try:
        await asyncio.to_thread(
            _send_blocking, settings.smtp_url, settings.smtp_from, mail, settings.smtp_timeout_seconds
        )
    except (OSError, smtplib.SMTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"[:500]
        now = svc.clock.now()
        async with svc.db.write() as conn:
            if now - email["created_at"] >= EMAIL_GIVE_UP:
                await repo.finish_email(conn, email, status="failed", now=now, error=error)
            else:
                await repo.retry_email(
                    conn, email, next_attempt_at=next_attempt(email["attempts"] + 1, now), error=error
                )
        log.warning(
            "partner_email_failed",
            kind=email["kind"],
            attempt=email["attempts"] + 1,
            error=error,
            reservation_no=booking.reservation_no,
        )
        return
    async with svc.db.write() as conn:
        await repo.finish_email(conn, email, status="sent", now=svc.clock.now(), recipients=recipients)
    log.info("partner_email_sent", kind=email["kind"], to=recipients, reservation_no=booking.reservation_no)
