"""Rate cards and the daily capacity counters of hosted partners: their SQL (docs/rules/hosted-partners.md).

Why here, below ``partners``, ``search`` and ``bookings``: the partner directory reads the cards,
the search reads the day's counters, and a booking claims and gives back its seat in its own
transaction; none of that needs the hosted partners' use cases (``hosted/``), which sit above all
of them.

The capacity counter is one row per (partner, vehicle, local pickup date). A booking claims a
seat with a conditional ``UPDATE ... SET booked = booked + 1 WHERE booked < :capacity`` inside the
booking's own create transaction: on PostgreSQL the second of two concurrent claims for the last
seat waits for the first's row lock, re-reads the row and matches nothing; on SQLite the write
transaction (BEGIN IMMEDIATE) serialises them. Either way two bookings cannot both take it, from
any number of API processes.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import hosted_capacity, rate_cards


async def get_card(conn: AsyncConnection, partner_id: int) -> dict[str, Any] | None:
    row = (await conn.execute(select(rate_cards.c.card).where(rate_cards.c.partner_id == partner_id))).first()
    return None if row is None else dict(row.card)


async def put_card(conn: AsyncConnection, partner_id: int, card: dict[str, Any], *, actor: str, now: datetime) -> None:
    values = {"card": card, "updated_at": now, "updated_by": actor}
    changed = await conn.execute(update(rate_cards).where(rate_cards.c.partner_id == partner_id).values(**values))
    if changed.rowcount == 0:
        await conn.execute(insert(rate_cards).values(partner_id=partner_id, **values))


async def cards_of(conn: AsyncConnection, partner_ids: list[int]) -> dict[int, dict[str, Any]]:
    """The stored cards of these partners (the search directory's snapshot)."""
    if not partner_ids:
        return {}
    rows = await conn.execute(
        select(rate_cards.c.partner_id, rate_cards.c.card).where(rate_cards.c.partner_id.in_(partner_ids))
    )
    return {int(r.partner_id): dict(r.card) for r in rows}


async def booked_on(conn: AsyncConnection, partner_id: int, local_date: date) -> dict[str, int]:
    """Per vehicle id, the seats already taken on that local date."""
    rows = await conn.execute(
        select(hosted_capacity.c.vehicle_id, hosted_capacity.c.booked).where(
            hosted_capacity.c.partner_id == partner_id, hosted_capacity.c.local_date == local_date.isoformat()
        )
    )
    return {r.vehicle_id: int(r.booked) for r in rows}


async def seats_taken_locked(conn: AsyncConnection, *, partner_id: int, vehicle_id: str, local_date: date) -> int:
    """The seats taken of one vehicle on one local date, its counter row locked until the caller's
    transaction ends (created at 0 when missing; on SQLite the write transaction already serialises).
    An amendment moving a booking onto that day reads the count under this lock and moves the seat in
    the same transaction, so two amendments cannot both take the last seat."""
    key = {"partner_id": partner_id, "vehicle_id": vehicle_id, "local_date": local_date.isoformat()}
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    await conn.execute(dialect.insert(hosted_capacity).values(**key, booked=0).on_conflict_do_nothing())
    where = [hosted_capacity.c[k] == v for k, v in key.items()]
    found = await conn.execute(select(hosted_capacity.c.booked).where(*where).with_for_update())
    return int(found.scalar_one())


async def claim_seat(
    conn: AsyncConnection, *, partner_id: int, vehicle_id: str, local_date: date, capacity: int | None
) -> bool:
    """Take one seat in the caller's write transaction; False (nothing written) when the vehicle is
    full that day. ``capacity`` None: no limit, the booking is still counted (a later limit and the
    portal's figures see it)."""
    key = {"partner_id": partner_id, "vehicle_id": vehicle_id, "local_date": local_date.isoformat()}
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    await conn.execute(dialect.insert(hosted_capacity).values(**key, booked=0).on_conflict_do_nothing())
    where = [hosted_capacity.c[k] == v for k, v in key.items()]
    if capacity is not None:
        where.append(hosted_capacity.c.booked < capacity)
    result = await conn.execute(update(hosted_capacity).where(*where).values(booked=hosted_capacity.c.booked + 1))
    return result.rowcount == 1


async def release_seat(conn: AsyncConnection, *, partner_id: int, vehicle_id: str, local_date: date) -> bool:
    """Give a seat back (the booking was cancelled, declined or failed). No row: nothing (a server
    partner's booking, which never held one). True when a seat was given back."""
    result = await conn.execute(
        update(hosted_capacity)
        .where(
            hosted_capacity.c.partner_id == partner_id,
            hosted_capacity.c.vehicle_id == vehicle_id,
            hosted_capacity.c.local_date == local_date.isoformat(),
            hosted_capacity.c.booked > 0,
        )
        .values(booked=hosted_capacity.c.booked - 1)
    )
    return result.rowcount == 1
