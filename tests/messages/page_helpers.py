"""Shared steps of the tests of what shows messages (the API's list, the opt-out page, the portal's and
the console's pages): an APPROVED booking with messages written to it through the repository, as the
planner writes them (the pages show rows, whoever wrote them)."""

from __future__ import annotations

import itertools
import os
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import update

from tests.conftest import ClientFactory, PartnerFactory
from tests.incidents.helpers import approved_ride
from transfers.db.engine import Database
from transfers.db.tables import bookings, traveller_messages
from transfers.messages import repository as repo
from transfers.messages.models import Channel, NewMessage, Status, Template, dedupe_key

MESSAGES = "/api/v1/booking-api/booking/messages"
_numbers = itertools.count(1)


async def own_addresses(db: Database, row: dict[str, Any]) -> dict[str, Any]:
    """The booking with a passenger e-mail and phone of its own (masked as the fixed ones are:
    ``a***@example.com``, ``+44 7*** ***456``): an opt-out "for every booking" a test writes then stops
    nobody else's messages in the session's database."""
    n = next(_numbers) * 1000 + os.getpid() % 1000
    email, phone = f"ada.{n}@example.com", f"+4479{n % 100_000:05d}456"
    async with db.write() as conn:
        await conn.execute(
            update(bookings).where(bookings.c.id == row["id"]).values(passenger_email=email, passenger_phone=phone)
        )
    return {**row, "passenger_email": email, "passenger_phone": phone}


def message(row: dict[str, Any], template: Template, channel: Channel, status: Status, **changes: Any) -> NewMessage:
    address = row["passenger_email"] if channel is Channel.EMAIL else row["passenger_phone"]
    values: dict[str, Any] = {
        "booking_id": row["id"],
        "client_id": row["client_id"],
        "template": template,
        "channel": channel,
        "to_address": address,
        "language": "en",
        "status": status,
        "revision": "1",
        "scheduled_for": row["created_at"],
        "expires_at": row["pickup_at"],
        **changes,
    }
    return NewMessage(**values)


async def write_messages(db: Database, messages: list[NewMessage], now: datetime) -> None:
    async with db.write() as conn:
        await repo.insert_messages(conn, messages, now)


async def mark_sent(
    db: Database,
    booking_id: int,
    template: Template,
    channel: Channel,
    sent_at: datetime,
    *,
    body: str | None = None,
    provider_id: str | None = None,
    status: Status = Status.SENT,
) -> None:
    """What the delivery engine does to a message it sent: ``sent`` (or another status), when, its text."""
    async with db.write() as conn:
        await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.dedupe_key == dedupe_key(booking_id, template, channel, "1"))
            .values(status=str(status), sent_at=sent_at, body=body, provider_id=provider_id, attempts=1)
        )


async def booking_with_messages(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory, now: datetime
) -> tuple[str, str, dict[str, Any]]:
    """(client key, reservation number, booking row) of an APPROVED booking with a sent confirmation
    e-mail, a scheduled reminder e-mail and a scheduled reminder SMS."""
    key, _, reservation_no, booked = await approved_ride(http, db, make_client, make_partner)
    row = await own_addresses(db, booked)
    reminder_at = row["pickup_at"] - timedelta(hours=24)
    await write_messages(
        db,
        [
            message(row, Template.CONFIRMED, Channel.EMAIL, Status.SCHEDULED),
            message(row, Template.REMINDER, Channel.EMAIL, Status.SCHEDULED, scheduled_for=reminder_at),
            message(row, Template.REMINDER, Channel.SMS, Status.SCHEDULED, scheduled_for=reminder_at),
        ],
        now,
    )
    await mark_sent(db, row["id"], Template.CONFIRMED, Channel.EMAIL, now, body="Your transfer is confirmed.")
    return key, reservation_no, row
