"""The SQL of the ``operators`` table. Functions run in the caller's transaction; none commits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import operators
from transfers.rows import row_type


@row_type
class OperatorRow:
    """One ``operators`` row (the password's argon2id hash included: sign-in reads it)."""

    id: int
    email: str
    role: str
    password_hash: str
    status: str
    created_at: datetime
    disabled_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> OperatorRow:
        return cls(*[row[name] for name in OPERATOR_FIELDS])


@row_type
class ListedOperator:
    """A line of the operators' list: never the password's hash."""

    id: int
    email: str
    role: str
    status: str
    created_at: datetime
    disabled_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> ListedOperator:
        return cls(*[row[name] for name in LISTED_OPERATOR_FIELDS])

    def as_dict(self) -> dict[str, Any]:
        """Every field by name (``transfers operators list --json``)."""
        return {name: getattr(self, name) for name in LISTED_OPERATOR_FIELDS}


OPERATOR_FIELDS = tuple(f.name for f in fields(OperatorRow))
LISTED_OPERATOR_FIELDS = tuple(f.name for f in fields(ListedOperator))


async def insert_operator(conn: AsyncConnection, *, email: str, role: str, password_hash: str, now: datetime) -> int:
    result = await conn.execute(
        insert(operators)
        .values(email=email, role=role, password_hash=password_hash, status="active", created_at=now)
        .returning(operators.c.id)
    )
    return int(result.scalar_one())


async def by_email(conn: AsyncConnection, email: str) -> OperatorRow | None:
    row = (await conn.execute(select(operators).where(operators.c.email == email))).mappings().first()
    return OperatorRow.from_row(row) if row else None


async def by_id(conn: AsyncConnection, operator_id: int) -> OperatorRow | None:
    row = (await conn.execute(select(operators).where(operators.c.id == operator_id))).mappings().first()
    return OperatorRow.from_row(row) if row else None


async def list_operators(conn: AsyncConnection) -> list[ListedOperator]:
    rows = await conn.execute(select(*(operators.c[name] for name in LISTED_OPERATOR_FIELDS)).order_by(operators.c.id))
    return [ListedOperator.from_row(r) for r in rows.mappings()]


async def disable(conn: AsyncConnection, operator_id: int, now: datetime) -> bool:
    result = await conn.execute(
        update(operators).where(operators.c.id == operator_id).values(status="disabled", disabled_at=now)
    )
    return bool(result.rowcount)
