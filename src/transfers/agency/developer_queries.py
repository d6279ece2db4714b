"""What ``Developers`` reads (docs/rules/agency-portal.md#pages), always of one client: the events sent
to it with their deliveries (newest first, by ``client_events.id``), and which client a delivery
belongs to (a ``Resend`` of another agency's delivery is a 404, as a missing one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, client_events, webhook_deliveries, webhook_endpoints

E, D, W = client_events.c, webhook_deliveries.c, webhook_endpoints.c
EVENTS_PAGE = 25


async def events_page(
    conn: AsyncConnection, client_id: int, *, below_id: int | None, limit: int
) -> list[dict[str, Any]]:
    query = (
        select(E.id, E.event_id, E.type, E.status, E.previous_status, E.created_at, bookings.c.reservation_no)
        .select_from(client_events.outerjoin(bookings, bookings.c.id == E.booking_id))
        .where(E.client_id == client_id)
        .order_by(E.id.desc())
        .limit(limit)
    )
    if below_id is not None:
        query = query.where(E.id < below_id)
    return [dict(r) for r in (await conn.execute(query)).mappings()]


async def event_of(conn: AsyncConnection, client_id: int, event_id: str) -> dict[str, Any] | None:
    """One of the client's events with the body its deliveries send; None for another client's."""
    if not event_id.startswith("evt_") or len(event_id) > 40 or not event_id.isascii() or "\x00" in event_id:
        return None
    query = (
        select(E.id, E.event_id, E.type, E.status, E.previous_status, E.created_at, E.body, bookings.c.reservation_no)
        .select_from(client_events.outerjoin(bookings, bookings.c.id == E.booking_id))
        .where(E.client_id == client_id, E.event_id == event_id)
    )
    row = (await conn.execute(query)).mappings().first()
    return None if row is None else dict(row)


async def deliveries_of(conn: AsyncConnection, event_pks: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    """Each event's deliveries (one per endpoint it went to), oldest first."""
    if not event_pks:
        return {}
    query = (
        select(
            D.id,
            D.event_pk,
            D.status,
            D.attempts,
            D.last_http_status,
            D.last_error,
            D.next_attempt_at,
            D.finished_at,
            W.public_id.label("endpoint_id"),
            W.url,
            W.status.label("endpoint_status"),
            W.deleted_at.label("endpoint_deleted_at"),
        )
        .select_from(webhook_deliveries.join(webhook_endpoints, W.id == D.endpoint_id))
        .where(D.event_pk.in_(list(event_pks)))
        .order_by(D.id)
    )
    found: dict[int, list[dict[str, Any]]] = {}
    for row in (await conn.execute(query)).mappings():
        found.setdefault(int(row["event_pk"]), []).append(dict(row))
    return found


async def delivery_client(conn: AsyncConnection, delivery_id: int) -> int | None:
    """The client whose event a delivery carries; None when there is no such delivery."""
    query = select(E.client_id).select_from(webhook_deliveries.join(client_events, E.id == D.event_pk))
    found = (await conn.execute(query.where(D.id == delivery_id))).scalar()
    return None if found is None else int(found)
