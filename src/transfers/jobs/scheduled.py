"""Scheduled jobs run by the worker (DECISIONS 6, 7). Each is safe with several workers at once:
rows are claimed with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's write lock otherwise),
and every status change is a compare-and-set through ``lifecycle.transition``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import structlog
from pydantic import ValidationError
from sqlalchemy import or_, select, update

from transfers.bookings import partner_updates
from transfers.bookings.lifecycle import ConcurrentChange, lock_booking
from transfers.bookings.state import BookingStatus
from transfers.db.tables import bookings
from transfers.outbox import repository as outbox_repo
from transfers.outbox.dispatcher import EFFECTS, Ending
from transfers.outbox.kinds import MessageKind
from transfers.partners.client import info_path
from transfers.partners.service import endpoint_for
from transfers.partners.wire import WireInfoAnswer
from transfers.services import Services

log = structlog.get_logger("transfers.jobs")
ACTOR = "system:jobs"
BATCH = 100


async def complete_rides(svc: Services) -> int:
    """APPROVED bookings whose pickup was 12 h ago or more become COMPLETED."""
    now = svc.clock.now()
    cutoff = now - timedelta(hours=svc.settings.complete_after_pickup_hours)
    done = 0
    async with svc.db.write() as conn:
        rows = (await conn.execute(
            select(bookings).where(bookings.c.status == BookingStatus.APPROVED.value, bookings.c.pickup_at <= cutoff)
            .limit(BATCH).with_for_update(skip_locked=True)
        )).mappings().all()
        for row in rows:
            try:
                async with conn.begin_nested():
                    await partner_updates.complete(conn, dict(row), actor=ACTOR, now=now)
                done += 1
            except ConcurrentChange:
                continue
    return done


async def expire_deliveries(svc: Services) -> int:
    """Undelivered messages past their deadline: the booking of an undelivered create FAILs (refunded)
    (``outbox.dispatcher.EFFECTS``)."""
    now = svc.clock.now()
    async with svc.db.write() as conn:
        expired = await outbox_repo.expire_overdue(conn, now=now, limit=BATCH)
        for message in expired:  # what an expired message does, by its kind (the dispatcher's own effect)
            await EFFECTS[MessageKind.of(message["kind"])](conn, message, Ending.EXPIRED, None, None, now)
    return len(expired)


async def reconcile(svc: Services) -> int:
    """Ask the partner about bookings still waiting for approval 30 min after creation, so a lost
    reverse call never leaves a client polling forever."""
    now = svc.clock.now()
    age = timedelta(seconds=svc.settings.reconcile_after_seconds)
    waiting = [BookingStatus.PENDING_APPROVAL.value]
    async with svc.db.write() as conn:
        candidates = (
            select(bookings.c.id).where(
                bookings.c.status.in_(waiting), bookings.c.created_at <= now - age,
                or_(bookings.c.synced_at.is_(None), bookings.c.synced_at <= now - age),
            ).limit(BATCH).with_for_update(skip_locked=True)
        )
        claimed = (await conn.execute(
            update(bookings).where(bookings.c.id.in_(candidates.scalar_subquery())).values(synced_at=now)
            .returning(bookings.c.id, bookings.c.reservation_no, bookings.c.partner_id)
        )).all()
    for booking_id, reservation_no, partner_id in claimed:
        await _sync_one(svc, booking_id, reservation_no, partner_id)
    return len(claimed)


async def _sync_one(svc: Services, booking_id: int, reservation_no: str, partner_id: int) -> None:
    endpoint = await endpoint_for(svc.db, svc.box, partner_id)
    if endpoint is None:
        return
    result = await svc.partner_client.call(endpoint, "GET", info_path(reservation_no), None,
                                           timeout=svc.settings.partner_timeout_seconds)
    if not result.ok:
        return
    try:
        info = WireInfoAnswer.model_validate(result.body)
    except ValidationError as exc:
        log.warning("partner_info_rejected", partner_id=partner_id, reservation_no=reservation_no,
                    reason=str(exc.errors()[0]["msg"]))
        return
    now = svc.clock.now()
    try:
        async with svc.db.write() as conn:
            booking = await lock_booking(conn, booking_id)
            if booking is not None:
                await partner_updates.apply_reported_status(conn, booking, info.status, info.driver_info,
                                                            info.meeting_point, actor=ACTOR, now=now)
    except (ConcurrentChange, partner_updates.UpdateRefused) as exc:
        log.info("reconcile_skipped", reservation_no=reservation_no, reason=type(exc).__name__)


MAX_BATCHES = 20  # per job and run: a backlog is worked off in bounded slices, never in one transaction


async def _drain(job: Any, svc: Services) -> int:
    """Run ``job`` batch after batch until a batch comes back short (or MAX_BATCHES), so a backlog
    larger than one batch is still handled in the same run."""
    total = 0
    for _ in range(MAX_BATCHES):
        done = await job(svc)
        total += done
        if done < BATCH:
            break
    return total


async def run_all(svc: Services) -> dict[str, Any]:
    return {
        "expired": await _drain(expire_deliveries, svc),
        "completed": await _drain(complete_rides, svc),
        "reconciled": await _drain(reconcile, svc),
    }
