"""The read-only SQL of the console's pages: the dashboard's figures, the bookings list (search,
filters, cursor paging) and the audit log. Not scoped by owner: operators see every client's rows,
and nothing here is reachable from a client's or partner's request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, func, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.console.rows import AuditEntry, BookingLine, Choice, DeliverySummary, PartnerErrors, names
from transfers.db.tables import admin_audit, bookings, clients, delivery_attempts, outbox, partners
from transfers.delivery.repository import PARTNER_CALLS

PENDING, FAILED, EXPIRED = "pending", "failed", "expired"


# --- dashboard -------------------------------------------------------------------------------------------


async def bookings_by_status_since(conn: AsyncConnection, since: datetime, statuses: Sequence[str]) -> dict[str, int]:
    """Bookings created since ``since``, per status: one count per status in one statement, each a
    range of ``ix_bookings_status_created`` (a single GROUP BY over ``created_at >= since`` reads that
    whole index on PostgreSQL 15, which cannot skip over its leading column: 490 ms at a million rows)."""
    counts = [
        select(func.count())
        .where(bookings.c.status == status, bookings.c.created_at >= since)
        .scalar_subquery()
        .label(f"s{i}")
        for i, status in enumerate(statuses)
    ]
    row = (await conn.execute(select(*counts))).one()
    return {status: int(row[i]) for i, status in enumerate(statuses) if row[i]}


async def delivery_summary(conn: AsyncConnection) -> DeliverySummary:
    """Pending and failed (refused or expired) partner deliveries, and the oldest pending one's creation."""
    pending, oldest = (
        await conn.execute(
            select(func.count(), func.min(outbox.c.created_at)).where(outbox.c.status == PENDING, PARTNER_CALLS)
        )
    ).one()
    failed = (
        await conn.execute(select(func.count()).where(outbox.c.status.in_((FAILED, EXPIRED)), PARTNER_CALLS))
    ).scalar_one()
    return DeliverySummary(int(pending), int(failed), oldest)


async def partners_with_errors_since(conn: AsyncConnection, since: datetime) -> list[PartnerErrors]:
    """Partners whose deliveries failed an attempt since ``since`` (anything but ``done:...``), most first."""
    errors = func.count().label("errors")
    rows = await conn.execute(
        select(partners.c.id, partners.c.name, errors)
        .select_from(
            delivery_attempts.join(outbox, outbox.c.id == delivery_attempts.c.outbox_id).join(
                partners, partners.c.id == outbox.c.partner_id
            )
        )
        .where(delivery_attempts.c.started_at >= since, ~delivery_attempts.c.outcome.startswith("done:"), PARTNER_CALLS)
        .group_by(partners.c.id, partners.c.name)
        .order_by(errors.desc(), partners.c.id)
    )
    return [PartnerErrors(int(r.id), r.name, int(r.errors)) for r in rows]


# --- bookings list ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BookingFilter:
    """What the list is narrowed to; ``search`` is already cleaned (``console.forms``)."""

    search: str | None = None
    status: str | None = None
    client_id: int | None = None
    partner_id: int | None = None
    pickup_from: datetime | None = None  # inclusive
    pickup_to: datetime | None = None  # exclusive
    before: tuple[datetime, int] | None = None  # the cursor: (created_at, id) of the last row shown
    ids: tuple[int, ...] | None = None  # only these bookings (a scorecard count's page: routes/bookings.py)


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _search(query: Select[Any], text: str) -> Select[Any]:
    """A reservation number, a passenger e-mail (whole, any case), or a passenger surname (its
    beginning, any case) or partner reference (whole)."""
    if text.upper().startswith("TB-"):
        return query.where(bookings.c.reservation_no == text.upper())
    if "@" in text:
        return query.where(func.lower(bookings.c.passenger_email) == text.lower())
    return query.where(
        or_(
            func.lower(bookings.c.passenger_surname).like(_like_prefix(text.lower()), escape="\\"),
            bookings.c.partner_reference == text,
        )
    )


_PARTY_NAMES = {
    "client_name": clients.c.name.label("client_name"),
    "partner_name": partners.c.name.label("partner_name"),
}
_LINE_COLUMNS = tuple(_PARTY_NAMES[name] if name in _PARTY_NAMES else bookings.c[name] for name in names(BookingLine))


async def list_bookings(conn: AsyncConnection, wanted: BookingFilter, *, limit: int) -> list[BookingLine]:
    """Newest first (``created_at``, then ``id``), ``limit`` rows after the cursor."""
    query = (
        select(*_LINE_COLUMNS)
        .select_from(
            bookings.join(clients, clients.c.id == bookings.c.client_id).join(
                partners, partners.c.id == bookings.c.partner_id
            )
        )
        .order_by(bookings.c.created_at.desc(), bookings.c.id.desc())
        .limit(limit)
    )
    if wanted.search:
        query = _search(query, wanted.search)
    conditions = []
    if wanted.status is not None:
        conditions.append(bookings.c.status == wanted.status)
    if wanted.client_id is not None:
        conditions.append(bookings.c.client_id == wanted.client_id)
    if wanted.partner_id is not None:
        conditions.append(bookings.c.partner_id == wanted.partner_id)
    if wanted.pickup_from is not None:
        conditions.append(bookings.c.pickup_at >= wanted.pickup_from)
    if wanted.pickup_to is not None:
        conditions.append(bookings.c.pickup_at < wanted.pickup_to)
    if wanted.ids is not None:
        conditions.append(bookings.c.id.in_(wanted.ids))
    if wanted.before is not None:
        conditions.append(tuple_(bookings.c.created_at, bookings.c.id) < tuple_(*wanted.before))
    if conditions:
        query = query.where(and_(*conditions))
    return [BookingLine(*r) for r in await conn.execute(query)]


async def client_choices(conn: AsyncConnection, limit: int = 500) -> list[Choice]:
    rows = await conn.execute(select(clients.c.id, clients.c.name).order_by(clients.c.name, clients.c.id).limit(limit))
    return [Choice(*r) for r in rows]


async def partner_choices(conn: AsyncConnection, limit: int = 500) -> list[Choice]:
    rows = await conn.execute(
        select(partners.c.id, partners.c.name).order_by(partners.c.name, partners.c.id).limit(limit)
    )
    return [Choice(*r) for r in rows]


# --- audit log -------------------------------------------------------------------------------------------


async def audit_entries(
    conn: AsyncConnection,
    *,
    before: tuple[datetime, int] | None,
    limit: int,
    actor: str | None = None,
    subject: str | None = None,
) -> list[AuditEntry]:
    """``admin_audit`` rows newest first, after the cursor; ``actor``/``subject`` match whole values."""
    query = (
        select(*(admin_audit.c[name] for name in names(AuditEntry)))
        .order_by(admin_audit.c.created_at.desc(), admin_audit.c.id.desc())
        .limit(limit)
    )
    if before is not None:
        query = query.where(tuple_(admin_audit.c.created_at, admin_audit.c.id) < tuple_(*before))
    if actor:
        query = query.where(admin_audit.c.actor == actor)
    if subject:
        query = query.where(admin_audit.c.subject == subject)
    return [AuditEntry(*r) for r in await conn.execute(query)]
