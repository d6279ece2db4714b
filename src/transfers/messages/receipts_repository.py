"""Delivery receipts on the message rows (docs/rules/messages.md#sending): the one place a receipt
changes a text's status. A receipt moves a ``sent`` text only (``delivered`` or ``failed``); one for a
text in any other status, or for an id no text has, changes nothing."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import traveller_messages
from transfers.messages.models import Channel, Status, TravellerMessage

M = traveller_messages


async def mark_delivered(conn: AsyncConnection, provider_id: str, now: datetime) -> TravellerMessage | None:
    """The ``sent`` text with this provider id is ``delivered`` (its row after; None: no such text)."""
    return await _move(conn, provider_id, {"status": Status.DELIVERED.value, "delivered_at": now})


async def mark_undelivered(
    conn: AsyncConnection, provider_id: str, reason: str, error: str, now: datetime
) -> TravellerMessage | None:
    """The ``sent`` text with this provider id is ``failed`` (``reason``: ``undelivered``, ``error``: the
    provider's words for ``last_error``); its row after, None when no ``sent`` text has that id."""
    return await _move(
        conn, provider_id, {"status": Status.FAILED.value, "reason": reason, "last_error": error, "finished_at": now}
    )


async def _move(conn: AsyncConnection, provider_id: str, values: dict[str, object]) -> TravellerMessage | None:
    row = (
        (
            await conn.execute(
                update(M)
                .where(
                    M.c.provider_id == provider_id, M.c.channel == Channel.SMS.value, M.c.status == Status.SENT.value
                )
                .values(**values)
                .returning(*M.c)
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else TravellerMessage.from_row(row)
