"""The statements of messages to travellers (docs/rules/messages.md): the client's settings, the messages
the planner writes and the pages read, and the opt-outs.

Every function takes the caller's connection: the caller owns the transaction. ``insert_messages`` is
``INSERT ... ON CONFLICT (dedupe_key) DO NOTHING`` on both databases (the same SQL): a trigger planned
twice, or by two workers at once, writes one row and raises nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, client_message_settings, clients, message_optouts, traveller_messages
from transfers.messages.models import (
    Channel,
    MessageSettings,
    NewMessage,
    OptOut,
    OptOutSource,
    TravellerMessage,
    ordered_channels,
)

S = client_message_settings
M = traveller_messages
O = message_optouts  # noqa: E741


def _insert(conn: AsyncConnection, table: Any) -> Any:
    """INSERT with ON CONFLICT, in the connection's dialect (the SQL is the same on both)."""
    return (sqlite_insert if conn.dialect.name == "sqlite" else pg_insert)(table)


# --- settings -------------------------------------------------------------------------------------------


async def settings_of(conn: AsyncConnection, client_id: int) -> MessageSettings | None:
    """The client's settings (the defaults when it set none), or None when there is no such client."""
    row = (
        (
            await conn.execute(
                select(clients.c.id, clients.c.support_phone, S)
                .select_from(clients.outerjoin(S, S.c.client_id == clients.c.id))
                .where(clients.c.id == client_id)
            )
        )
        .mappings()
        .first()
    )
    if row is None:
        return None
    if row["client_id"] is None:
        return MessageSettings(client_id=client_id, support_phone=row["support_phone"])
    return MessageSettings(
        client_id=client_id,
        channels=ordered_channels(row["channels"]),
        brand_name=row["brand_name"],
        sms_sender=row["sms_sender"],
        reply_to=row["reply_to"],
        support_phone=row["support_phone"],
        default_language=row["default_language"],
        feedback=bool(row["feedback"]),
        travellers_consented_at=row["travellers_consented_at"],
        updated_at=row["updated_at"],
    )


async def save_settings(conn: AsyncConnection, settings: MessageSettings, now: datetime) -> bool:
    """Write the client's settings (its row, and ``clients.support_phone``); False when there is no such
    client. ``now`` is ``updated_at``."""
    found = await conn.execute(
        update(clients).where(clients.c.id == settings.client_id).values(support_phone=settings.support_phone)
    )
    if found.rowcount == 0:
        return False
    values = {
        "channels": [str(c) for c in settings.channels],
        "brand_name": settings.brand_name,
        "sms_sender": settings.sms_sender,
        "reply_to": settings.reply_to,
        "default_language": settings.default_language,
        "feedback": settings.feedback,
        "travellers_consented_at": settings.travellers_consented_at,
        "updated_at": now,
    }
    statement = _insert(conn, S).values(client_id=settings.client_id, **values)
    await conn.execute(statement.on_conflict_do_update(index_elements=[S.c.client_id], set_=values))
    return True


# --- messages -------------------------------------------------------------------------------------------


def _values(message: NewMessage, now: datetime) -> dict[str, Any]:
    return {
        "booking_id": message.booking_id,
        "client_id": message.client_id,
        "template": str(message.template),
        "channel": str(message.channel),
        "to_address": message.to_address,
        "language": message.language,
        "status": str(message.status),
        "reason": message.reason,
        "revision": message.revision,
        "dedupe_key": message.dedupe_key,
        "scheduled_for": message.scheduled_for,
        "expires_at": message.expires_at,
        "attempts": 0,
        "created_at": now,
        "finished_at": message.finished_at,
    }


async def insert_messages(conn: AsyncConnection, messages: Sequence[NewMessage], now: datetime) -> list[str]:
    """Write the messages whose dedupe key is new; the dedupe keys written (a key already there writes
    nothing, on both databases)."""
    if not messages:
        return []
    # One statement, executed for many rows (SQLAlchemy's "insertmanyvalues": batched VALUES, compiled
    # once and cached), not a VALUES list built per call: a reminders pass writes thousands at once.
    statement = _insert(conn, M).on_conflict_do_nothing(index_elements=[M.c.dedupe_key]).returning(M.c.dedupe_key)
    written = await conn.execute(statement, [_values(m, now) for m in messages])
    return [str(key) for key in written.scalars()]


