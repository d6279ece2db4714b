"""The ``partner_emails`` table's statements (``hosted/mail.py``): an e-mail written once per booking
and kind (its unique ``dedupe_key``), claimed under a lease by the delivery engine's ``partner.email``
kind, retried, finished or closed with its recipients; and what an e-mail is composed from.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.db.tables import bookings, partner_emails, partner_users, partners
from transfers.rows import row_type


@row_type
class EmailRow:
    """One ``partner_emails`` row (``hosted/mail.PartnerEmail`` is the engine's message made from it)."""

    id: int
    partner_id: int
    booking_id: int
    kind: str
    dedupe_key: str
    status: str
    attempts: int
    next_attempt_at: datetime
    lease_until: datetime | None
    last_error: str | None
    recipients: list[str] | None  # JSON: who it went to, once sent
    created_at: datetime
    sent_at: datetime | None


EMAIL_FIELDS = tuple(f.name for f in fields(EmailRow))
_EMAIL_COLUMNS = tuple(partner_emails.c[name] for name in EMAIL_FIELDS)


async def enqueue_email(
    conn: AsyncConnection,
    *,
    partner_id: int,
    booking_id: int,
    kind: str,
    now: datetime,
    dedupe_key: str | None = None,
) -> None:
    """One e-mail per (kind, booking) (or per ``dedupe_key`` when given), whatever re-deliveries happen:
    the unique ``dedupe_key`` makes a second enqueue a no-op."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    await conn.execute(
        dialect.insert(partner_emails)
        .values(
            partner_id=partner_id,
            booking_id=booking_id,
            kind=kind,
            dedupe_key=dedupe_key or f"{kind}:{booking_id}",
            status="pending",
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        .on_conflict_do_nothing()
    )


async def claim_due_emails(
    conn: AsyncConnection, *, now: datetime, lease_until: datetime, limit: int
) -> list[EmailRow]:
    """Pending e-mails due now, leased to the caller (``SKIP LOCKED``: two workers never take one)."""
    candidates = (
        select(partner_emails.c.id)
        .where(
            partner_emails.c.status == "pending",
            partner_emails.c.next_attempt_at <= now,
            or_(partner_emails.c.lease_until.is_(None), partner_emails.c.lease_until < now),
        )
        .order_by(partner_emails.c.next_attempt_at, partner_emails.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = await conn.execute(
        update(partner_emails)
        .where(partner_emails.c.id.in_(candidates.scalar_subquery()))
        .values(lease_until=lease_until)
        .returning(*_EMAIL_COLUMNS)
    )
    return [EmailRow(*r) for r in rows]


async def email_context(
    conn: AsyncConnection, *, booking_id: int, partner_id: int
) -> tuple[Booking | None, list[str], str]:
    """The booking an e-mail is about, the partner's active users' addresses and the partner's name."""
    booking = (await conn.execute(select(bookings).where(bookings.c.id == booking_id))).mappings().first()
    users = await conn.execute(
        select(partner_users.c.email)
        .where(partner_users.c.partner_id == partner_id, partner_users.c.status == "active")
        .order_by(partner_users.c.id)
    )
    name = (await conn.execute(select(partners.c.name).where(partners.c.id == partner_id))).scalar_one()
    return (Booking.from_row(booking) if booking else None), [u.email for u in users], str(name)


async def finish_email(
    conn: AsyncConnection,
    email_id: int,
    lease_until: datetime | None,
    *,
    status: str,
    now: datetime,
    recipients: list[str] | None = None,
    error: str | None = None,
) -> bool:
    """Close an e-mail we hold the lease on (``lease_until`` as claimed: sent, logged or failed);
    False when the lease was lost."""
    result = await conn.execute(
        update(partner_emails)
        .where(
            partner_emails.c.id == email_id,
            partner_emails.c.lease_until == lease_until,
        )
        .values(
            status=status,
            sent_at=now,
            recipients=recipients,
            attempts=partner_emails.c.attempts + 1,
            last_error=error,
            lease_until=None,
        )
    )
    return result.rowcount == 1


async def close_email(
    conn: AsyncConnection, email_id: int, *, status: str, recipients: list[str], error: str | None
) -> None:
    """How an answered e-mail went (``sent`` or ``logged``) and to whom, in the transaction that
    finished it."""
    await conn.execute(
        update(partner_emails)
        .where(partner_emails.c.id == email_id)
        .values(status=status, recipients=recipients, last_error=error)
    )


async def retry_email(
    conn: AsyncConnection, email_id: int, lease_until: datetime | None, *, next_attempt_at: datetime, error: str
) -> None:
    await conn.execute(
        update(partner_emails)
        .where(
            partner_emails.c.id == email_id,
            partner_emails.c.lease_until == lease_until,
        )
        .values(
            attempts=partner_emails.c.attempts + 1,
            next_attempt_at=next_attempt_at,
            last_error=error[:1000],
            lease_until=None,
        )
    )


async def emails_of_booking(conn: AsyncConnection, booking_id: int) -> list[EmailRow]:
    rows = await conn.execute(
        select(*_EMAIL_COLUMNS).where(partner_emails.c.booking_id == booking_id).order_by(partner_emails.c.id)
    )
    return [EmailRow(*r) for r in rows]
