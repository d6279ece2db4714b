"""The SQL of agency users (``agency_users``): always scoped by the client where a page asks, so one
agency's admin can never read or change another agency's people."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clients.models import ClientPrincipal
from transfers.db.tables import agency_users, clients, wallets


@dataclass(frozen=True, slots=True)
class AgencyUserRow:
    id: int
    client_id: int
    email: str
    role: str
    status: str
    password_hash: str
    created_at: datetime
    disabled_at: datetime | None


def _row(mapping: object) -> AgencyUserRow:
    m = dict(mapping)  # type: ignore[call-overload]
    return AgencyUserRow(
        int(m["id"]),
        int(m["client_id"]),
        str(m["email"]),
        str(m["role"]),
        str(m["status"]),
        str(m["password_hash"]),
        m["created_at"],
        m["disabled_at"],
    )


async def insert_user(
    conn: AsyncConnection, *, client_id: int, email: str, role: str, password_hash: str, now: datetime
) -> int:
    statement = (
        insert(agency_users)
        .values(
            client_id=client_id, email=email, role=role, password_hash=password_hash, status="active", created_at=now
        )
        .returning(agency_users.c.id)
    )
    return int((await conn.execute(statement)).scalar_one())


async def by_email(conn: AsyncConnection, email: str) -> AgencyUserRow | None:
    row = (await conn.execute(select(agency_users).where(agency_users.c.email == email))).mappings().first()
    return _row(row) if row else None


async def by_id(conn: AsyncConnection, user_id: int) -> AgencyUserRow | None:
    row = (await conn.execute(select(agency_users).where(agency_users.c.id == user_id))).mappings().first()
    return _row(row) if row else None


async def users_of_client(conn: AsyncConnection, client_id: int) -> list[AgencyUserRow]:
    rows = await conn.execute(
        select(agency_users).where(agency_users.c.client_id == client_id).order_by(agency_users.c.id)
    )
    return [_row(r) for r in rows.mappings()]


async def set_status(conn: AsyncConnection, *, client_id: int, user_id: int, status: str, now: datetime) -> bool:
    """Only a user of ``client_id`` changes (another agency's user id changes nothing: False)."""
    result = await conn.execute(
        update(agency_users)
        .where(agency_users.c.id == user_id, agency_users.c.client_id == client_id)
        .values(status=status, disabled_at=now if status == "disabled" else None)
    )
    return result.rowcount == 1


async def client_principal(conn: AsyncConnection, client_id: int) -> ClientPrincipal | None:
    """The client as the API's key lookup sees it (``auth/service.py``), so a page calls the same use
    cases with the same permissions; ``key_prefix`` is empty (no API key was used)."""
    row = (
        await conn.execute(
            select(
                clients.c.id,
                clients.c.name,
                clients.c.pay_type,
                clients.c.status,
                clients.c.can_create,
                clients.c.can_cancel,
                wallets.c.currency,
            )
            .join(wallets, and_(wallets.c.client_id == clients.c.id, wallets.c.is_default.is_(True)))
            .where(clients.c.id == client_id)
        )
    ).first()
    if row is None:
        return None
    return ClientPrincipal(
        client_id=int(row.id),
        name=str(row.name),
        pay_type=str(row.pay_type),
        status=str(row.status),
        can_create=bool(row.can_create),
        can_cancel=bool(row.can_cancel),
        currency=str(row.currency),
        key_prefix="",
    )
