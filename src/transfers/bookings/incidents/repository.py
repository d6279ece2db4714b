"""The one read of the incidents' table (``incidents/``, docs/rules/incidents.md) the bookings make: what
a cancel's journal entries need (``bookings/journal_effects.py``, docs/rules/incidents.md#refund-then-cancel).
Kept below the incidents package, which imports the bookings, while the journal's effects are being
reworked; the incidents' own SQL is ``incidents/repository.py``."""

from __future__ import annotations

from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import incidents


async def partner_refunds(conn: AsyncConnection, booking_id: int) -> Decimal:
    """The refunds of the booking's incidents resolved as the partner's responsibility (0.00: none)."""
    total = (
        await conn.execute(
            select(func.sum(incidents.c.refund)).where(
                incidents.c.booking_id == booking_id, incidents.c.responsible == "partner"
            )
        )
    ).scalar()
    return Decimal("0.00") if total is None else Decimal(total)
