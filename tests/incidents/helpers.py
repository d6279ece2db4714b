"""Shared steps of the incident tests: an APPROVED booking from a fake partner, the clock at its pickup."""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import func, select

from tests.api.test_cancellation_policies import book, move_clock_to, pickup_in
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import row_of
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, client_events, incidents, ledger_entries

INCIDENTS = "/api/v1/booking-api/booking/incidents"
PRICE = Decimal("56.05")


async def approved_booking(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    *,
    pay_type: str = "wallet",
) -> tuple[str, str, dict[str, Any]]:
    """(API key, reservation number, the booking's row) of an APPROVED booking 5 days ahead."""
    key, _, reservation_no, row = await approved_ride(http, db, make_client, make_partner, pay_type=pay_type)
    return key, reservation_no, row


async def approved_ride(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    *,
    pay_type: str = "wallet",
) -> tuple[str, str, str, dict[str, Any]]:
    """(client key, partner key, reservation number, row) of an APPROVED booking 5 days ahead."""
    _, _, partner_key = await make_partner(
        vehicles=default_vehicles(str(PRICE)),
        create_status="APPROVED",
        driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"},
    )
    _, key = await make_client(pay_type=pay_type)
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, reservation_no)
    assert row["status"] == "APPROVED", row["status"]
    return key, partner_key, reservation_no, row


async def driver_event(
    http: httpx.AsyncClient, partner_key: str, reservation_no: str, event_type: str, occurred_at: datetime
) -> None:
    """A partner's driver event through the reverse API (docs/rules/ride.md#events)."""
    sent = await http.post(
        "/api/v1/reverse/booking/events",
        json={
            "reservation_no": reservation_no,
            "type": event_type,
            "occurred_at": occurred_at.isoformat(),
            "lat": 51.4700,
            "lng": -0.4543,
        },
        headers=bearer(partner_key),
    )
    assert sent.status_code == 200, sent.text


def at(clock: ShiftedClock, moment: datetime, shift: timedelta = timedelta()) -> None:
    move_clock_to(clock, moment + shift)


async def report(
    http: httpx.AsyncClient, key: str, reservation_no: str | None, body: Any, **kwargs: Any
) -> httpx.Response:
    params = {} if reservation_no is None else {"reservation_no": reservation_no}
    return await http.post(INCIDENTS, params=params, json=body, headers=bearer(key), **kwargs)


async def counts(db: Database, booking_id: int, reservation_no: str) -> dict[str, int]:
    """What an incident may write for a booking: incidents, ledger entries, client events, audit rows."""
    async with db.read() as conn:

        async def count(table: Any, where: Any) -> int:
            return int((await conn.execute(select(func.count()).select_from(table).where(where))).scalar_one())

        return {
            "incidents": await count(incidents, incidents.c.booking_id == booking_id),
            "ledger": await count(ledger_entries, ledger_entries.c.booking_id == booking_id),
            "events": await count(client_events, client_events.c.booking_id == booking_id),
            "audit": await count(admin_audit, admin_audit.c.subject == f"booking:{reservation_no}"),
        }
