"""The ride's evidence an incident is decided on (docs/rules/incidents.md#driver-no-show, #resolve):
whether the driver's arrival at the pickup is on record, and what the console shows an operator.

THE HOOK into the ride (issue 22): until its driver events are recorded, no arrival is ever on
record, so every DRIVER_NO_SHOW is decided at once against the partner.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection


async def arrived_at_pickup(conn: AsyncConnection, booking_id: int) -> bool:
    """Whether a ``DRIVER_ARRIVED_AT_PICKUP`` is recorded for the booking."""
    return False
