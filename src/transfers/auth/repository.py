"""The one query behind authentication: key, owner and owner's state in a single round trip."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import api_keys, clients, partners, wallets

_LOOKUP = (
    select(
        api_keys.c.key_hash,
        api_keys.c.revoked_at,
        api_keys.c.client_id,
        api_keys.c.partner_id,
        clients.c.name.label("client_name"),
        clients.c.pay_type,
        clients.c.status.label("client_status"),
        clients.c.can_create,
        clients.c.can_cancel,
        wallets.c.currency,
        partners.c.name.label("partner_name"),
        partners.c.status.label("partner_status"),
    )
    .select_from(api_keys)
    .outerjoin(clients, clients.c.id == api_keys.c.client_id)
    .outerjoin(wallets, wallets.c.client_id == clients.c.id)
    .outerjoin(partners, partners.c.id == api_keys.c.partner_id)
)


async def find_key(conn: AsyncConnection, prefix: str) -> dict[str, Any] | None:
    row = (await conn.execute(_LOOKUP.where(api_keys.c.prefix == prefix))).mappings().first()
    return dict(row) if row else None
