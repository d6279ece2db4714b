"""Client, API-key and admin-audit persistence. Repositories flush; the caller's scope commits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.auth.keys import IssuedKey
from transfers.clients.models import ClientStatus, NewClient
from transfers.db.tables import admin_audit, api_keys, clients, wallets


async def insert_client(conn: AsyncConnection, new: NewClient, now: datetime) -> tuple[int, int]:
    """Insert the client and its wallet (at zero); returns (client_id, wallet_id)."""
    client_id = (
        await conn.execute(
            insert(clients)
            .values(
                name=new.name,
                pay_type=new.pay_type,
                status=ClientStatus.ACTIVE.value,
                can_create=new.can_create,
                can_cancel=new.can_cancel,
                created_at=now,
            )
            .returning(clients.c.id)
        )
    ).scalar_one()
    wallet_id = (
        await conn.execute(
            insert(wallets)
            .values(client_id=client_id, currency=new.currency, balance=0, updated_at=now, is_default=True)
            .returning(wallets.c.id)
        )
    ).scalar_one()
    return int(client_id), int(wallet_id)


async def insert_api_key(
    conn: AsyncConnection,
    issued: IssuedKey,
    now: datetime,
    *,
    client_id: int | None = None,
    partner_id: int | None = None,
) -> None:
    await conn.execute(
        insert(api_keys).values(
            prefix=issued.prefix,
            key_hash=issued.key_hash,
            client_id=client_id,
            partner_id=partner_id,
            created_at=now,
        )
    )


async def set_support_phone(conn: AsyncConnection, client_id: int, phone: str | None) -> bool:
    result = await conn.execute(update(clients).where(clients.c.id == client_id).values(support_phone=phone))
    return bool(result.rowcount)


async def set_client_status(conn: AsyncConnection, client_id: int, status: ClientStatus) -> bool:
    result = await conn.execute(update(clients).where(clients.c.id == client_id).values(status=status.value))
    return result.rowcount == 1


async def revoke_key(conn: AsyncConnection, prefix: str, now: datetime) -> bool:
    """Revoke a key by its prefix. Revoking an already revoked key is a no-op that returns True."""
    result = await conn.execute(
        update(api_keys).where(api_keys.c.prefix == prefix, api_keys.c.revoked_at.is_(None)).values(revoked_at=now)
    )
    if result.rowcount == 1:
        return True
    return await key_exists(conn, prefix)


async def key_exists(conn: AsyncConnection, prefix: str) -> bool:
    """Whether a key (revoked or not) has this prefix."""
    return (await conn.execute(select(api_keys.c.id).where(api_keys.c.prefix == prefix))).first() is not None


@dataclass(frozen=True, slots=True)
class ClientKey:
    """One of a client's API keys as its owner may see it: the prefix, never the secret or its hash."""

    prefix: str
    created_at: datetime
    revoked_at: datetime | None


async def keys_of_client(conn: AsyncConnection, client_id: int) -> list[ClientKey]:
    """A client's API keys (never their hashes), newest first: revoked ones too, shown as revoked."""
    rows = await conn.execute(
        select(api_keys.c.prefix, api_keys.c.created_at, api_keys.c.revoked_at)
        .where(api_keys.c.client_id == client_id)
        .order_by(api_keys.c.id.desc())
    )
    return [ClientKey(r.prefix, r.created_at, r.revoked_at) for r in rows]


async def key_belongs_to(conn: AsyncConnection, prefix: str, client_id: int) -> bool:
    found = await conn.execute(
        select(api_keys.c.id).where(api_keys.c.prefix == prefix, api_keys.c.client_id == client_id)
    )
    return found.first() is not None


async def record_admin_action(
    conn: AsyncConnection,
    *,
    actor: str,
    action: str,
    subject: str,
    details: dict[str, Any],
    now: datetime,
) -> None:
    await conn.execute(
        insert(admin_audit).values(actor=actor, action=action, subject=subject, details=details, created_at=now)
    )


async def client_pay_type(conn: AsyncConnection, client_id: int) -> str | None:
    """The client's pay type, or None when there is no such client."""
    found = await conn.execute(select(clients.c.pay_type).where(clients.c.id == client_id))
    value = found.scalar_one_or_none()
    return None if value is None else str(value)


async def client_exists(conn: AsyncConnection, client_id: int) -> bool:
    """Whether the client is there, with its wallet."""
    found = await conn.execute(
        select(clients.c.id)
        .join(wallets, and_(wallets.c.client_id == clients.c.id, wallets.c.is_default.is_(True)))
        .where(clients.c.id == client_id)
    )
    return found.first() is not None
