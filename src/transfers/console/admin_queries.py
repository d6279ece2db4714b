"""The read-only SQL of the console's ``Clients``, ``Partners`` and ``Deliveries`` pages (docs/rules/console.md).
Not scoped by owner: operators see every client's and partner's rows, and nothing here is reachable
from a client's or partner's request. Writes go through the services the CLI uses, never here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.console.rows import (
    ClientDetail,
    ClientLine,
    ConsolePartner,
    DeliveryLine,
    KeyLine,
    LastCheck,
    names,
)
from transfers.db.tables import admin_audit, api_keys, bookings, clients, outbox, partners, wallets, webhook_deliveries
from transfers.delivery.repository import PARTNER_CALLS

PENDING, FAILED, EXPIRED = "pending", "failed", "expired"


# --- clients -------------------------------------------------------------------------------------------


# A client's default wallet (docs/rules/wallet.md#currencies): the one the client list and page show.
_DEFAULT_WALLET = and_(wallets.c.client_id == clients.c.id, wallets.c.is_default.is_(True))
_WALLET = {"wallet_id": wallets.c.id.label("wallet_id"), "currency": wallets.c.currency, "balance": wallets.c.balance}


def _client_columns(row: type) -> tuple[Any, ...]:
    return tuple(_WALLET[name] if name in _WALLET else clients.c[name] for name in names(row))


async def list_clients(conn: AsyncConnection, *, limit: int = 500) -> list[ClientLine]:
    """Every client with its wallet (currency, balance), newest first."""
    rows = await conn.execute(
        select(*_client_columns(ClientLine))
        .select_from(clients.outerjoin(wallets, _DEFAULT_WALLET))
        .order_by(clients.c.id.desc())
        .limit(limit)
    )
    return [ClientLine(*r) for r in rows]


async def client_detail(conn: AsyncConnection, client_id: int) -> ClientDetail | None:
    row = (
        await conn.execute(
            select(*_client_columns(ClientDetail))
            .select_from(clients.outerjoin(wallets, _DEFAULT_WALLET))
            .where(clients.c.id == client_id)
        )
    ).first()
    return None if row is None else ClientDetail(*row)


async def client_keys(conn: AsyncConnection, client_id: int) -> list[KeyLine]:
    """The client's API keys (prefix, created, revoked), newest first; never a hash."""
    rows = await conn.execute(
        select(api_keys.c.prefix, api_keys.c.created_at, api_keys.c.revoked_at)
        .where(api_keys.c.client_id == client_id)
        .order_by(api_keys.c.id.desc())
    )
    return [KeyLine(*r) for r in rows]


async def key_owner(conn: AsyncConnection, prefix: str) -> int | None:
    """The client a key prefix belongs to (None: no such key, or a partner's)."""
    owner = (await conn.execute(select(api_keys.c.client_id).where(api_keys.c.prefix == prefix))).scalar()
    return None if owner is None else int(owner)


# --- partners ------------------------------------------------------------------------------------------


async def partner_row(conn: AsyncConnection, partner_id: int) -> ConsolePartner | None:
    """The partner's public columns (no sealed secrets), its flight policy
    (docs/rules/flights.md#partner-policy) and until when a previous signing secret is still sent."""
    row = (
        await conn.execute(
            select(*(partners.c[name] for name in names(ConsolePartner))).where(partners.c.id == partner_id)
        )
    ).first()
    return None if row is None else ConsolePartner(*row)


async def partner_key_prefixes(conn: AsyncConnection, partner_id: int) -> list[KeyLine]:
    rows = await conn.execute(
        select(api_keys.c.prefix, api_keys.c.created_at, api_keys.c.revoked_at)
        .where(api_keys.c.partner_id == partner_id)
        .order_by(api_keys.c.id.desc())
    )
    return [KeyLine(*r) for r in rows]


# --- deliveries ----------------------------------------------------------------------------------------


_NAMED = {"partner_name": partners.c.name.label("partner_name"), "reservation_no": bookings.c.reservation_no}
_DELIVERY_COLUMNS = tuple(_NAMED[name] if name in _NAMED else outbox.c[name] for name in names(DeliveryLine))


async def deliveries(conn: AsyncConnection, statuses: tuple[str, ...], *, limit: int) -> list[DeliveryLine]:
    """Partner deliveries in ``statuses``, newest first, each with its booking's reservation number
    and the partner's name."""
    rows = await conn.execute(
        select(*_DELIVERY_COLUMNS)
        .select_from(
            outbox.join(bookings, bookings.c.id == outbox.c.booking_id).join(
                partners, partners.c.id == outbox.c.partner_id
            )
        )
        .where(outbox.c.status.in_(statuses), PARTNER_CALLS)
        .order_by(outbox.c.id.desc())
        .limit(limit)
    )
    return [DeliveryLine(*r) for r in rows]


async def delivery_counts(conn: AsyncConnection) -> dict[str, int]:
    rows = await conn.execute(
        select(outbox.c.status, func.count())
        .where(outbox.c.status.in_((PENDING, FAILED, EXPIRED)), PARTNER_CALLS)
        .group_by(outbox.c.status)
    )
    return {str(status): int(count) for status, count in rows}


async def last_check(conn: AsyncConnection, partner_id: int) -> LastCheck | None:
    """The latest conformance check run on this partner (its ``partner.check`` audit row: who, when,
    and the table in ``details``)."""
    row = (
        await conn.execute(
            select(admin_audit.c.actor, admin_audit.c.created_at, admin_audit.c.details)
            .where(admin_audit.c.action == "partner.check", admin_audit.c.subject == f"partner:{partner_id}")
            .order_by(admin_audit.c.id.desc())
            .limit(1)
        )
    ).first()
    return None if row is None else LastCheck(*row)


async def webhook_delivery_counts(conn: AsyncConnection) -> dict[str, int]:
    """Client webhook deliveries (docs/rules/webhooks.md) pending and failed."""
    rows = await conn.execute(
        select(webhook_deliveries.c.status, func.count())
        .where(webhook_deliveries.c.status.in_((PENDING, FAILED)))
        .group_by(webhook_deliveries.c.status)
    )
    return {str(status): int(count) for status, count in rows}
