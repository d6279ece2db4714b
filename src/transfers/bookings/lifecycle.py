"""The only code that changes a booking's status.

``transition`` checks the table of ``state.py``, moves the status with a compare-and-set, writes
the audit row, refunds the wallet when the new status calls for it, and enqueues the partner
notification, all inside the caller's transaction: either everything happens or nothing does.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
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


async def lock_booking(conn: AsyncConnection, booking_id: int) -> dict[str, Any] | None:
    """Read the booking under a row lock (PostgreSQL); SQLite's write transaction already excludes others."""
    row = (await conn.execute(select(bookings).where(bookings.c.id == booking_id).with_for_update())).mappings().first()
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
    await repo.record_transition(conn, booking_id=booking["id"], from_status=current.value, to_status=target.value,
                                 actor=actor, reason=reason, now=now)
    if target in REFUNDING and booking["pay_type"] != REVERSE_API_PAY_TYPE:
        wallet = await wallet_repo.wallet_of_client(conn, booking["client_id"])
        assert wallet is not None, "every client has a wallet"
        await wallet_repo.post_entry(conn, wallet_id=wallet[0], kind=LedgerKind.CREDIT_REFUND, amount=booking["total"],
                                     now=now, booking_id=booking["id"], note=f"{target.value.lower()}: {reason or ''}")
    if notify_partner is not None:
        await outbox_repo.enqueue(conn, booking_id=booking["id"], partner_id=booking["partner_id"],
                                  kind="booking.update", payload=notify_partner, now=now,
                                  deadline=now + UPDATE_DEADLINE)
    return {**booking, **values}


def driver_fields(driver: Any, meeting_point: str | None) -> dict[str, Any]:
    return {"driver_name": driver.name, "driver_phone": driver.phone, "driver_plate": driver.plate,
            "meeting_point": meeting_point}
