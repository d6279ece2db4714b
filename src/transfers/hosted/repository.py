"""Hosted partners' SQL: their partner rows, the portal's accounts and reads, the auto-decline job's claim
(docs/rules/hosted-partners.md).

The rate cards and the daily capacity counters are in ``ratecards/repository.py``: the partner
directory, the search and the booking's seat claim read and write them from below this package.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.bookings.trip import Driver
from transfers.db.tables import bookings, partner_users, partners
from transfers.rows import row_type


@row_type
class HostedPartner:
    """What the hosted checks read of a ``partners`` row."""

    id: int
    name: str
    hosted: bool
    status: str


@row_type
class PortalPartner:
    """A ``partners`` row without its secrets: the portal's header and pages."""

    id: int
    name: str
    hosted: bool
    status: str
    airports: str  # comma-separated IATA codes, or "*"
    markup_percent: Decimal
    is_sandbox: bool


@row_type
class PartnerUser:
    """One ``partner_users`` row (the password's argon2id hash included: sign-in reads it)."""

    id: int
    partner_id: int
    email: str
    password_hash: str
    status: str
    created_at: datetime


@row_type
class ListedPartnerUser:
    """A line of a partner's users (portal account page, console): never the password's hash."""

    id: int
    email: str
    status: str
    created_at: datetime


@row_type
class UsedDriver:
    """A driver this partner named before, and the latest booking that named it (the approve form's
    choice names that booking)."""

    name: str
    phone: str
    plate: str
    booking: int


HOSTED_PARTNER_FIELDS = tuple(f.name for f in fields(HostedPartner))
PORTAL_PARTNER_FIELDS = tuple(f.name for f in fields(PortalPartner))
PARTNER_USER_FIELDS = tuple(f.name for f in fields(PartnerUser))
LISTED_PARTNER_USER_FIELDS = tuple(f.name for f in fields(ListedPartnerUser))
_USER_COLUMNS = tuple(partner_users.c[name] for name in PARTNER_USER_FIELDS)


async def hosted_partner(conn: AsyncConnection, partner_id: int) -> HostedPartner | None:
    """The partner's id, name, hosted flag and status, or None."""
    row = (
        await conn.execute(
            select(*(partners.c[name] for name in HOSTED_PARTNER_FIELDS)).where(partners.c.id == partner_id)
        )
    ).first()
    return HostedPartner(*row) if row else None


async def lock_unaccepted(
    conn: AsyncConnection, statuses: list[str], *, created_before: datetime, pickup_before: datetime, limit: int
) -> list[Booking]:
    """Hosted partners' bookings in ``statuses`` created at or before ``created_before`` or picked up
    at or before ``pickup_before``, row-locked (skipping rows another worker holds on PostgreSQL)."""
    hosted_ids = select(partners.c.id).where(partners.c.hosted.is_(True))
    rows = await conn.execute(
        select(bookings)
        .where(
            bookings.c.status.in_(statuses),
            bookings.c.partner_id.in_(hosted_ids),
            or_(bookings.c.created_at <= created_before, bookings.c.pickup_at <= pickup_before),
        )
        .order_by(bookings.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True, of=bookings)
    )
    return [Booking.from_row(r) for r in rows.mappings()]


# --- partner users (the portal's accounts) ------------------------------------------------------------


async def insert_partner_user(
    conn: AsyncConnection, *, partner_id: int, email: str, password_hash: str, now: datetime
) -> int:
    return int(
        (
            await conn.execute(
                insert(partner_users)
                .values(
                    partner_id=partner_id,
                    email=email,
                    password_hash=password_hash,
                    status="active",
                    created_at=now,
                )
                .returning(partner_users.c.id)
            )
        ).scalar_one()
    )


async def partner_user_by_email(conn: AsyncConnection, email: str) -> PartnerUser | None:
    row = (await conn.execute(select(*_USER_COLUMNS).where(partner_users.c.email == email))).first()
    return PartnerUser(*row) if row else None


async def partner_user(conn: AsyncConnection, user_id: int) -> PartnerUser | None:
    row = (await conn.execute(select(*_USER_COLUMNS).where(partner_users.c.id == user_id))).first()
    return PartnerUser(*row) if row else None


