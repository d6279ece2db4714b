"""Reference data: vehicle types, segments, services and cancellation reasons."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import cancellation_reasons, car_services, vehicle_segments, vehicle_types


@dataclass(frozen=True, slots=True)
class CatalogueItem:
    """An entry of a catalogue (``GET /api/public/car/{services,segment,type}``)."""

    id: int
    name: str

    def public(self) -> dict[str, int | str]:
        return {"id": self.id, "name": self.name}


@dataclass(frozen=True, slots=True)
class CancellationReason:
    """An active cancellation reason, in the order clients are shown them."""

    id: int
    name: str
    description: str | None
    position: int

    def public(self) -> dict[str, int | str | None]:
        return {"id": self.id, "name": self.name, "description": self.description, "position": self.position}


CATALOGUES: dict[str, Table] = {
    "services": car_services,
    "segment": vehicle_segments,
    "type": vehicle_types,
}


async def list_catalogue(conn: AsyncConnection, name: str) -> list[CatalogueItem]:
    table = CATALOGUES[name]
    rows = await conn.execute(select(table.c.id, table.c.name).order_by(table.c.id))
    return [CatalogueItem(int(r.id), r.name) for r in rows]


async def vehicle_type_names(conn: AsyncConnection) -> set[str]:
    return {r.name for r in await conn.execute(select(vehicle_types.c.name))}


async def active_cancellation_reasons(conn: AsyncConnection) -> list[CancellationReason]:
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
    return [CancellationReason(int(r.id), r.name, r.description, int(r.position)) for r in rows]


async def find_active_reason(conn: AsyncConnection, reason_id: int) -> CatalogueItem | None:
    """The active reason of that number (its id and name), or None."""
    row = (
        await conn.execute(
            select(cancellation_reasons.c.id, cancellation_reasons.c.name).where(
                cancellation_reasons.c.id == reason_id, cancellation_reasons.c.active.is_(True)
            )
        )
    ).first()
    return None if row is None else CatalogueItem(int(row.id), row.name)
