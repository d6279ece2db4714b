"""The client's ``booking.driver_position`` pushes, written in the positions' transaction
(docs/rules/ride.md#client-events): one ``webhook_deliveries`` row per endpoint of the client that
names the type ("*" does not count), delivered by the webhook dispatcher as the
``client.driver_position`` kind (``webhooks/positions.py``, tried once).

Coalesced: the booking's pushes still waiting (pending, not being sent) are closed as superseded,
and the new one takes their slot; otherwise it is due 15 s after the last one at the earliest, and
stale 15 s after it is due. Each push has its own webhook-id and body (the same for every endpoint),
fixed here: ``{"id", "type", "created_at", "data": {"reservation_no", "position"}}``.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import orjson
from sqlalchemy import ColumnElement, and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.client_events.events import EventType
from transfers.db.tables import webhook_deliveries, webhook_endpoints

D, W = webhook_deliveries.c, webhook_endpoints.c
DRIVER_POSITION_KIND = "client.driver_position"  # the delivery kind (``webhooks/positions.py``)
POSITION_EVENT = EventType.BOOKING_DRIVER_POSITION.value
POSITION_EVERY = timedelta(seconds=15)  # at most one position per booking and endpoint this often
POSITION_FRESH_FOR = timedelta(seconds=15)  # a position not sent by then is stale: dropped unsent
SUPERSEDED = "superseded by a newer position"
PENDING, FAILED = "pending", "failed"


def _waiting(now: datetime) -> ColumnElement[bool]:
    return and_(D.status == PENDING, or_(D.lease_until.is_(None), D.lease_until < now))


async def endpoints_naming_positions(conn: AsyncConnection, client_id: int) -> list[int]:
    """The client's enabled endpoints that name ``booking.driver_position`` itself."""
    rows = await conn.execute(
        select(W.id, W.events)
        .where(W.client_id == client_id, W.status == "enabled", W.deleted_at.is_(None))
        .order_by(W.id)
    )
    return [int(endpoint_id) for endpoint_id, events in rows if POSITION_EVENT in (events or ())]


async def push(
    conn: AsyncConnection,
    *,
    booking_id: int,
    client_id: int,
    reservation_no: str,
    position: dict[str, object],
    now: datetime,
) -> int:
    """Write the push of ``position`` to each endpoint naming the type; answers how many were written."""
    endpoints = await endpoints_naming_positions(conn, client_id)
    if not endpoints:
        return 0
    last = (
        await conn.execute(
            select(D.next_attempt_at, _waiting(now).label("waiting"))
            .where(D.booking_id == booking_id, D.kind == DRIVER_POSITION_KIND)
            .order_by(D.id.desc())
            .limit(1)
        )
    ).first()
    if last is None:
        due = now
    else:  # a waiting push keeps its slot (the newer position replaces it); else 15 s after the last one
        due = last.next_attempt_at if last.waiting else max(now, last.next_attempt_at + POSITION_EVERY)
    await conn.execute(
        update(webhook_deliveries)
        .where(D.booking_id == booking_id, D.kind == DRIVER_POSITION_KIND, _waiting(now))
        .values(status=FAILED, finished_at=now, last_error=SUPERSEDED, lease_until=None)
    )
    webhook_id = f"msg_{uuid.uuid4().hex}"
    data = {"reservation_no": reservation_no, "position": position}
    body = orjson.dumps({"id": webhook_id, "type": POSITION_EVENT, "created_at": now.isoformat(), "data": data})
    rows = [
        {
            "endpoint_id": endpoint_id,
            "kind": DRIVER_POSITION_KIND,
            "booking_id": booking_id,
            "webhook_id": webhook_id,
            "body": body.decode(),
            "status": PENDING,
            "attempts": 0,
            "next_attempt_at": due,
            "deadline_at": due + POSITION_FRESH_FOR,
            "created_at": now,
        }
        for endpoint_id in endpoints
    ]
    await conn.execute(insert(webhook_deliveries), rows)
    return len(rows)
