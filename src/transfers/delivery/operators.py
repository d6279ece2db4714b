"""The outbox as operators see it: the listing and the retry of ``transfers outbox ...``, the
backlog the metrics scrape reports, and a booking's messages with their attempt logs (``transfers
bookings show``, the console's story). Reads, and one action (``retry``) that puts a message that
gave up back in the queue; the engine's own statements are ``repository.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, delivery_attempts, outbox, partners
from transfers.delivery.models import (
    DELIVERY_ATTEMPT_FIELDS,
    EXPIRED,
    FAILED,
    PENDING,
    DeliveryAttempt,
    ListedMessage,
    OutboxMessage,
)
from transfers.delivery.repository import PARTNER_CALLS

GAVE_UP = (FAILED, EXPIRED)  # delivery stopped: a permanent refusal, or the deadline passed


async def list_messages(
    conn: AsyncConnection, *, statuses: Sequence[str] | None = None, limit: int = 50
) -> list[ListedMessage]:
    """Newest first, with the booking's reservation number and the partner's name (None for a message
    about no booking, or to no partner); all statuses when ``statuses`` is None."""
    query = (
        select(*outbox.c, bookings.c.reservation_no.label("l_reservation_no"), partners.c.name.label("l_partner_name"))
        .select_from(
            outbox.outerjoin(bookings, bookings.c.id == outbox.c.booking_id).outerjoin(
                partners, partners.c.id == outbox.c.partner_id
            )
        )
        .order_by(outbox.c.id.desc())
        .limit(limit)
    )
    if statuses is not None:
        query = query.where(outbox.c.status.in_(list(statuses)))
    return [
        ListedMessage(OutboxMessage.from_row(r), r["l_reservation_no"], r["l_partner_name"])
        for r in (await conn.execute(query)).mappings()
    ]


async def pending_summary(conn: AsyncConnection) -> tuple[int, datetime | None]:
    """How many messages are pending, and when the oldest of them was written (the metrics scrape)."""
    count, oldest = (
        await conn.execute(
            select(func.count(), func.min(outbox.c.created_at)).where(outbox.c.status == PENDING, PARTNER_CALLS)
        )
    ).one()
    return int(count), oldest


async def get_for_update(conn: AsyncConnection, outbox_id: int) -> OutboxMessage | None:
    """One message under a row lock (PostgreSQL; SQLite's write transaction already excludes others)."""
    row = (await conn.execute(select(outbox).where(outbox.c.id == outbox_id).with_for_update())).mappings().first()
    return None if row is None else OutboxMessage.from_row(row)


async def retry(conn: AsyncConnection, outbox_id: int, *, now: datetime, deadline: datetime) -> bool:
    """Put a failed or expired message back in the queue, due now, with a new deadline.

    The ``webhook_id`` is kept (partners dedupe on it) and so is ``attempts``, so attempt numbers
    keep counting up and the backoff continues where it stopped. False when the message is not
    failed/expired (anymore).
    """
    result = await conn.execute(
        update(outbox)
        .where(outbox.c.id == outbox_id, outbox.c.status.in_(GAVE_UP))
        .values(status=PENDING, next_attempt_at=now, deadline_at=deadline, lease_until=None, finished_at=None)
    )
    return result.rowcount == 1


async def for_booking(conn: AsyncConnection, booking_id: int) -> list[OutboxMessage]:
    rows = await conn.execute(select(outbox).where(outbox.c.booking_id == booking_id).order_by(outbox.c.id))
    return [OutboxMessage.from_row(r) for r in rows.mappings()]


async def attempts_of(conn: AsyncConnection, outbox_id: int) -> list[DeliveryAttempt]:
    rows = await conn.execute(
        select(*(delivery_attempts.c[name] for name in DELIVERY_ATTEMPT_FIELDS))
        .where(delivery_attempts.c.outbox_id == outbox_id)
        .order_by(delivery_attempts.c.id)
    )
    return [DeliveryAttempt(*r) for r in rows]
