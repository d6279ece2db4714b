"""The SQL of the messages' planning passes (docs/rules/messages.md#timing): the client events not
planned yet and their marks, the facts planning reads, the reminders due, a moved pickup's expiry and the
coalescing of driver changes. Every function takes the caller's connection (the caller owns the
transaction).

Two planners at once: one owns an event by inserting its mark (``message_planned_events``, ON CONFLICT
DO NOTHING ... RETURNING: the second insert of a mark returns nothing).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, and_, cast, exists, func, literal, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import ColumnElement

from transfers.db.tables import (
    booking_transitions,
    bookings,
    client_events,
    client_message_settings,
    message_planned_events,
    traveller_messages,
)
from transfers.rows import row_type

M = traveller_messages
E = client_events
B = bookings
P = message_planned_events
S = client_message_settings
FIRST_LOOKBACK = 100_000  # no mark yet: the planner's window starts this many events back


def _insert(conn: AsyncConnection, table: Any) -> Any:
    return (sqlite_insert if conn.dialect.name == "sqlite" else pg_insert)(table)


# --- the planner: events not planned yet ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventRow:
    pk: int
    client_id: int
    booking_id: int
    type: str
    status: str | None
    previous_status: str | None
    data: dict[str, Any] | None
    snapshot: dict[str, Any] | None
    created_at: datetime


async def window_start(conn: AsyncConnection) -> int:
    """The lowest event id the planner looks at: its oldest mark still kept (the marks are purged past
    the window), or, without any mark, the last ``FIRST_LOOKBACK`` events (the 2-day filter on their
    time still applies)."""
    low = (await conn.execute(select(func.min(P.c.event_pk)))).scalar()
    if low is not None:
        return int(low)
    top = (await conn.execute(select(func.max(E.c.id)))).scalar()
    return max(0, int(top or 0) - FIRST_LOOKBACK)


async def unplanned_events(
    conn: AsyncConnection, *, low: int, since: datetime, types: Sequence[str], limit: int
) -> list[EventRow]:
    """Events of ``types`` from ``low`` on and written since ``since``, of clients that have message
    settings, with no mark: oldest first. An event committed late under a lower id is still found (the
    anti-join, not a cursor)."""
    marked = exists().where(P.c.event_pk == E.c.id)
    rows = await conn.execute(
        select(
            E.c.id,
            E.c.client_id,
            E.c.booking_id,
            E.c.type,
            E.c.status,
            E.c.previous_status,
            E.c.data,
            E.c.booking,
            E.c.created_at,
        )
        .select_from(E.join(S, S.c.client_id == E.c.client_id))
        .where(
            E.c.id >= low,
            E.c.created_at >= since,
            E.c.type.in_(list(types)),
            E.c.booking_id.is_not(None),
            ~marked,
        )
        .order_by(E.c.id)
        .limit(limit)
    )
    return [
        EventRow(
            int(r.id),
            int(r.client_id),
            int(r.booking_id),
            r.type,
            r.status,
            r.previous_status,
            r.data if isinstance(r.data, dict) else None,
            r.booking if isinstance(r.booking, dict) else None,
            r.created_at,
        )
        for r in rows
    ]


async def mark_planned(conn: AsyncConnection, pks: Collection[int], now: datetime) -> set[int]:
    """Mark the events planned; the ones this transaction marked (another worker's marks return
    nothing: that worker plans them)."""
    if not pks:
        return set()
    statement = (
        _insert(conn, P)
        .values([{"event_pk": pk, "planned_at": now} for pk in sorted(pks)])
        .on_conflict_do_nothing(index_elements=[P.c.event_pk])
        .returning(P.c.event_pk)
    )
    return {int(pk) for pk in (await conn.execute(statement)).scalars()}


async def purge_marks(conn: AsyncConnection, before: datetime, *, limit: int) -> int:
    """Marks of events planned before ``before`` (past the window). All of them, the newest included: a
    mark must never outlive its event, which the client events' own prune deletes after 30 days."""
    doomed = select(P.c.event_pk).where(P.c.planned_at < before).limit(limit)
    done = await conn.execute(P.delete().where(P.c.event_pk.in_(doomed)))
    return int(done.rowcount or 0)


# --- the facts planning reads -------------------------------------------------------------------------

FACT_COLUMNS = (
    B.c.id,
    B.c.client_id,
    B.c.reservation_no,
    B.c.status,
    B.c.airport_iata,
    B.c.pickup_at,
    B.c.created_at,
    B.c.passenger_email,
    B.c.passenger_phone,
    B.c.passenger_language,
    B.c.message_channels,
    B.c.cancelled_by,
    B.c.driver_name,
    B.c.driver_plate,
)


@row_type
class FactRow:
    """A booking's columns planning reads (``FACT_COLUMNS``) and its first approval (None: never, or not read)."""

    id: int
    client_id: int
    reservation_no: str
    status: str
    airport_iata: str
    pickup_at: datetime
    created_at: datetime
    passenger_email: str | None
    passenger_phone: str | None
    passenger_language: str | None
    message_channels: Any
    cancelled_by: str | None
    driver_name: str | None
    driver_plate: str | None
    approved_at: datetime | None


def _fact(row: Any) -> FactRow:
    return FactRow(**dict(row._mapping))


