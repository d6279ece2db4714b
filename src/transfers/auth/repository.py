"""The one query behind authentication: key, owner and owner's state in a single round trip."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, select

from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import api_keys, clients, partners, wallets
from transfers.rows import row_type


@row_type
class KeyOwner:
    """An API key (by its prefix) with its owner's state: a client's (with its wallet's currency)
    or a partner's; the other owner's columns are None."""

    key_hash: str
    revoked_at: datetime | None
    client_id: int | None
    partner_id: int | None
    client_name: str | None
    pay_type: str | None
    client_status: str | None
    can_create: bool | None
    can_cancel: bool | None
    currency: str | None
    partner_name: str | None
    partner_status: str | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> KeyOwner:
        return cls(*[row[name] for name in KEY_OWNER_FIELDS])


KEY_OWNER_FIELDS = tuple(f.name for f in fields(KeyOwner))

# By the direct path (db/direct.py): with many keys in use each one misses the 1 s cache about once a
# second, and through the engine those lookups were ~10 % of a create's CPU
# (docs/operations/performance-history.md#profile).
_LOOKUP = DirectStatement(
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
    # the default wallet: the principal's currency (docs/rules/wallet.md#currencies)
    .outerjoin(wallets, and_(wallets.c.client_id == clients.c.id, wallets.c.is_default.is_(True)))
    .outerjoin(partners, partners.c.id == api_keys.c.partner_id)
    .where(api_keys.c.prefix == bindparam("prefix"))
)


async def find_key(db: Database, prefix: str) -> KeyOwner | None:
    row = await db.read_one(_LOOKUP, prefix=prefix)
    return None if row is None else KeyOwner.from_row(row)