async def messages_of_booking(conn: AsyncConnection, booking_id: int) -> list[TravellerMessage]:
    """A booking's messages, oldest first (by when they are due, then as written)."""
    rows = await conn.execute(select(M).where(M.c.booking_id == booking_id).order_by(M.c.scheduled_for, M.c.id))
    return [TravellerMessage.from_row(r) for r in rows.mappings()]


async def booking_id_of(conn: AsyncConnection, reservation_no: str) -> int | None:
    """The id of the booking with that reservation number (any client's: the operators' CLI)."""
    found = await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == reservation_no))
    value = found.scalar_one_or_none()
    return None if value is None else int(value)


async def message(conn: AsyncConnection, message_id: int) -> TravellerMessage | None:
    row = (await conn.execute(select(M).where(M.c.id == message_id))).mappings().first()
    return None if row is None else TravellerMessage.from_row(row)


async def message_by_key(conn: AsyncConnection, key: str) -> TravellerMessage | None:
    row = (await conn.execute(select(M).where(M.c.dedupe_key == key))).mappings().first()
    return None if row is None else TravellerMessage.from_row(row)


# --- opt-outs -------------------------------------------------------------------------------------------


def normalize_address(channel: Channel | str, address: str) -> str:
    """How an address is kept and looked up: an e-mail lowercased, a number as given (E.164)."""
    return address.strip().lower() if str(channel) == Channel.EMAIL else address.strip()


async def add_optout(
    conn: AsyncConnection,
    channel: Channel | str,
    address: str,
    *,
    booking_id: int | None,
    source: OptOutSource | str,
    now: datetime,
) -> int:
    """Stop messages on ``channel`` to ``address``: for one booking, or for every booking (None). An
    active opt-out of the same scope is kept as it is (its id returned), so a second STOP adds nothing."""
    address = normalize_address(channel, address)
    existing = await _active(conn, str(channel), address, booking_id)
    if existing is not None:
        return existing.id
    made = await conn.execute(
        O.insert()
        .values(
            channel=str(channel),
            address=address,
            booking_id=booking_id,
            source=str(source),
            created_at=now,
            lifted_at=None,
        )
        .returning(O.c.id)
    )
    return int(made.scalar_one())


async def lift_optouts(conn: AsyncConnection, channel: Channel | str, address: str, now: datetime) -> int:
    """Lift every active opt-out of the address on the channel (an SMS START); how many were lifted."""
    lifted = await conn.execute(
        update(O)
        .where(O.c.channel == str(channel), O.c.address == normalize_address(channel, address), O.c.lifted_at.is_(None))
        .values(lifted_at=now)
    )
    return int(lifted.rowcount or 0)


async def active_optout(
    conn: AsyncConnection, channel: Channel | str, address: str, booking_id: int | None
) -> OptOut | None:
    """The opt-out that stops a message to ``address`` about ``booking_id``: one for every booking, or one
    for this booking; None when the address may be written to."""
    address = normalize_address(channel, address)
    scope = (
        O.c.booking_id.is_(None) if booking_id is None else or_(O.c.booking_id.is_(None), O.c.booking_id == booking_id)
    )
    row = (
        (
            await conn.execute(
                select(O)
                .where(and_(O.c.channel == str(channel), O.c.address == address, O.c.lifted_at.is_(None), scope))
                .order_by(O.c.booking_id.is_not(None), O.c.id)
                .limit(1)
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else OptOut.from_row(row)


async def _active(conn: AsyncConnection, channel: str, address: str, booking_id: int | None) -> OptOut | None:
    scope = O.c.booking_id.is_(None) if booking_id is None else O.c.booking_id == booking_id
    row = (
        (
            await conn.execute(
                select(O).where(O.c.channel == channel, O.c.address == address, O.c.lifted_at.is_(None), scope).limit(1)
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else OptOut.from_row(row)


async def stopped(
    conn: AsyncConnection, addresses: Collection[tuple[str, str]], booking_ids: Collection[int]
) -> set[tuple[int | None, str, str]]:
    """The active opt-outs among ``addresses`` ((channel, address), e-mails lowercased): (booking or None
    for every booking, channel, address)."""
    if not addresses:
        return set()
    wanted = set(addresses)
    scope = or_(O.c.booking_id.is_(None), O.c.booking_id.in_(list(booking_ids)))
    rows = await conn.execute(
        select(O.c.booking_id, O.c.channel, O.c.address).where(
            O.c.address.in_(sorted({address for _, address in wanted})), scope, O.c.lifted_at.is_(None)
        )
    )
    return {
        (None if r.booking_id is None else int(r.booking_id), r.channel, r.address)
        for r in rows
        if (r.channel, r.address) in wanted
    }