async def bookings_facts(conn: AsyncConnection, booking_ids: Collection[int]) -> dict[int, FactRow]:
    """The bookings' columns planning reads, with ``approved_at`` (their first APPROVED transition)."""
    if not booking_ids:
        return {}
    approved = (
        select(func.min(booking_transitions.c.created_at))
        .where(booking_transitions.c.booking_id == B.c.id, booking_transitions.c.to_status == "APPROVED")
        .scalar_subquery()
    )
    rows = await conn.execute(select(*FACT_COLUMNS, approved.label("approved_at")).where(B.c.id.in_(list(booking_ids))))
    return {int(r.id): _fact(r) for r in rows}


async def sms_statuses(conn: AsyncConnection, booking_ids: Collection[int]) -> dict[int, list[str]]:
    """The statuses of each booking's SMS messages (the limit counts them)."""
    found: dict[int, list[str]] = {}
    if booking_ids:
        rows = await conn.execute(
            select(M.c.booking_id, M.c.status).where(M.c.booking_id.in_(list(booking_ids)), M.c.channel == "sms")
        )
        for r in rows:
            found.setdefault(int(r.booking_id), []).append(r.status)
    return found


# --- the reminders pass ---------------------------------------------------------------------------------


def _made_a_day_before(conn: AsyncConnection) -> ColumnElement[bool]:
    """The booking was made more than 24 h before its pickup (docs/rules/messages.md#timing)."""
    if conn.dialect.name == "sqlite":
        return func.julianday(B.c.pickup_at) - func.julianday(B.c.created_at) > 1.0
    return B.c.pickup_at - B.c.created_at > text("interval '24 hours'")


async def upcoming(
    conn: AsyncConnection, *, now: datetime, horizon: datetime, after: tuple[datetime, int] | None, limit: int
) -> list[FactRow]:
    """APPROVED bookings picked up after ``now`` and up to ``horizon``, made more than 24 h before their
    pickup, of clients with a channel on: by pickup, from after ``after`` (the last (pickup, id) of the
    previous batch). One range of the (status, pickup_at) index; which of them have their reminder
    already is ``with_reminder`` (no anti-join here: a plan that must hold while the messages table
    grows faster than its statistics)."""
    statement = (
        select(*FACT_COLUMNS, literal(None).label("approved_at"))
        .select_from(B.join(S, and_(S.c.client_id == B.c.client_id, cast(S.c.channels, String) != "[]")))
        .where(B.c.status == "APPROVED", B.c.pickup_at > now, B.c.pickup_at <= horizon, _made_a_day_before(conn))
        .order_by(B.c.pickup_at, B.c.id)
        .limit(limit)
    )
    if after is not None:
        statement = statement.where(or_(B.c.pickup_at > after[0], and_(B.c.pickup_at == after[0], B.c.id > after[1])))
    return [_fact(r) for r in await conn.execute(statement)]


async def with_reminder(conn: AsyncConnection, booking_ids: Collection[int]) -> set[int]:
    """Those of ``booking_ids`` whose reminder is written (by the messages' booking index)."""
    if not booking_ids:
        return set()
    rows = await conn.execute(
        select(M.c.booking_id).where(M.c.booking_id.in_(list(booking_ids)), M.c.template == "reminder").distinct()
    )
    return {int(b) for b in rows.scalars()}


# --- a pickup that moved ---------------------------------------------------------------------------------


async def follow_pickup(conn: AsyncConnection, booking_id: int, pickup_at: datetime, templates: Collection[str]) -> int:
    """The booking's waiting messages of ``templates`` (those that expire at the pickup) now expire at
    ``pickup_at``, the pickup as it is now: one moved later keeps them worth sending until then
    (docs/rules/messages.md#timing). How many rows changed."""
    done = await conn.execute(
        update(M)
        .where(
            M.c.booking_id == booking_id,
            M.c.status == "scheduled",
            M.c.template.in_(list(templates)),
            M.c.expires_at.is_distinct_from(pickup_at),
        )
        .values(expires_at=pickup_at)
    )
    return int(done.rowcount or 0)


# --- coalescing driver changes --------------------------------------------------------------------------


async def supersede_driver_changes(conn: AsyncConnection, booking_id: int, keep: Collection[str], now: datetime) -> int:
    """The booking's ``driver_changed`` messages still waiting and never tried (no lease) other than
    ``keep`` become ``skipped`` / ``superseded``: a later change replaces the pending one."""
    done = await conn.execute(
        update(M)
        .where(
            M.c.booking_id == booking_id,
            M.c.template == "driver_changed",
            M.c.status == "scheduled",
            M.c.lease_until.is_(None),
            M.c.dedupe_key.not_in(list(keep)),
        )
        .values(status="skipped", reason="superseded", finished_at=now)
    )
    return int(done.rowcount or 0)


async def revive_superseded(conn: AsyncConnection, key: str, *, scheduled_for: datetime, expires_at: datetime) -> bool:
    """A driver change back to a driver whose message was superseded: that message waits again."""
    done = await conn.execute(
        update(M)
        .where(M.c.dedupe_key == key, M.c.status == "skipped", M.c.reason == "superseded")
        .values(status="scheduled", reason=None, finished_at=None, scheduled_for=scheduled_for, expires_at=expires_at)
    )
    return bool(done.rowcount)
