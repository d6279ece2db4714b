"""The inserts of client events (docs/rules/webhooks.md): every row of ``client_events`` is
written here, a booking change's in the change's own transaction (``bookings/event_effects.py``), an
endpoint's ping by the webhooks' use case. The fan-out, the deliveries and every read of the table
are the webhooks' (``webhooks/repository.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import client_events

_INSERT_EVENT = insert(client_events)


async def insert_events(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    """Several events in one statement (their columns: ``bookings/event_effects._event`` and the booking's)."""
    if rows:
        await conn.execute(_INSERT_EVENT, list(rows))


async def insert_event(conn: AsyncConnection, row: dict[str, Any]) -> int:
    """One event; its primary key (a ping's delivery names it)."""
    return int((await conn.execute(insert(client_events).values(row).returning(client_events.c.id))).scalar_one())