async def users_of_partner(conn: AsyncConnection, partner_id: int) -> list[ListedPartnerUser]:
    rows = await conn.execute(
        select(*(partner_users.c[name] for name in LISTED_PARTNER_USER_FIELDS))
        .where(partner_users.c.partner_id == partner_id)
        .order_by(partner_users.c.id)
    )
    return [ListedPartnerUser(*r) for r in rows]


async def set_partner_user_status(conn: AsyncConnection, partner_id: int, user_id: int, status: str) -> bool:
    result = await conn.execute(
        update(partner_users)
        .where(partner_users.c.id == user_id, partner_users.c.partner_id == partner_id)
        .values(status=status)
    )
    return result.rowcount == 1


# --- the partner portal's reads (always scoped by the partner) ----------------------------------------

_WAITING = ("PENDING", "PENDING_APPROVAL")
_ENDED = ("CANCELLED", "DECLINED", "FAILED", "COMPLETED", "REFUNDED")


async def portal_bookings(
    conn: AsyncConnection, partner_id: int, view: str, now: datetime, limit: int
) -> list[Booking]:
    """``new``: waiting for the partner (soonest pickup first); ``upcoming``: approved, pickup ahead
    (soonest first); ``past``: ended or picked up already (latest pickup first)."""
    query = select(bookings).where(bookings.c.partner_id == partner_id)
    if view == "new":
        query = query.where(bookings.c.status.in_(_WAITING)).order_by(bookings.c.pickup_at, bookings.c.id)
    elif view == "upcoming":
        query = query.where(bookings.c.status == "APPROVED", bookings.c.pickup_at >= now).order_by(
            bookings.c.pickup_at, bookings.c.id
        )
    else:
        query = query.where(
            or_(bookings.c.status.in_(_ENDED), (bookings.c.status == "APPROVED") & (bookings.c.pickup_at < now))
        ).order_by(bookings.c.pickup_at.desc(), bookings.c.id.desc())
    rows = await conn.execute(query.limit(limit))
    return [Booking.from_row(r) for r in rows.mappings()]


async def portal_booking(conn: AsyncConnection, partner_id: int, reservation_no: str) -> Booking | None:
    row = (
        (
            await conn.execute(
                select(bookings).where(bookings.c.partner_id == partner_id, bookings.c.reservation_no == reservation_no)
            )
        )
        .mappings()
        .first()
    )
    return Booking.from_row(row) if row else None


async def partner_record(conn: AsyncConnection, partner_id: int) -> PortalPartner | None:
    """The partner's row (no secrets) for the portal's header and pages."""
    row = (
        await conn.execute(
            select(*(partners.c[name] for name in PORTAL_PARTNER_FIELDS)).where(partners.c.id == partner_id)
        )
    ).first()
    return PortalPartner(*row) if row else None


async def drivers_used(conn: AsyncConnection, partner_id: int, *, limit: int = 30) -> list[UsedDriver]:
    """The drivers this partner named on its bookings, most recently used first (the
    approve form suggests them instead of making the dispatcher retype one for every booking).
    Remembered by the bookings themselves, so nothing to keep in step; scoped to the partner."""
    latest = func.max(bookings.c.id).label("latest")
    rows = await conn.execute(
        select(bookings.c.driver_name, bookings.c.driver_phone, bookings.c.driver_plate, latest)
        .where(bookings.c.partner_id == partner_id, bookings.c.driver_name.is_not(None))
        .group_by(bookings.c.driver_name, bookings.c.driver_phone, bookings.c.driver_plate)
        .order_by(latest.desc())
        .limit(limit)
    )
    return [
        UsedDriver(r.driver_name, r.driver_phone or "", r.driver_plate or "", int(r.latest))
        for r in rows
        if r.driver_name
    ]


async def driver_of(conn: AsyncConnection, partner_id: int, booking_id: int) -> Driver | None:
    """The driver named on one of this partner's bookings (the approve form's "used before" choice
    names the booking it was last used on: a choice that stays right while the list changes)."""
    row = (
        await conn.execute(
            select(bookings.c.driver_name, bookings.c.driver_phone, bookings.c.driver_plate).where(
                bookings.c.id == booking_id, bookings.c.partner_id == partner_id, bookings.c.driver_name.is_not(None)
            )
        )
    ).first()
    if row is None:
        return None
    return Driver(row.driver_name, row.driver_phone or "", row.driver_plate or "")
