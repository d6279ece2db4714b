"""Booking persistence, always scoped by owner: a route never filters by id by hand."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.resource import RESOURCE_FIELDS
from transfers.db.direct import DirectRead
from transfers.db.engine import Database
from transfers.db.tables import booking_transitions, bookings


async def insert_booking(conn: AsyncConnection, values: dict[str, Any]) -> int:
    return int((await conn.execute(insert(bookings).values(**values).returning(bookings.c.id))).scalar_one())


# Built once: GET and cancel run it on every request, and building the expression and its cache key
# each time was ~6 % of a GET booking (bench/README.md, "Profile").
_FOR_CLIENT = select(bookings).where(bookings.c.reservation_no == bindparam("reservation_no"),
                                     bookings.c.client_id == bindparam("client_id"))
_RESOURCE_FOR_CLIENT = DirectRead(
    select(*(bookings.c[name] for name in RESOURCE_FIELDS)).where(
        bookings.c.reservation_no == bindparam("reservation_no"), bookings.c.client_id == bindparam("client_id")))


async def resource_fields_for_client(db: Database, client_id: int, reservation_no: str) -> dict[str, Any] | None:
    """The GET booking read: the resource's fields only, one statement outside any transaction,
    by the direct path (``db/direct.py``)."""
    return await db.read_one(_RESOURCE_FOR_CLIENT, reservation_no=reservation_no, client_id=client_id)


async def get_for_client(conn: AsyncConnection, client_id: int, reservation_no: str) -> dict[str, Any] | None:
    row = (await conn.execute(_FOR_CLIENT, {"reservation_no": reservation_no, "client_id": client_id})
           ).mappings().first()
    return dict(row) if row else None


async def get_for_partner(conn: AsyncConnection, partner_id: int, reservation_no: str) -> dict[str, Any] | None:
    row = (await conn.execute(
        select(bookings).where(bookings.c.reservation_no == reservation_no, bookings.c.partner_id == partner_id)
    )).mappings().first()
    return dict(row) if row else None


async def get_by_idempotency_key(conn: AsyncConnection, client_id: int, key: str) -> dict[str, Any] | None:
    row = (await conn.execute(
        select(bookings).where(bookings.c.client_id == client_id, bookings.c.idempotency_key == key)
    )).mappings().first()
    return dict(row) if row else None


async def get_by_id(conn: AsyncConnection, booking_id: int) -> dict[str, Any] | None:
    row = (await conn.execute(select(bookings).where(bookings.c.id == booking_id))).mappings().first()
    return dict(row) if row else None


async def get_by_reservation(conn: AsyncConnection, reservation_no: str) -> dict[str, Any] | None:
    """Operator view only (CLI): not scoped by owner."""
    row = (await conn.execute(select(bookings).where(bookings.c.reservation_no == reservation_no))).mappings().first()
    return dict(row) if row else None


async def set_status(conn: AsyncConnection, booking_id: int, expected: str, values: dict[str, Any]) -> bool:
    """Compare-and-set on the status: False when another transaction moved the booking first."""
    result = await conn.execute(
        update(bookings).where(and_(bookings.c.id == booking_id, bookings.c.status == expected)).values(**values)
    )
    return result.rowcount == 1


async def update_fields(conn: AsyncConnection, booking_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(bookings).where(bookings.c.id == booking_id).values(**values))


async def record_transition(conn: AsyncConnection, *, booking_id: int, from_status: str | None, to_status: str,
                            actor: str, reason: str | None, now: datetime) -> None:
    await conn.execute(insert(booking_transitions).values(
        booking_id=booking_id, from_status=from_status, to_status=to_status, actor=actor, reason=reason,
        created_at=now,
    ))


async def transitions_of(conn: AsyncConnection, booking_id: int) -> list[dict[str, Any]]:
    rows = await conn.execute(select(booking_transitions).where(booking_transitions.c.booking_id == booking_id)
                              .order_by(booking_transitions.c.id))
    return [dict(r._mapping) for r in rows]


async def release_idempotency_key(conn: AsyncConnection, client_id: int, key: str, *,
                                  created_before: datetime) -> None:
    """Free the client's Idempotency-Key held by a booking created before ``created_before``."""
    await conn.execute(update(bookings).where(
        bookings.c.client_id == client_id, bookings.c.idempotency_key == key, bookings.c.created_at < created_before,
    ).values(idempotency_key=None))
