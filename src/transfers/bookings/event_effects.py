"""The client events of every status change (docs/rules/webhooks.md), the ``events`` entry
of ``effects.EFFECTS``, and the events of a booking that are not a change of its row (an incident's).

Each change's webhook events (``client_events/events.py`` decides which), with the booking's next
``sequence`` numbers and the BookingResource as of the change; the worker fans them out to the
client's endpoints later, so a change costs one INSERT whatever the number of endpoints. Every row
takes its own columns from ``_event``, so a new event of either kind has the same columns; ``event_rows`` is the rule
both the general path and the fast statements write (``bookings/effect_rows.py``).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.effect_rows import BOOKING_ID, CLIENT_ID, NOW, Bump, Insert, Of, Step
from transfers.bookings.models import Booking
from transfers.bookings.resource import booking_resource
from transfers.client_events import events as client_events
from transfers.client_events import repository as events_repo

if TYPE_CHECKING:
    from transfers.bookings.effects import Change


def _event(
    kind: str, status: str, previous_status: str | None, snapshot: dict[str, Any] | None, data: dict[str, Any] | None
) -> dict[str, Any]:
    """The columns of an event of either kind that are its own (not the booking's, its number or time)."""
    return {
        "event_id": client_events.new_event_id(),
        "type": kind,
        "status": status,
        "previous_status": previous_status,
        "booking": snapshot,
        "data": data,
    }


def event_rows(change: Change) -> list[Step]:
    """The change's webhook events (``client_events/events.py`` decides which), numbered after the
    booking's last ``sequence``: a creation's from the inserted row's (1, ``service._booking_values``),
    a later change's taken by a ``Bump`` of the booking row. Each row carries the BookingResource as
    of the change; a change that read no booking (the fast acknowledgement) stores none, and the
    fan-out renders it from the row with the event's status (``webhooks/delivery.py``)."""
    booking = change.booking
    specs = client_events.events_of(
        booking,
        None if change.from_status is None else change.from_status.value,
        change.to_status.value,
        change.previous,
    )
    if not specs:
        return []
    steps: list[Step] = []
    count = len(specs)
    bump = None
    if change.from_status is not None:
        bump = Bump(count)
        steps.append(bump)
    last = (change.moved.event_sequence or 1) if bump is None else 0
    snapshot = None if booking is None else booking_resource(booking, change.now)
    status = change.to_status.value
    for i, spec in enumerate(specs):
        back = count - 1 - i  # the last event takes the last number
        # ``data``: e.g. booking.pickup_time_changed's previous pickup and reason
        known = _event(spec.type.value, status, spec.previous_status, snapshot, spec.data)
        if bump is None:
            known["sequence"] = last - back
            steps.append(Insert("client_events", known, _MADE))
        else:
            steps.append(Insert("client_events", known, {**_MADE, "sequence": Of(bump, "event_sequence", -back)}))
    return steps


_MADE = {"client_id": CLIENT_ID, "booking_id": BOOKING_ID, "created_at": NOW}


async def write_incident_event(
    conn: AsyncConnection, booking: Booking, *, opened: bool, incident: dict[str, Any], now: datetime
) -> None:
    """``booking.incident_opened`` / ``booking.incident_resolved`` (docs/rules/incidents.md#client-events),
    with ``data.incident``. ``booking``: as of the incident's change (locked by the caller)."""
    kind = (
        client_events.EventType.BOOKING_INCIDENT_OPENED if opened else client_events.EventType.BOOKING_INCIDENT_RESOLVED
    )
    await write_booking_event(conn, booking, kind, {"incident": incident}, now=now)


async def write_booking_event(
    conn: AsyncConnection, booking: Booking, kind: client_events.EventType, data: dict[str, Any], *, now: datetime
) -> None:
    """An event of the booking that is not a change of its row (an incident's, a failed message's:
    docs/rules/messages.md#sending), written by its use case in its transaction, with the booking's next
    ``sequence``; ``data`` is merged into the body's ``data`` (``events.booking_data``). ``booking``: as of
    the event (locked by the caller)."""
    sequence = await repo.bump_event_sequence(conn, booking.id, 1)
    snapshot = booking_resource(booking, now)
    row = {
        **_event(kind.value, booking.status.value, None, snapshot, data),
        "client_id": booking.client_id,
        "booking_id": booking.id,
        "sequence": sequence,
        "created_at": now,
    }
    await events_repo.insert_events(conn, [row])
