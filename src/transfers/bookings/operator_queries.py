"""Read-only booking listings for operators and the metrics scrape (not scoped by owner: never
reached from a client's request). Writes and the client-scoped reads live in ``repository.py``."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import ListedBooking
from transfers.db.tables import bookings, clients, partners


async def operator_list(
    conn: AsyncConnection,
    *,
    status: str | None = None,
    client_id: int | None = None,
    partner_id: int | None = None,
    limit: int = 50,
) -> list[ListedBooking]:
    """Bookings newest first with their client's and partner's names (``transfers bookings list``);
    each filter given narrows the list (AND)."""
    query = (
        select(
            bookings.c.id,
            bookings.c.reservation_no,
            bookings.c.status,
            bookings.c.client_id,
            clients.c.name.label("client_name"),
            bookings.c.partner_id,
            partners.c.name.label("partner_name"),
            bookings.c.airport_iata,
            bookings.c.pickup_at,
            bookings.c.total,
            bookings.c.net_total,
            bookings.c.currency,
            bookings.c.created_at,
        )
        .select_from(
            bookings.join(clients, clients.c.id == bookings.c.client_id).join(
                partners, partners.c.id == bookings.c.partner_id
            )
        )
        .order_by(bookings.c.created_at.desc(), bookings.c.id.desc())
        .limit(limit)
    )
    if status is not None:
        query = query.where(bookings.c.status == status)
    if client_id is not None:
        query = query.where(bookings.c.client_id == client_id)
    if partner_id is not None:
        query = query.where(bookings.c.partner_id == partner_id)
    return [ListedBooking.from_row(r) for r in (await conn.execute(query)).mappings()]


async def party_names(conn: AsyncConnection, booking_id: int) -> tuple[str | None, str | None]:
    """The names of the booking's client and partner (None for a row that is missing)."""
    row = (
        await conn.execute(
            select(clients.c.name.label("client_name"), partners.c.name.label("partner_name"))
            .select_from(
                bookings.outerjoin(clients, clients.c.id == bookings.c.client_id).outerjoin(
                    partners, partners.c.id == bookings.c.partner_id
                )
            )
            .where(bookings.c.id == booking_id)
        )
    ).first()
    if row is None:
        return None, None
    client_name, partner_name = row
    return (None if client_name is None else str(client_name), None if partner_name is None else str(partner_name))


async def count_by_status(conn: AsyncConnection) -> dict[str, int]:
    """Bookings per stored status (statuses without bookings are absent)."""
    rows = (await conn.execute(select(bookings.c.status, func.count()).group_by(bookings.c.status))).all()
    return {str(status): int(count) for status, count in rows}
