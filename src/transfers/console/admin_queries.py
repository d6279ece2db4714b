"""The read-only SQL of the console's ``Clients``, ``Partners`` and ``Deliveries`` pages (issue 13).
Not scoped by owner: operators see every client's and partner's rows, and nothing here is reachable
from a client's or partner's request. Writes go through the services the CLI uses, never here."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import admin_audit, api_keys, bookings, clients, outbox, partners, wallets, webhook_deliveries
from transfers.delivery.repository import PARTNER_CALLS

PENDING, FAILED, EXPIRED = "pending", "failed", "expired"


# --- clients -------------------------------------------------------------------------------------------


async def list_clients(conn: AsyncConnection, *, limit: int = 500) -> list[dict[str, Any]]:
    """Every client with its wallet (currency, balance), newest first."""
    rows = await conn.execute(
        select(
            clients.c.id,
            clients.c.name,
            clients.c.pay_type,
            clients.c.status,
            clients.c.created_at,
            wallets.c.currency,
            wallets.c.balance,
        )
        .select_from(clients.outerjoin(wallets, wallets.c.client_id == clients.c.id))
        .order_by(clients.c.id.desc())
        .limit(limit)
    )
    return [dict(r._mapping) for r in rows]


async def client_detail(conn: AsyncConnection, client_id: int) -> dict[str, Any] | None:
    row = (
        await conn.execute(
            select(*clients.c, wallets.c.id.label("wallet_id"), wallets.c.currency, wallets.c.balance)
            .select_from(clients.outerjoin(wallets, wallets.c.client_id == clients.c.id))
            .where(clients.c.id == client_id)
        )
    ).first()
    return None if row is None else dict(row._mapping)


async def client_keys(conn: AsyncConnection, client_id: int) -> list[dict[str, Any]]:
    """The client's API keys (prefix, created, revoked), newest first; never a hash."""
    rows = await conn.execute(
        select(api_keys.c.prefix, api_keys.c.created_at, api_keys.c.revoked_at)
        .where(api_keys.c.client_id == client_id)
        .order_by(api_keys.c.id.desc())
    )
    return [dict(r._mapping) for r in rows]


async def key_owner(conn: AsyncConnection, prefix: str) -> int | None:
    """The client a key prefix belongs to (None: no such key, or a partner's)."""
    owner = (await conn.execute(select(api_keys.c.client_id).where(api_keys.c.prefix == prefix))).scalar()
    return None if owner is None else int(owner)


# --- partners ------------------------------------------------------------------------------------------


async def partner_row(conn: AsyncConnection, partner_id: int) -> dict[str, Any] | None:
    """The partner's public columns (no sealed secrets) and whether a previous signing secret is
    still being sent."""
    row = (
        await conn.execute(
            select(
                partners.c.id,
                partners.c.name,
                partners.c.base_url,
                partners.c.airports,
                partners.c.markup_percent,
                partners.c.status,
                partners.c.is_sandbox,
                partners.c.created_at,
                partners.c.previous_secret_until,
                partners.c.cancellation_policy,
                partners.c.hosted,
                partners.c.follow_flight_minutes,  # issue 23, docs/rules/flights.md#partner-policy
                partners.c.free_wait_minutes,
            ).where(partners.c.id == partner_id)
        )
    ).first()
    return None if row is None else dict(row._mapping)


async def partner_key_prefixes(conn: AsyncConnection, partner_id: int) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(api_keys.c.prefix, api_keys.c.created_at, api_keys.c.revoked_at)
        .where(api_keys.c.partner_id == partner_id)
        .order_by(api_keys.c.id.desc())
    )
    return [dict(r._mapping) for r in rows]


# --- deliveries ----------------------------------------------------------------------------------------


async def deliveries(conn: AsyncConnection, statuses: tuple[str, ...], *, limit: int) -> list[dict[str, Any]]:
    """Partner deliveries in ``statuses``, newest first, each with its booking's reservation number
    and the partner's name."""
    rows = await conn.execute(
        select(
            outbox.c.id,
            outbox.c.kind,
            outbox.c.status,
            outbox.c.attempts,
            outbox.c.next_attempt_at,
            outbox.c.deadline_at,
            outbox.c.last_error,
            outbox.c.created_at,
            outbox.c.finished_at,
            outbox.c.partner_id,
            outbox.c.webhook_id,
            partners.c.name.label("partner_name"),
            bookings.c.reservation_no,
        )
        .select_from(
            outbox.join(bookings, bookings.c.id == outbox.c.booking_id).join(
                partners, partners.c.id == outbox.c.partner_id
            )
        )
        .where(outbox.c.status.in_(statuses), PARTNER_CALLS)
        .order_by(outbox.c.id.desc())
        .limit(limit)
    )
    return [dict(r._mapping) for r in rows]


async def delivery_counts(conn: AsyncConnection) -> dict[str, int]:
    rows = await conn.execute(
        select(outbox.c.status, func.count())
        .where(outbox.c.status.in_((PENDING, FAILED, EXPIRED)), PARTNER_CALLS)
        .group_by(outbox.c.status)
    )
    return {str(status): int(count) for status, count in rows}


async def last_check(conn: AsyncConnection, partner_id: int) -> dict[str, Any] | None:
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
    return None if row is None else dict(row._mapping)


async def webhook_delivery_counts(conn: AsyncConnection) -> dict[str, int]:
    """Client webhook deliveries (docs/rules/webhooks.md) pending and failed."""
    rows = await conn.execute(
        select(webhook_deliveries.c.status, func.count())
        .where(webhook_deliveries.c.status.in_((PENDING, FAILED)))
        .group_by(webhook_deliveries.c.status)
    )
    return {str(status): int(count) for status, count in rows}
