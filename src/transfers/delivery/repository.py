"""Outbox rows: written in the caller's transaction, claimed by lease, finished exactly once.

A claim sets ``lease_until``; only rows whose lease is empty or expired can be claimed, and on
PostgreSQL the candidate rows are picked with ``FOR UPDATE SKIP LOCKED`` so concurrent workers
never take the same message at the same time (SQLite's write lock gives the same guarantee).
A worker that dies mid-delivery leaves a lease that simply expires: the message is delivered
again later with the same ``webhook-id``, which partners use to dedupe.

A row is for its ``recipient`` (``partner:12`` for a partner call); its booking and partner are
optional. A kind tried once coalesces per recipient (``enqueue_latest``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, delete, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import delivery_attempts, outbox
from transfers.delivery.models import DELIVERED as DELIVERED  # the statuses, re-exported for callers
from transfers.delivery.models import EXPIRED as EXPIRED
from transfers.delivery.models import FAILED as FAILED
from transfers.delivery.models import PENDING as PENDING
from transfers.delivery.models import NewMessage, OutboxMessage, partner_recipient
from transfers.delivery.queue import OUTBOX, Attempt

# Built once: every create runs them (docs/operations/performance-history.md#profile). WHERE binds carry an ``m_``
# prefix so they never collide with the column names an UPDATE takes its SET clause from.
_INSERT = insert(outbox).returning(outbox.c.id)
_INSERT_ATTEMPT = insert(delivery_attempts)
_HELD = (
    update(outbox)
    .where(outbox.c.id == bindparam("m_id"), outbox.c.status == PENDING, outbox.c.lease_until == bindparam("m_lease"))
    .values(attempts=outbox.c.attempts + 1, lease_until=None)
)

# The outbox's partner calls, as operators' views and gauges count them: a message to anyone else
# (a recipient other than a partner) is not a partner's backlog.
PARTNER_CALLS = outbox.c.recipient.like("partner:%")


async def enqueue(
    conn: AsyncConnection,
    *,
    kind: str,
    payload: dict[str, Any],
    now: datetime,
    deadline: datetime,
    booking_id: int | None = None,
    partner_id: int | None = None,
    recipient: str | None = None,
    not_before: datetime | None = None,
) -> OutboxMessage:
    """A message for ``recipient`` (by default the partner's: ``partner:<id>``), about ``booking_id``
    when it is about a booking; ``not_before`` keeps workers off it until then."""
    message = new_message(
        partner_id=partner_id,
        recipient=recipient,
        kind=kind,
        payload=payload,
        now=now,
        deadline=deadline,
        not_before=not_before,
        lease_until=None,
    )
    return await insert_message(conn, message, booking_id=booking_id)


async def insert_message(conn: AsyncConnection, message: NewMessage, *, booking_id: int | None) -> OutboxMessage:
    """Write ``message`` for ``booking_id``; answers the stored row."""
    message_id = int((await conn.execute(_INSERT, {**message.values(), "booking_id": booking_id})).scalar_one())
    return message.stored(message_id, booking_id)


# RETURNING the ids by webhook id (unique): the caller learns them from the INSERT itself, not from a
# SELECT after it (a return trip's pair: one round trip of the general path less,
# docs/operations/performance-history.md#return-trips). No ordering asked of the batch: the rows are matched by webhook
# id.
_INSERT_MANY = insert(outbox).returning(outbox.c.webhook_id, outbox.c.id)
BATCH_ROWS = 500


async def insert_messages(conn: AsyncConnection, messages: Sequence[tuple[NewMessage, int | None]]) -> dict[str, int]:
    """Several ``insert_message`` rows ((message, booking id) pairs: a return trip's two creates, a flight
    watch pass's notices), ``BATCH_ROWS`` per executemany; answers their ids by webhook id."""
    rows = [{**message.values(), "booking_id": booking_id} for message, booking_id in messages]
    ids: dict[str, int] = {}
    for start in range(0, len(rows), BATCH_ROWS):
        result = await conn.execute(_INSERT_MANY, rows[start : start + BATCH_ROWS])
        ids.update((str(webhook_id), int(message_id)) for webhook_id, message_id in result)
    return ids


def new_message(
    *,
    kind: str,
    payload: dict[str, Any],
    now: datetime,
    deadline: datetime,
    not_before: datetime | None,
    lease_until: datetime | None,
    partner_id: int | None = None,
    recipient: str | None = None,
) -> NewMessage:
    """A new pending message with a fresh ``webhook_id``, for ``insert_message`` or a statement that
    writes it with its booking (``bookings/fast_paths.py``); ``not_before`` keeps workers off it
    until then, ``lease_until`` holds it for the writer's own attempt. ``recipient``: who it is for,
    the partner's (``partner:<id>``) unless given."""
    if recipient is None:
        if partner_id is None:
            raise ValueError("a message names its recipient, or the partner it goes to")
        recipient = partner_recipient(partner_id)
    return NewMessage(
        partner_id,
        recipient,
        kind,
        f"msg_{uuid.uuid4().hex}",
        payload,
        PENDING,
        0,
        not_before or now,
        deadline,
        lease_until,
        now,
    )


_ID_OF = select(outbox.c.id).where(outbox.c.webhook_id == bindparam("m_webhook_id"))


async def id_of(conn: AsyncConnection, webhook_id: str) -> int:
    """The id of the message written (in this transaction) with ``webhook_id``, which is unique:
    for a writer that let ``lifecycle`` insert it."""
    return int((await conn.execute(_ID_OF, {"m_webhook_id": webhook_id})).scalar_one())


def _claimable(now: datetime) -> ColumnElement[bool]:
    return and_(outbox.c.status == PENDING, or_(outbox.c.lease_until.is_(None), outbox.c.lease_until < now))


async def claim_due(
    conn: AsyncConnection, *, now: datetime, lease_until: datetime, limit: int, kinds: Sequence[str] | None = None
) -> list[OutboxMessage]:
    """Lease up to ``limit`` due messages, oldest due first; only those of ``kinds`` when given."""
    candidates = (
        select(outbox.c.id)
        .where(_claimable(now), outbox.c.next_attempt_at <= now)
        .order_by(outbox.c.next_attempt_at, outbox.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    if kinds is not None:
        candidates = candidates.where(outbox.c.kind.in_(list(kinds)))
    rows = await conn.execute(
        update(outbox)
        .where(outbox.c.id.in_(candidates.scalar_subquery()))
        .values(lease_until=lease_until)
        .returning(*outbox.c)
    )
    return [OutboxMessage.from_row(r) for r in rows.mappings()]


async def record_attempt(
    conn: AsyncConnection,
    *,
    outbox_id: int,
    attempt_no: int,
    started_at: datetime,
    duration_ms: float,
    outcome: str,
    http_status: int | None,
    error: str | None,
    answer_excerpt: str | None = None,
) -> None:
    """``answer_excerpt``: the answer body's bounded excerpt (``partners.client.answer_excerpt``)."""
    await conn.execute(
        _INSERT_ATTEMPT,
        {
            "outbox_id": outbox_id,
            "attempt_no": attempt_no,
            "started_at": started_at,
            "duration_ms": int(duration_ms),
            "outcome": outcome,
            "http_status": http_status,
            "error": (error or "")[:1000] or None,
            "answer_excerpt": answer_excerpt,
        },
    )


async def finish(
    conn: AsyncConnection, message: OutboxMessage, *, status: str, now: datetime, error: str | None = None
) -> bool:
    """Close a message we hold the lease on. False when the lease was lost to another worker."""
    result = await conn.execute(
        _HELD,
        {"m_id": message.id, "m_lease": message.lease_until, "status": status, "finished_at": now, "last_error": error},
    )
    return result.rowcount == 1


async def drop(conn: AsyncConnection, message: OutboxMessage, *, now: datetime, reason: str) -> bool:
    """Close a message we hold the lease on as expired, unsent (a stale message of a kind tried once)."""
    result = await conn.execute(
        _HELD,
        {
            "m_id": message.id,
            "m_lease": message.lease_until,
            "status": EXPIRED,
            "finished_at": now,
            "last_error": reason,
        },
    )
    return result.rowcount == 1


async def reschedule(
    conn: AsyncConnection, message: OutboxMessage, *, next_attempt_at: datetime, error: str | None
) -> bool:
    result = await conn.execute(
        _HELD,
        {"m_id": message.id, "m_lease": message.lease_until, "next_attempt_at": next_attempt_at, "last_error": error},
    )
    return result.rowcount == 1


async def expire_overdue(conn: AsyncConnection, *, now: datetime, limit: int = 100) -> list[OutboxMessage]:
    """Pending messages past their deadline and not leased: marked expired, returned for follow-up."""
    candidates = (
        select(outbox.c.id)
        .where(_claimable(now), outbox.c.deadline_at <= now)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = await conn.execute(
        update(outbox)
        .where(outbox.c.id.in_(candidates.scalar_subquery()))
        .values(status=EXPIRED, finished_at=now, last_error="delivery deadline passed")
        .returning(*outbox.c)
    )
    return [OutboxMessage.from_row(r) for r in rows.mappings()]


# --- an amendment overtaken by a cancellation ------------------------------------------


async def withdraw_pending(conn: AsyncConnection, booking_id: int, kind: str, *, now: datetime, reason: str) -> int:
    """Stop the booking's pending, unleased messages of ``kind`` (marked failed with ``reason``): an
    ``AMENDED`` update not yet sent when the booking is cancelled must not reach the partner after
    the cancellation. A message being delivered right now (leased) is left to finish; its answer is
    then ignored (the amendment is no longer pending). Returns how many were withdrawn."""
    result = await conn.execute(
        update(outbox)
        .where(outbox.c.booking_id == booking_id, outbox.c.kind == kind, _claimable(now))
        .values(status=FAILED, finished_at=now, last_error=reason[:1000])
    )
    return int(result.rowcount or 0)


# --- kinds tried once: the newest message replaces a pending older one ------------------------------


SUPERSEDED = "superseded by a newer message of the same kind"


async def enqueue_latest(
    conn: AsyncConnection,
    *,
    recipient: str,
    kind: str,
    payload: dict[str, Any],
    now: datetime,
    deadline: datetime,
    booking_id: int | None = None,
    partner_id: int | None = None,
    not_before: datetime | None = None,
) -> OutboxMessage:
    """Write a message of a kind tried once (``DeliveryKind.once``): the recipient's pending,
    unleased messages of that kind are expired as superseded first, so only the newest one is ever
    sent (coalesced). One being sent right now is left to finish. ``not_before``: when it is due (a
    writer that sends at most every so often keeps the slot it computed with ``latest_due``). The
    outbox has no index by recipient: a kind that writes often adds one (``(recipient, kind)``)."""
    await conn.execute(
        update(outbox)
        .where(outbox.c.recipient == recipient, outbox.c.kind == kind, _claimable(now))
        .values(status=EXPIRED, finished_at=now, last_error=SUPERSEDED)
    )
    return await enqueue(
        conn,
        booking_id=booking_id,
        partner_id=partner_id,
        recipient=recipient,
        kind=kind,
        payload=payload,
        now=now,
        deadline=deadline,
        not_before=not_before,
    )


async def latest_due(
    conn: AsyncConnection, recipient: str, kind: str, *, now: datetime
) -> tuple[datetime, bool] | None:
    """The recipient's latest message of ``kind``: when it was (or is) due, and whether it still waits
    (pending and not being sent, so a newer message replaces it in its slot); None when there is none.
    A writer of a kind sent at most every so often schedules the next one from it."""
    found = (
        await conn.execute(
            select(outbox.c.next_attempt_at, _claimable(now).label("waiting"))
            .where(outbox.c.recipient == recipient, outbox.c.kind == kind)
            .order_by(outbox.c.id.desc())
            .limit(1)
        )
    ).first()
    return None if found is None else (found.next_attempt_at, bool(found.waiting))


async def prune_finished(conn: AsyncConnection, kind: str, *, finished_before: datetime, limit: int) -> int:
    """Delete up to ``limit`` finished messages of ``kind`` (delivered, failed or expired before
    ``finished_before``) with their attempts: for a kind whose messages are worth nothing once sent
    (a driver's position, tried once); answers how many messages went."""
    doomed = [
        int(r[0])
        for r in await conn.execute(
            select(outbox.c.id)
            .where(outbox.c.kind == kind, outbox.c.status != PENDING, outbox.c.finished_at < finished_before)
            .limit(limit)
        )
    ]
    if not doomed:
        return 0
    await conn.execute(delete(delivery_attempts).where(delivery_attempts.c.outbox_id.in_(doomed)))
    await conn.execute(delete(outbox).where(outbox.c.id.in_(doomed)))
    return len(doomed)


class OutboxQueue:
    """The ``outbox`` table as the engine's ``Queue``."""

    name = OUTBOX
    log_event = "outbox_delivery"

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[OutboxMessage]:
        messages = await claim_due(conn, now=now, lease_until=lease_until, limit=limit, kinds=first) if first else []
        if len(messages) < limit:
            messages += await claim_due(
                conn, now=now, lease_until=lease_until, limit=limit - len(messages), kinds=kinds
            )
        return messages

    async def record_attempt(self, conn: AsyncConnection, message: OutboxMessage, attempt: Attempt) -> None:
        await record_attempt(conn, outbox_id=message.id, **attempt)

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: OutboxMessage,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return await reschedule(conn, message, next_attempt_at=next_attempt_at, error=error)

    async def finish(
        self,
        conn: AsyncConnection,
        message: OutboxMessage,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: Attempt,
    ) -> bool:
        return await finish(conn, message, status=status, now=now, error=error)

    async def drop(self, conn: AsyncConnection, message: OutboxMessage, *, now: datetime, reason: str) -> bool:
        return await drop(conn, message, now=now, reason=reason)

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[OutboxMessage]:
        return await expire_overdue(conn, now=now, limit=limit)
