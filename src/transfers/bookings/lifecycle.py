"""The only code that changes a booking's status.

``transition`` checks the table of ``state.py``, moves the status with a compare-and-set, writes
the audit row, refunds the wallet when the new status calls for it, and enqueues the partner
notification, all inside the caller's transaction: either everything happens or nothing does.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings import repository as repo
from transfers.bookings.state import REFUNDING, BookingStatus, check_transition
from transfers.clients.models import REVERSE_API_PAY_TYPE
from transfers.db.tables import bookings
from transfers.outbox import repository as outbox_repo
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import LedgerKind

UPDATE_DEADLINE = timedelta(hours=24)


class ConcurrentChange(Exception):
    """Another transaction changed the booking's status first; the caller re-reads and decides."""


_LOCK = select(bookings).where(bookings.c.id == bindparam("b_id")).with_for_update()  # built once


async def lock_booking(conn: AsyncConnection, booking_id: int) -> dict[str, Any] | None:
    """Read the booking under a row lock (PostgreSQL); SQLite's write transaction already excludes others."""
    row = (await conn.execute(_LOCK, {"b_id": booking_id})).mappings().first()
    return dict(row) if row else None


async def transition(
    conn: AsyncConnection,
    booking: dict[str, Any],
    target: BookingStatus,
    *,
    actor: str,
    reason: str | None,
    now: datetime,
    fields: dict[str, Any] | None = None,
    notify_partner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    current = BookingStatus(booking["status"])
    check_transition(current, target)
    values = {"status": target.value, "updated_at": now, **(fields or {})}
    if not await repo.set_status(conn, booking["id"], current.value, values):
        raise ConcurrentChange()
    moved = {**booking, **values}
    await _after_move(conn, moved, current, target, actor=actor, reason=reason, now=now,
                      notify_partner=notify_partner)
    return moved


async def transition_unread(
    conn: AsyncConnection,
    booking_id: int,
    current: BookingStatus,
    target: BookingStatus,
    *,
    actor: str,
    reason: str | None,
    now: datetime,
    fields: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """``transition`` for a caller that expects the booking in ``current`` but has not read it: the
    compare-and-set UPDATE ... RETURNING locks and reads the row in the round trip the
    ``lock_booking`` SELECT would have taken. None when the booking is not in ``current`` (nothing
    written): the caller then reads it under ``lock_booking`` and decides as before."""
    check_transition(current, target)
    values = {"status": target.value, "updated_at": now, **(fields or {})}
    moved = await repo.move_status(conn, booking_id, current.value, values)
    if moved is None:
        return None
    await _after_move(conn, moved, current, target, actor=actor, reason=reason, now=now, notify_partner=None)
    return moved


async def _after_move(conn: AsyncConnection, booking: dict[str, Any], current: BookingStatus, target: BookingStatus,
                      *, actor: str, reason: str | None, now: datetime,
                      notify_partner: dict[str, Any] | None) -> None:
    """What goes with every status change, in the same transaction: the audit row, the refund, the
    partner notification."""
    await repo.record_transition(conn, booking_id=booking["id"], from_status=current.value, to_status=target.value,
                                 actor=actor, reason=reason, now=now)
    if target in REFUNDING and booking["pay_type"] != REVERSE_API_PAY_TYPE:
        await wallet_repo.post_entry_for_client(
            conn, client_id=booking["client_id"], kind=LedgerKind.CREDIT_REFUND, amount=booking["total"], now=now,
            booking_id=booking["id"], note=f"{target.value.lower()}: {reason or ''}")
    if notify_partner is not None:
        await outbox_repo.enqueue(conn, booking_id=booking["id"], partner_id=booking["partner_id"],
                                  kind="booking.update", payload=notify_partner, now=now,
                                  deadline=now + UPDATE_DEADLINE)


def driver_fields(driver: Any, meeting_point: str | None) -> dict[str, Any]:
    return {"driver_name": driver.name, "driver_phone": driver.phone, "driver_plate": driver.plate,
            "meeting_point": meeting_point}
