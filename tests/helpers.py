"""Request builders shared by API tests."""

from __future__ import annotations

import copy
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import asyncpg
from sqlalchemy import select

from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.tables import bookings, ledger_entries

LONDON = ZoneInfo("Europe/London")


def future_local(days: int = 10, hour: int = 14, minute: int = 30, tz: ZoneInfo = LONDON) -> str:
    """A pickup time in the documented ``YYYY-MM-DD HH:MM`` form, local to the airport."""
    moment = (datetime.now(UTC) + timedelta(days=days)).astimezone(tz)
    return moment.replace(hour=hour, minute=minute).strftime("%Y-%m-%d %H:%M")


def search_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "pickup_datetime": future_local(),
        "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
        "dropoff_location": {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"},
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }
    body.update(overrides)
    return body


def with_path(body: dict[str, Any], path: str, value: Any, *, delete: bool = False) -> dict[str, Any]:
    """A deep copy of ``body`` with ``a.b.c`` set to ``value`` (or removed)."""
    out = copy.deepcopy(body)
    *parents, last = path.split(".")
    node = out
    for key in parents:
        node = node[key]
    if delete:
        node.pop(last, None)
    else:
        node[last] = value
    return out


def booking_body(search_id: str, vehicle_id: object = 1, **overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "search_id": search_id,
        "vehicle_id": vehicle_id,
        "suitcase": 1,
        "small_bags": 1,
        "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
        "travel_details": {"flight_number": "BA117", "extra_requests": None},
    }
    body.update(overrides)
    return body


async def row_of(db: Database, reservation_no: str) -> dict[str, Any]:
    """The stored booking row (operator view, not scoped by owner)."""
    async with db.read() as conn:
        row = (await conn.execute(select(bookings).where(bookings.c.reservation_no == reservation_no))).mappings().one()
    return dict(row)


async def ledger_of(db: Database, reservation_no: str) -> list[tuple[str, Decimal]]:
    """(kind, signed amount) of every ledger entry of one booking, oldest first."""
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(ledger_entries.c.kind, ledger_entries.c.amount)
                .join(bookings, bookings.c.id == ledger_entries.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no)
                .order_by(ledger_entries.c.id)
            )
        ).all()
    return [(kind, Decimal(amount)) for kind, amount in rows]


def booking_row(**changes: Any) -> dict[str, Any]:
    """A stored ``bookings`` row with every column, as the repository reads it (``Booking.from_row``),
    for tests of code that takes a booking without a database."""
    now = datetime(2030, 5, 1, 9, 30, tzinfo=UTC)
    row: dict[str, Any] = {
        "id": 7,
        "reservation_no": "TB-7Q2M9K4X",
        "client_id": 1,
        "partner_id": 2,
        "search_vehicle_id": 3,
        "status": "APPROVED",
        "pay_type": "wallet",
        "airport_iata": "LHR",
        "pickup_at": now + timedelta(days=2),
        "pickup_location": {"type": "airport", "name": "Heathrow", "iata_code": "LHR"},
        "dropoff_location": {"type": "address", "name": "1 Main St"},
        "flight_number": "BA117",
        "extra_requests": None,
        "adult": 2,
        "children": 1,
        "infant": 0,
        "passenger_name": "Ada",
        "passenger_surname": "Lovelace",
        "passenger_email": "ada@example.com",
        "passenger_phone": "+447911123456",
        "suitcase": 2,
        "small_bags": 1,
        "vehicle_make": "Škoda",
        "vehicle_model": "Octavia",
        "vehicle_type": "Sedan",
        "partner_vehicle_id": "sedan-1",
        "total": Decimal("44.00"),
        "net_total": Decimal("40.00"),
        "currency": "EUR",
        "distance_km": 24,
        "booking_type": "ONEWAY",
        "extras": [
            {
                "id": 1,
                "partner_extra_id": "seat",
                "name": "Child seat",
                "quantity": 2,
                "price": "4.40",
                "label": "Child seat x 2",
            }
        ],
        "partner_reference": "P-1",
        "driver_name": "Jo",
        "driver_phone": "+447400123457",
        "driver_plate": "AB12 CDE",
        "meeting_point": "Arrivals, Costa",
        "cancellation_reason_id": None,
        "cancel_note": None,
        "created_at": now,
        "updated_at": now,
        "idempotency_key": None,
        "synced_at": None,
        "cancel_idempotency_key": None,
        "event_sequence": 3,
        "cancellation_policy": [
            {"hours_before_pickup": 24, "fee_percent": "50"},
            {"hours_before_pickup": 0, "fee_percent": "100"},
        ],
        "cancellation_fee": None,
        "cancellation_refund": None,
        "cancelled_at": None,
        "cancelled_by": None,
        "tracking_token": "k3bq0m5YcF2Xz8Wn1Lp4Tg",
        "amendment": None,
        "incident_refunded": None,
        "ride_milestones": None,
        "ride_position": None,
        "ride_position_at": None,
        # docs/rules/flights.md
        "original_pickup_at": now + timedelta(days=2),
        "flight_state": None,
        "flight_disrupted_at": None,
        "free_wait_minutes": None,
        "flight_watch_id": None,
        "trip_id": None,
        "trip_leg": None,
        "trip_other_reservation_no": None,
        "fx": None,
        "partner_currency": None,
        "partner_net_total": None,
        "passenger_language": None,
        "message_channels": None,
    }
    return {**row, **changes}


@asynccontextmanager
async def own_database(tmp_path: Path, stem: str) -> AsyncIterator[str]:
    """A database of its own for a test that migrates or drops what the session's shares: a SQLite file
    under ``tmp_path``, or a PostgreSQL database ``tx_<stem>_<random>`` beside the session's, dropped after."""
    from tests.conftest import ON_POSTGRES, PG_URL

    if not ON_POSTGRES:
        yield f"sqlite+aiosqlite:///{tmp_path / f'{stem}.sqlite3'}"
        return
    name = f"tx_{stem}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(PG_URL, timeout=10)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield Settings(database_url=PG_URL.rsplit("/", 1)[0] + "/" + name).resolved_database_url
    finally:
        admin = await asyncpg.connect(PG_URL, timeout=10)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


# docs/rules/booking.md#text: one sample of each class of character a name or free text may not hold.
REFUSED_CHARACTERS = {
    "C0 escape": "Ada\x1b[2JLovelace",
    "C0 bell": "Ada\x07",
    "C0 vertical tab": "Ada\x0bLovelace",
    "DEL": "Ada\x7f",
    "C1 next line": "Ada\x85Lovelace",
    "C1 CSI": "Ada\x9b31m",
    "LRE": "\u202aAda",
    "RLE": "\u202bAda",
    "PDF": "Ada\u202c",
    "LRO": "\u202dAda",
    "RLO": "Ada\u202eecalevoL",
    "LRI": "\u2066Ada",
    "RLI": "\u2067Ada",
    "FSI": "\u2068Ada",
    "PDI": "Ada\u2069",
    "line separator": "Ada\u2028Lovelace",
    "paragraph separator": "Ada\u2029Lovelace",
}
# A one-line value refuses the line breaks and tabs a free text keeps.
ONE_LINE_ONLY = {"line feed": "Ada\nLovelace", "carriage return": "Ada\rLovelace", "tab": "Ada\tLovelace"}
