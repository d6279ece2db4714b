"""Reference data: vehicle types, segments, services and cancellation reasons."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import cancellation_reasons, car_services, vehicle_segments, vehicle_types

CATALOGUES: dict[str, Table] = {
    "services": car_services,
    "segment": vehicle_segments,
    "type": vehicle_types,
}


async def list_catalogue(conn: AsyncConnection, name: str) -> list[dict[str, Any]]:
    table = CATALOGUES[name]
    rows = await conn.execute(select(table.c.id, table.c.name).order_by(table.c.id))
    return [{"id": int(r.id), "name": r.name} for r in rows]


async def vehicle_type_names(conn: AsyncConnection) -> set[str]:
    return {r.name for r in await conn.execute(select(vehicle_types.c.name))}


async def active_cancellation_reasons(conn: AsyncConnection) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(
            cancellation_reasons.c.id,
            cancellation_reasons.c.name,
            cancellation_reasons.c.description,
            cancellation_reasons.c.position,
        )
        .where(cancellation_reasons.c.active.is_(True))
        .order_by(cancellation_reasons.c.position, cancellation_reasons.c.id)
    )
    return [{"id": int(r.id), "name": r.name, "description": r.description, "position": int(r.position)} for r in rows]


async def find_active_reason(conn: AsyncConnection, reason_id: int) -> dict[str, Any] | None:
    row = (
        await conn.execute(
            select(cancellation_reasons.c.id, cancellation_reasons.c.name).where(
                cancellation_reasons.c.id == reason_id, cancellation_reasons.c.active.is_(True)
            )
        )
    ).first()
    return None if row is None else {"id": int(row.id), "name": row.name}
