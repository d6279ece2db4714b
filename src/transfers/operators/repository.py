"""The SQL of the ``operators`` table. Functions run in the caller's transaction; none commits."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import operators


async def insert_operator(conn: AsyncConnection, *, email: str, role: str, password_hash: str, now: datetime) -> int:
    result = await conn.execute(
        insert(operators)
        .values(email=email, role=role, password_hash=password_hash, status="active", created_at=now)
        .returning(operators.c.id)
    )
    return int(result.scalar_one())


async def by_email(conn: AsyncConnection, email: str) -> dict[str, Any] | None:
    row = (await conn.execute(select(operators).where(operators.c.email == email))).mappings().first()
    return dict(row) if row else None


async def by_id(conn: AsyncConnection, operator_id: int) -> dict[str, Any] | None:
    row = (await conn.execute(select(operators).where(operators.c.id == operator_id))).mappings().first()
    return dict(row) if row else None


async def list_operators(conn: AsyncConnection) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(
            operators.c.id,
            operators.c.email,
            operators.c.role,
            operators.c.status,
            operators.c.created_at,
            operators.c.disabled_at,
        ).order_by(operators.c.id)
    )
    return [dict(r._mapping) for r in rows]


async def disable(conn: AsyncConnection, operator_id: int, now: datetime) -> bool:
    result = await conn.execute(
        update(operators).where(operators.c.id == operator_id).values(status="disabled", disabled_at=now)
    )
    return bool(result.rowcount)
