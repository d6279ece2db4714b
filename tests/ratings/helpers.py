"""Shared steps of the rating tests: an APPROVED booking from a fake partner, its ride driven to the
drop-off through the reverse API, the clock where the test wants it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.incidents.helpers import approved_ride, at, driver_event
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import ratings

RATING = "/api/v1/booking-api/booking/rating"
RIDE = (
    ("DRIVER_DEPARTED_TO_PICKUP", timedelta(minutes=-20)),
    ("DRIVER_ARRIVED_AT_PICKUP", timedelta(minutes=-2)),
    ("DRIVER_DEPARTED_TO_DROPOFF", timedelta(minutes=5)),
    ("DRIVER_ARRIVED_AT_DROPOFF", timedelta(minutes=50)),
)
DROPPED_AFTER_PICKUP = RIDE[-1][1]


async def dropped_off_ride(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    *,
    drop_off: bool = True,
) -> tuple[str, str, dict[str, Any], datetime, str]:
    """(client key, reservation number, row, the drop-off's instant, partner key) of a ride driven to its
    drop-off (``drop_off=False``: to on board); the clock then stands 1 minute after the last event."""
    key, partner_key, reservation_no, row = await approved_ride(http, db, make_client, make_partner)
    pickup: datetime = row["pickup_at"]
    at(clock, pickup, DROPPED_AFTER_PICKUP + timedelta(minutes=1))
    for event_type, shift in RIDE if drop_off else RIDE[:-1]:
        await driver_event(http, partner_key, reservation_no, event_type, pickup + shift)
    return key, reservation_no, row, pickup + DROPPED_AFTER_PICKUP, partner_key


async def rate(http: httpx.AsyncClient, key: str, reservation_no: str | None, body: Any) -> httpx.Response:
    params = {"reservation_no": reservation_no} if reservation_no is not None else {}
    return await http.post(RATING, params=params, json=body, headers=bearer(key))


async def rating_rows(db: Database, booking_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = (await conn.execute(select(ratings).where(ratings.c.booking_id == booking_id))).mappings().all()
    return [dict(r) for r in rows]
