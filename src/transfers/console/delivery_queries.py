"""The Deliveries page's and the dashboard's grouped reads: one row per partner and per
client webhook endpoint with its failed and pending counts and its latest error, so one dead endpoint
is one line with a count rather than a page of rows. Read-only; operators see every owner's rows."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.console.rows import EndpointGroup, PartnerGroup, WebhookFailure
from transfers.db.tables import clients, outbox, partners, webhook_deliveries, webhook_endpoints
from transfers.delivery.repository import PARTNER_CALLS

PENDING, FAILED, EXPIRED, DELIVERED = "pending", "failed", "expired", "delivered"
D, W, OB = webhook_deliveries.c, webhook_endpoints.c, outbox.c


def _count_of(column: Any, *values: str) -> Any:
    return func.sum(case((column.in_(values), 1), else_=0))


async def partner_groups(conn: AsyncConnection) -> list[PartnerGroup]:
    """Per partner with failed, expired or pending deliveries: the counts and the newest one's error."""
    newest = func.max(OB.id).label("newest_id")
    rows = await conn.execute(
        select(
            partners.c.id,
            partners.c.name,
            partners.c.status,
            _count_of(OB.status, FAILED, EXPIRED).label("failed"),
            _count_of(OB.status, PENDING).label("pending"),
            newest,
        )
        .select_from(outbox.join(partners, partners.c.id == OB.partner_id))
        .where(OB.status.in_((PENDING, FAILED, EXPIRED)), PARTNER_CALLS)
        .group_by(partners.c.id, partners.c.name, partners.c.status)
    )
    found = list(rows)
    errors = await _outbox_errors(conn, [int(r.newest_id) for r in found])
    groups = [
        PartnerGroup(
            int(r.id),
            r.name,
            r.status,
            int(r.failed or 0),
            int(r.pending or 0),
            int(r.newest_id),
            errors.get(int(r.newest_id)),
        )
        for r in found
    ]
    return sorted(groups, key=lambda g: (-(g.failed + g.pending), g.id))


async def _outbox_errors(conn: AsyncConnection, ids: list[int]) -> dict[int, str | None]:
    if not ids:
        return {}
    rows = await conn.execute(select(OB.id, OB.last_error).where(OB.id.in_(ids)))
    return {int(r.id): r.last_error for r in rows}


async def endpoint_groups(conn: AsyncConnection) -> list[EndpointGroup]:
    """Per client webhook endpoint with failed or pending deliveries: the client's name, the URL, the
    endpoint's status, the counts, and the newest delivery's error and HTTP status."""
    rows = await conn.execute(
        select(
            W.id.label("endpoint_pk"),
            W.public_id,
            W.url,
            W.status,
            W.disabled_reason,
            W.client_id,
            clients.c.name.label("client_name"),
            _count_of(D.status, FAILED).label("failed"),
            _count_of(D.status, PENDING).label("pending"),
            func.max(D.id).label("newest_id"),
        )
        .select_from(
            webhook_deliveries.join(webhook_endpoints, W.id == D.endpoint_id).join(clients, clients.c.id == W.client_id)
        )
        .where(D.status.in_((PENDING, FAILED)), W.deleted_at.is_(None))
        .group_by(W.id, W.public_id, W.url, W.status, W.disabled_reason, W.client_id, clients.c.name)
    )
    grouped = list(rows)
    newest = [int(r.newest_id) for r in grouped]
    answers: dict[int, tuple[str | None, int | None]] = {}
    if newest:
        found = await conn.execute(select(D.id, D.last_error, D.last_http_status).where(D.id.in_(newest)))
        answers = {int(r.id): (r.last_error, r.last_http_status) for r in found}
    groups = [
        EndpointGroup(
            int(r.endpoint_pk),
            r.public_id,
            r.url,
            r.status,
            r.disabled_reason,
            int(r.client_id),
            r.client_name,
            int(r.failed or 0),
            int(r.pending or 0),
            int(r.newest_id),
            *answers.get(int(r.newest_id), (None, None)),
        )
        for r in grouped
    ]
    return sorted(groups, key=lambda g: (-(g.failed + g.pending), g.endpoint_pk))


async def endpoint_owner(conn: AsyncConnection, public_id: str) -> int | None:
    """The client that owns the (not deleted) endpoint ``we_...``, for the console's disable action."""
    row = (await conn.execute(select(W.client_id).where(W.public_id == public_id, W.deleted_at.is_(None)))).first()
    return None if row is None else int(row.client_id)


async def client_names(conn: AsyncConnection, ids: Iterable[int]) -> dict[int, str]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = await conn.execute(select(clients.c.id, clients.c.name).where(clients.c.id.in_(wanted)))
    return {int(r.id): str(r.name) for r in rows}


async def webhook_failures_since(conn: AsyncConnection, since: datetime) -> list[WebhookFailure]:
    """Client webhook endpoints whose deliveries failed since ``since`` or are being retried after
    a failed attempt (pending with attempts), per endpoint with the client's name: the dashboard's
    third kind of error, beside partner searches and partner deliveries."""
    failing = (D.status == FAILED) & (D.finished_at >= since)
    retrying = (D.status == PENDING) & (D.attempts > 0)
    rows = await conn.execute(
        select(
            W.public_id,
            W.url,
            W.client_id,
            clients.c.name.label("client_name"),
            func.sum(case((failing, 1), else_=0)).label("failed"),
            func.sum(case((retrying, 1), else_=0)).label("retrying"),
        )
        .select_from(
            webhook_deliveries.join(webhook_endpoints, W.id == D.endpoint_id).join(clients, clients.c.id == W.client_id)
        )
        .where(failing | retrying)
        .group_by(W.public_id, W.url, W.client_id, clients.c.name)
    )
    found = [
        WebhookFailure(r.public_id, r.url, int(r.client_id), r.client_name, int(r.failed or 0), int(r.retrying or 0))
        for r in rows
    ]
    return sorted(found, key=lambda r: (-(r.failed + r.retrying), r.public_id))
