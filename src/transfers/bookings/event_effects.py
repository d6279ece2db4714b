"""The client events of every status change (issue 14, docs/rules/webhooks.md), the ``events`` entry
of ``effects.EFFECTS``, and the events of a booking that are not a change of its row (an incident's).

Each change's webhook events (``client_events/events.py`` decides which), with the booking's next
``sequence`` numbers and the BookingResource as of the change; the worker fans them out to the
client's endpoints later, so a change costs one INSERT whatever the number of endpoints. Every row
is built by ``_row``, so a new event of either kind has the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import CTE, ColumnElement, bindparam, insert, literal, null, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.models import Booking
from transfers.bookings.resource import booking_resource
from transfers.client_events import events as client_events
from transfers.client_events import repository as events_repo
from transfers.db.tables import client_events as events_table

if TYPE_CHECKING:
    from transfers.bookings.effects import Change, FastContext, FastShape


def _row(
    booking: Booking,
    kind: str,
    sequence: int,
    status: str,
    previous_status: str | None,
    snapshot: dict[str, Any],
    now: datetime,
    data: dict[str, Any] | None,
) -> dict[str, Any]:
    return {
        "event_id": client_events.new_event_id(),
        "client_id": booking.client_id,
        "booking_id": booking.id,
        "type": kind,
        "sequence": sequence,
        "status": status,
        "previous_status": previous_status,
        "booking": snapshot,
        "created_at": now,
        "data": data,
    }


def _specs(change: Change) -> list[client_events.EventSpec]:
    return client_events.events_of(
        change.moved,
        None if change.from_status is None else change.from_status.value,
        change.to_status.value,
        change.previous,
    )


async def events_write(conn: AsyncConnection, change: Change) -> None:
    await events_repo.insert_events(conn, await _rows_of(conn, change))


async def _rows_of(conn: AsyncConnection, change: Change) -> list[dict[str, Any]]:
    specs = _specs(change)  # decided once: the count bumps the sequence, the specs make the rows
    if not specs:
        return []
    if change.from_status is None:  # created with ``event_sequence`` 1 (``service._booking_values``)
        last = change.moved.event_sequence or 1
    else:
        last = await repo.bump_event_sequence(conn, change.moved.id, len(specs))
    booking = change.moved
    snapshot = booking_resource(booking, change.now)
    first = last - len(specs) + 1
    rows = [
        # ``data``: e.g. booking.pickup_time_changed's previous pickup and reason (issue 23)
        _row(
            booking,
            spec.type.value,
            first + i,
            change.to_status.value,
            spec.previous_status,
            snapshot,
            change.now,
            spec.data,
        )
        for i, spec in enumerate(specs)
    ]
    return rows


async def events_write_many(conn: AsyncConnection, changes: Sequence[Change]) -> None:
    """``events_write`` for several changes (of different bookings): one sequence bump and one insert for
    all of them, bounded (``repo.BATCH_ROWS`` rows a statement)."""
    decided = [(change, _specs(change)) for change in changes]
    decided = [(change, specs) for change, specs in decided if specs]
    counts = {c.moved.id: len(specs) for c, specs in decided if c.from_status is not None}
    if len(counts) != len([c for c, _ in decided if c.from_status is not None]):
        raise ValueError("one booking's changes are written one at a time: their events take successive numbers")
    bumped = await repo.bump_event_sequences(conn, counts)
    rows: list[dict[str, Any]] = []
    for change, specs in decided:
        booking = change.moved
        last = (booking.event_sequence or 1) if change.from_status is None else bumped[booking.id]
        snapshot = booking_resource(booking, change.now)
        first = last - len(specs) + 1
        status = change.to_status.value
        rows += [
            _row(booking, spec.type.value, first + i, status, spec.previous_status, snapshot, change.now, spec.data)
            for i, spec in enumerate(specs)
        ]
    for start in range(0, len(rows), repo.BATCH_ROWS):
        await events_repo.insert_events(conn, rows[start : start + repo.BATCH_ROWS])


def events_fragment(ctx: FastContext) -> dict[str, CTE]:
    """The one event of a fast statement: ``booking.created`` (the inserted row carries sequence 1)
    or ``booking.status_changed`` (the UPDATE sets ``event_sequence = event_sequence + 1``,
    ``fast_paths``); the other events need the booking before the change, which no fast path reads."""
    shape, types = ctx.shape, events_table.c
    previous: ColumnElement[Any]
    if shape.from_status is None:
        kind, previous = client_events.EventType.BOOKING_CREATED.value, null()
    elif shape.from_status is not shape.to_status:
        kind = client_events.EventType.BOOKING_STATUS_CHANGED.value
        previous = literal(shape.from_status.value, types.previous_status.type)
    else:
        raise NotImplementedError("a fast statement changes the status")
    moved = ctx.moved.c
    return {
        "ev": insert(events_table)
        .from_select(
            [
                "event_id",
                "client_id",
                "booking_id",
                "type",
                "sequence",
                "status",
                "previous_status",
                "booking",
                "created_at",
            ],
            select(
                bindparam("ev_id", type_=types.event_id.type),
                moved.client_id,
                moved.id,
                literal(kind, types.type.type),
                moved.event_sequence,
                literal(shape.to_status.value, types.status.type),
                previous,
                bindparam("ev_booking", type_=types.booking.type),
                ctx.now,
            ),
        )
        .cte("ev")
    }


def events_params(change: Change, shape: FastShape) -> dict[str, Any]:
    """A fast creation knows every column of the booking but its id, which the resource does not
    show, so its snapshot is rendered here; an acknowledgement read nothing (the fan-out renders it
    from the row with this event's status)."""
    snapshot = None
    if change.booking is not None:
        snapshot = booking_resource(change.booking, change.now)
    return {"ev_id": client_events.new_event_id(), "ev_booking": snapshot}


async def write_incident_event(
    conn: AsyncConnection, booking: Booking, *, opened: bool, incident: dict[str, Any], now: datetime
) -> None:
    """``booking.incident_opened`` / ``booking.incident_resolved`` (docs/rules/incidents.md#client-events):
    an event of the booking that is not a change of its row, written by the incident's use case in
    its transaction, with the booking's next ``sequence`` and ``data.incident``. ``booking``: as of
    the incident's change (locked by the caller)."""
    kind = (
        client_events.EventType.BOOKING_INCIDENT_OPENED if opened else client_events.EventType.BOOKING_INCIDENT_RESOLVED
    )
    sequence = await repo.bump_event_sequence(conn, booking.id, 1)
    snapshot = booking_resource(booking, now)
    # ``data`` is merged into the body's data (``events.booking_data``)
    row = _row(booking, kind.value, sequence, booking.status.value, None, snapshot, now, {"incident": incident})
    await events_repo.insert_events(conn, [row])
