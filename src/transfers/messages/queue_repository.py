"""The SQL of the messages' delivery queue (docs/rules/messages.md#sending): the claim, lease and
finish of ``traveller_messages``, the sweep's finds and the purge of rendered texts. Every function takes
the caller's connection (the caller owns the transaction). The planning passes' SQL is in
``planning_repository.py``.

Two workers at once: the queue claims with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's write lock
otherwise) and finishes only under the lease it holds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import traveller_messages
from transfers.rows import row_type

M = traveller_messages
SENDING = "sending"  # ``last_error`` while an attempt is in flight (docs/rules/messages.md#sending)
FINAL = ("sent", "delivered", "failed", "suppressed", "skipped", "expired")


# --- the delivery queue ---------------------------------------------------------------------------------


@row_type
class QueueRow:
    """A ``traveller_messages`` row as the delivery queue reads it (``QUEUE_COLUMNS``)."""

    id: int
    booking_id: int
    client_id: int
    template: str
    channel: str
    to_address: str | None
    language: str
    dedupe_key: str
    scheduled_for: datetime
    expires_at: datetime | None
    attempts: int
    lease_until: datetime | None
    created_at: datetime


def _queued(row: Any) -> QueueRow:
    return QueueRow(**dict(row._mapping))


QUEUE_COLUMNS = (
    M.c.id,
    M.c.booking_id,
    M.c.client_id,
    M.c.template,
    M.c.channel,
    M.c.to_address,
    M.c.language,
    M.c.dedupe_key,
    M.c.scheduled_for,
    M.c.expires_at,
    M.c.attempts,
    M.c.lease_until,
    M.c.created_at,
)


async def claim_due(conn: AsyncConnection, *, now: datetime, lease_until: datetime, limit: int) -> list[QueueRow]:
    """Lease up to ``limit`` due messages (``scheduled``, due, no lease or a lease run out with no
    attempt in flight), oldest due first."""
    free = or_(M.c.lease_until.is_(None), and_(M.c.lease_until < now, M.c.last_error.is_distinct_from(SENDING)))
    candidates = (
        select(M.c.id)
        .where(M.c.status == "scheduled", M.c.scheduled_for <= now, free)
        .order_by(M.c.scheduled_for, M.c.id)
        .limit(limit)
    )
    if conn.dialect.name != "sqlite":
        candidates = candidates.with_for_update(skip_locked=True)
    ids = [int(i) for i in (await conn.execute(candidates)).scalars()]
    if not ids:
        return []
    rows = await conn.execute(
        update(M).where(M.c.id.in_(ids)).values(lease_until=lease_until).returning(*QUEUE_COLUMNS)
    )
    return sorted((_queued(r) for r in rows), key=lambda r: (r.scheduled_for, r.id))


async def start_attempt(
    conn: AsyncConnection, message_id: int, lease: datetime | None, *, subject: str | None, body: str
) -> bool:
    """Record the attempt before the send (its count, ``last_error`` = ``sending``, the rendered text),
    under the lease; False when the lease was lost (then nothing is sent)."""
    done = await conn.execute(
        update(M)
        .where(M.c.id == message_id, M.c.lease_until == lease, M.c.status == "scheduled")
        .values(attempts=M.c.attempts + 1, last_error=SENDING, subject=subject, body=body)
    )
    return bool(done.rowcount)


async def keep_text(
    conn: AsyncConnection, message_id: int, lease: datetime | None, *, subject: str | None, body: str
) -> bool:
    """The rendered text kept on a message that is not sent (no SMTP server): no attempt counted."""
    done = await conn.execute(
        update(M)
        .where(M.c.id == message_id, M.c.lease_until == lease, M.c.status == "scheduled")
        .values(subject=subject, body=body)
    )
    return bool(done.rowcount)


async def reschedule(
    conn: AsyncConnection, message_id: int, lease: datetime | None, *, when: datetime, error: str | None
) -> bool:
    """Tried, not sent, not refused: due again at ``when``, the lease released."""
    done = await conn.execute(
        update(M)
        .where(M.c.id == message_id, M.c.lease_until == lease, M.c.status == "scheduled")
        .values(scheduled_for=when, lease_until=None, last_error=error)
    )
    return bool(done.rowcount)


async def finish(
    conn: AsyncConnection,
    message_id: int,
    lease: datetime | None,
    *,
    status: str,
    reason: str | None,
    error: str | None,
    now: datetime,
    provider_id: str | None = None,
    sent: bool = False,
) -> bool:
    """The message's end (``sent``, ``failed``, ``expired``, ``suppressed``, ``skipped``), under the lease."""
    values: dict[str, Any] = {
        "status": status,
        "reason": reason,
        "last_error": error,
        "lease_until": None,
        "finished_at": now,
    }
    if sent:
        values |= {"sent_at": now, "provider_id": provider_id}
    done = await conn.execute(
        update(M).where(M.c.id == message_id, M.c.lease_until == lease, M.c.status == "scheduled").values(values)
    )
    return bool(done.rowcount)


async def end_unleased(
    conn: AsyncConnection, message_id: int, *, status: str, reason: str | None, now: datetime
) -> bool:
    """A waiting message ended without an attempt (expired, or superseded at the send)."""
    done = await conn.execute(
        update(M)
        .where(M.c.id == message_id, M.c.status == "scheduled")
        .values(status=status, reason=reason, lease_until=None, finished_at=now)
    )
    return bool(done.rowcount)


async def abandoned(conn: AsyncConnection, *, now: datetime, limit: int) -> list[QueueRow]:
    """Messages whose worker died during a send (lease run out with an attempt in flight): the provider may
    have taken them. Locked for the caller, who ends them (``ambiguous``)."""
    statement = (
        select(*QUEUE_COLUMNS)
        .where(M.c.status == "scheduled", M.c.lease_until < now, M.c.last_error == SENDING)
        .order_by(M.c.id)
        .limit(limit)
    )
    if conn.dialect.name != "sqlite":
        statement = statement.with_for_update(skip_locked=True)
    return [_queued(r) for r in await conn.execute(statement)]


async def overdue(conn: AsyncConnection, *, now: datetime, limit: int) -> list[QueueRow]:
    """Waiting messages past their expiry that no worker holds: closed as ``expired`` by the caller."""
    statement = (
        select(*QUEUE_COLUMNS)
        .where(
            M.c.status == "scheduled",
            M.c.scheduled_for <= now,
            M.c.expires_at <= now,
            or_(M.c.lease_until.is_(None), and_(M.c.lease_until < now, M.c.last_error.is_distinct_from(SENDING))),
        )
        .order_by(M.c.scheduled_for, M.c.id)
        .limit(limit)
    )
    if conn.dialect.name != "sqlite":
        statement = statement.with_for_update(skip_locked=True)
    return [_queued(r) for r in await conn.execute(statement)]


async def purge_bodies(conn: AsyncConnection, before: datetime, *, limit: int) -> int:
    """The rendered subject and body of finished messages sent (or ended) before ``before`` are emptied
    (kept 30 days: docs/rules/messages.md#seen)."""
    ended = func.coalesce(M.c.sent_at, M.c.finished_at, M.c.scheduled_for)
    doomed = (
        select(M.c.id)
        .where(M.c.status.in_(FINAL), M.c.scheduled_for < before, ended < before, M.c.body.is_not(None))
        .limit(limit)
    )
    done = await conn.execute(update(M).where(M.c.id.in_(doomed)).values(subject=None, body=None))
    return int(done.rowcount or 0)
