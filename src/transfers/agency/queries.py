"""The agency's ``Bookings`` list (docs/rules/agency-portal.md#pages): its own bookings only, newest
first, found by what a support desk is told on the phone (a reservation number, the passenger's
surname, a flight number) and filtered by status and pickup day.

Paged by keyset like the API's list (``bookings/client_queries.py``, whose cursor it uses: sealed, bound
to the client): every page is one range scan of ``ix_bookings_client_created (client_id,
created_at, id)``, however many bookings the agency has (bench/agency_bench.py). A search narrows
that scan: the reservation number is unique; the surname is compared in lower case by prefix; the
flight number exactly, whatever its case and spaces."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, literal_column, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from transfers.bookings.client_queries import Position
from transfers.db.tables import bookings, client_events, webhook_deliveries, webhook_endpoints

MAX_SEARCH_CHARS = 200
PAGE_SIZE = 25


@dataclass(frozen=True, slots=True)
class BookingQuery:
    client_id: int
    text: str = ""
    statuses: tuple[str, ...] = ()
    pickup_from: datetime | None = None
    pickup_to: datetime | None = None
    after: Position | None = None
    limit: int = PAGE_SIZE


def _like_prefix(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{escaped}%"


def _conditions(wanted: BookingQuery) -> list[ColumnElement[bool]]:
    b = bookings.c
    where: list[ColumnElement[bool]] = [b.client_id == wanted.client_id]
    text = wanted.text.strip()[:MAX_SEARCH_CHARS]
    if text:
        compact = "".join(text.split()).upper()
        where.append(
            or_(
                b.reservation_no == text.upper(),
                # spelled as the index ix_bookings_client_flight is, literals and all, so it is used
                func.upper(func.replace(b.flight_number, literal_column("' '"), literal_column("''"))) == compact,
                func.lower(b.passenger_surname).like(_like_prefix(text.lower()), escape="\\"),
            )
        )
    if wanted.statuses:
        where.append(b.status.in_(wanted.statuses))
    if wanted.pickup_from is not None:
        where.append(b.pickup_at >= wanted.pickup_from)
    if wanted.pickup_to is not None:
        where.append(b.pickup_at < wanted.pickup_to)
    if wanted.after is not None:
        at, last_id = wanted.after.created_at, wanted.after.booking_id
        where.append(and_(b.created_at <= at, or_(b.created_at < at, b.id < last_id)))
    return where


async def agency_bookings(conn: AsyncConnection, wanted: BookingQuery) -> tuple[list[dict[str, Any]], bool]:
    """One page of the list's rows (the columns the table shows) and whether more follow."""
    b = bookings.c
    query = (
        select(
            b.id,
            b.reservation_no,
            b.status,
            b.airport_iata,
            b.pickup_at,
            b.passenger_name,
            b.passenger_surname,
            b.flight_number,
            b.vehicle_type,
            b.total,
            b.currency,
            b.created_at,
        )
        .where(*_conditions(wanted))
        .order_by(b.created_at.desc(), b.id.desc())
        .limit(wanted.limit + 1)
    )
    rows = [dict(r) for r in (await conn.execute(query)).mappings()]
    return rows[: wanted.limit], len(rows) > wanted.limit


async def events_of_booking(conn: AsyncConnection, client_id: int, booking_id: int) -> list[dict[str, Any]]:
    """The client events written for one booking of this client (docs/rules/webhooks.md), oldest
    first, each with its deliveries to the agency's endpoints (status, attempts, last answer)."""
    e, d, w = client_events.c, webhook_deliveries.c, webhook_endpoints.c
    rows = await conn.execute(
        select(
            e.id,
            e.event_id,
            e.type,
            e.status,
            e.previous_status,
            e.created_at,
            d.status.label("delivery_status"),
            d.attempts,
            d.last_http_status,
            d.last_error,
            d.finished_at,
            w.url,
        )
        .select_from(
            client_events.outerjoin(webhook_deliveries, d.event_pk == e.id).outerjoin(
                webhook_endpoints, w.id == d.endpoint_id
            )
        )
        .where(e.booking_id == booking_id, e.client_id == client_id)
        .order_by(e.id, d.id)
    )
    events: dict[int, dict[str, Any]] = {}
    for row in rows.mappings():
        event = events.setdefault(
            int(row["id"]),
            {k: row[k] for k in ("event_id", "type", "status", "previous_status", "created_at")} | {"deliveries": []},
        )
        if row["delivery_status"] is not None:
            event["deliveries"].append(
                {
                    k: row[k]
                    for k in ("delivery_status", "attempts", "last_http_status", "last_error", "finished_at", "url")
                }
            )
    return list(events.values())
