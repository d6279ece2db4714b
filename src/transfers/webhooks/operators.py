"""Client webhook deliveries as operators see them: the listing and the retry of ``transfers outbox
list/retry`` and the console's delivery pages, and the backlog the metrics scrape reports (the
partner outbox's counterpart is ``delivery/operators.py``). The delivery engine's own statements
are ``repository.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, client_events, webhook_deliveries, webhook_endpoints
from transfers.webhooks.models import CLIENT_WEBHOOK, OperatorDelivery, RetryTarget
from transfers.webhooks.repository import FAILED, PENDING

E, D, W = client_events.c, webhook_deliveries.c, webhook_endpoints.c


_LISTED: tuple[Any, ...] = (
    D.id,
    D.status,
    D.attempts,
    D.next_attempt_at,
    D.deadline_at,
    D.lease_until,
    D.last_error,
    D.last_http_status,
    D.created_at,
    D.finished_at,
    E.event_id,
    E.type,
    E.client_id,
    bookings.c.reservation_no,
    W.url,
    W.public_id.label("endpoint_id"),
)


async def list_for_operator(
    conn: AsyncConnection, *, statuses: Sequence[str] | None, limit: int
) -> list[OperatorDelivery]:
    """Newest first, with the event, the client and the endpoint's URL."""
    query = (
        select(*_LISTED)
        .select_from(
            webhook_deliveries.join(client_events, E.id == D.event_pk)
            .join(webhook_endpoints, W.id == D.endpoint_id)
            .outerjoin(bookings, bookings.c.id == E.booking_id)
        )
        .order_by(D.id.desc())
        .limit(limit)
    )
    if statuses is not None:
        query = query.where(D.status.in_(list(statuses)))
    return [OperatorDelivery(*r) for r in await conn.execute(query)]


async def retry(conn: AsyncConnection, delivery_id: int, *, now: datetime, deadline: datetime) -> bool:
    """A failed delivery pending again, due now, with a new deadline; same event, same webhook-id."""
    result = await conn.execute(
        update(webhook_deliveries)
        .where(D.id == delivery_id, D.status == FAILED)
        .values(status=PENDING, next_attempt_at=now, deadline_at=deadline, lease_until=None, finished_at=None)
    )
    return result.rowcount == 1


async def pending_summary(conn: AsyncConnection) -> tuple[int, datetime | None]:
    # Client events only: a pending driver position (tried once, dropped when stale) is nobody's backlog.
    count, oldest = (
        await conn.execute(
            select(func.count(), func.min(D.created_at)).where(D.status == PENDING, D.kind == CLIENT_WEBHOOK)
        )
    ).one()
    return int(count), oldest


_LOCKED: tuple[Any, ...] = (
    D.id,
    D.status,
    D.attempts,
    D.last_error,
    D.finished_at,
    D.next_attempt_at,
    E.event_id,
    E.type,
    E.client_id,
    bookings.c.reservation_no,
    W.public_id.label("endpoint_id"),
    W.status.label("endpoint_status"),
    W.deleted_at.label("endpoint_deleted_at"),
)


async def lock_for_retry(conn: AsyncConnection, delivery_id: int) -> RetryTarget | None:
    """A delivery with its event, booking number and endpoint state, the delivery's row locked
    (``webhooks/retry.py``, the operator's retry)."""
    query = (
        select(*_LOCKED)
        .select_from(
            webhook_deliveries.join(client_events, E.id == D.event_pk)
            .join(webhook_endpoints, W.id == D.endpoint_id)
            .outerjoin(bookings, bookings.c.id == E.booking_id)
        )
        .where(D.id == delivery_id)
        .with_for_update(of=webhook_deliveries)
    )
    row = (await conn.execute(query)).first()
    return RetryTarget(*row) if row else None
