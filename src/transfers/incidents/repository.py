"""Incident persistence (docs/rules/incidents.md). Flushes, never commits: the use cases own the
transaction. Reads scoped by owner where an outsider asks (the client's booking, the partner's)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, incidents
from transfers.incidents.models import Incident, QueuedIncident

T = incidents.c
_SELECT: Select[Any] = select(
    T.id,
    T.public_id,
    T.booking_id,
    bookings.c.reservation_no,
    bookings.c.currency,
    T.type,
    T.status,
    T.reported_by,
    T.description,
    T.created_at,
    T.responsible,
    T.refund,
    T.note,
    T.resolved_at,
    T.resolved_by,
).select_from(incidents.join(bookings, bookings.c.id == T.booking_id))


class DuplicateIncident(Exception):
    """``UNIQUE (booking_id, type)`` refused the row: another report of that type won the race."""


async def insert_incident(conn: AsyncConnection, values: dict[str, Any]) -> int:
    """Insert one incident; DuplicateIncident when the booking has one of that type already (the
    caller's transaction is then unusable on PostgreSQL and must roll back)."""
    try:
        result = await conn.execute(insert(incidents).values(**values).returning(T.id))
    except IntegrityError as exc:
        raise DuplicateIncident() from exc
    return int(result.scalar_one())


async def get(conn: AsyncConnection, incident_id: int) -> Incident:
    row = (await conn.execute(_SELECT.where(T.id == incident_id))).mappings().one()
    return Incident.from_row(row)


async def by_public_id(conn: AsyncConnection, public_id: str) -> Incident | None:
    row = (await conn.execute(_SELECT.where(T.public_id == public_id))).mappings().first()
    return None if row is None else Incident.from_row(row)


async def of_booking(conn: AsyncConnection, booking_id: int) -> list[Incident]:
    """The booking's incidents, oldest first (the API's list, the console's and portal's pages)."""
    rows = await conn.execute(_SELECT.where(T.booking_id == booking_id).order_by(T.created_at, T.id))
    return [Incident.from_row(r) for r in rows.mappings()]


async def type_exists(conn: AsyncConnection, booking_id: int, incident_type: str) -> bool:
    found = await conn.execute(select(T.id).where(T.booking_id == booking_id, T.type == incident_type))
    return found.first() is not None


async def listing(conn: AsyncConnection, *, open_only: bool, limit: int = 500) -> list[Incident]:
    """The operators' list: open ones oldest first (the queue to work through), else newest first."""
    query = _SELECT.limit(limit)
    if open_only:
        query = query.where(T.status == "OPEN").order_by(T.created_at, T.id)
    else:
        query = query.order_by(T.created_at.desc(), T.id.desc())
    return [Incident.from_row(r) for r in (await conn.execute(query)).mappings()]


async def open_queue(conn: AsyncConnection, *, limit: int = 200) -> list[QueuedIncident]:
    """The console's queue (docs/console/index.md#incidents): open incidents oldest first, each with what the
    list shows of its booking (status, pickup, airport). ``ix_incidents_status_created`` serves the order."""
    query = (
        _SELECT.add_columns(bookings.c.status.label("booking_status"), bookings.c.pickup_at, bookings.c.airport_iata)
        .where(T.status == "OPEN")
        .order_by(T.created_at, T.id)
        .limit(limit)
    )
    rows = (await conn.execute(query)).mappings()
    return [QueuedIncident(Incident.from_row(r), r["booking_status"], r["pickup_at"], r["airport_iata"]) for r in rows]


async def count_open(conn: AsyncConnection) -> int:
    """How many incidents wait for an operator (the dashboard's count)."""
    found = await conn.execute(select(func.count()).select_from(incidents).where(T.status == "OPEN"))
    return int(found.scalar_one())


async def mark_resolved(
    conn: AsyncConnection,
    incident_id: int,
    *,
    responsible: str,
    refund: Decimal,
    note: str | None,
    now: datetime,
    by: str,
) -> bool:
    """Compare-and-set OPEN -> RESOLVED: False when someone else resolved it first (nothing written)."""
    result = await conn.execute(
        update(incidents)
        .where(T.id == incident_id, T.status == "OPEN")
        .values(status="RESOLVED", responsible=responsible, refund=refund, note=note, resolved_at=now, resolved_by=by)
    )
    return result.rowcount == 1


async def partner_refunds(conn: AsyncConnection, booking_id: int) -> Decimal:
    """The refunds of the booking's incidents resolved as the partner's responsibility (0.00: none)."""
    total = (
        await conn.execute(
            select(func.sum(incidents.c.refund)).where(
                incidents.c.booking_id == booking_id, incidents.c.responsible == "partner"
            )
        )
    ).scalar()
    return Decimal("0.00") if total is None else Decimal(total)
