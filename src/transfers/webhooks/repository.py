"""Webhook endpoints, client events and their deliveries: every statement on these tables but the
events' inserts (``client_events/repository.py``: a booking change writes its events from below
this package).

Claiming works like the partner outbox's (``delivery/repository.py``): a claim sets ``lease_until``
and only rows whose lease is empty or expired are claimed; the claiming UPDATE re-checks that on
the row it locks, so two workers never hold one delivery at the same time, and a worker killed
mid-delivery leaves a lease that simply expires (the delivery is sent again, same ``webhook-id``).
A claim takes at most ``per_endpoint`` deliveries of any one endpoint, oldest due first, so an
endpoint with a backlog (or one that hangs) never fills a worker's whole batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, delete, exists, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.db.direct import DirectStatement
from transfers.db.tables import bookings, client_events, clients, webhook_deliveries, webhook_endpoints
from transfers.webhooks.models import (
    ClientEvent,
    Endpoint,
    LoggedDelivery,
    SigningTarget,
    Subscriber,
    WebhookDelivery,
    names,
)

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
ENABLED, DISABLED = "enabled", "disabled"

E, D, W = client_events.c, webhook_deliveries.c, webhook_endpoints.c


_ENDPOINT = tuple(W[name] for name in names(Endpoint))
_EVENT = tuple(E[name] for name in names(ClientEvent))


# --- endpoints (always scoped by client) --------------------------------------------------------------


def _live(client_id: int) -> Any:
    return and_(W.client_id == client_id, W.deleted_at.is_(None))


async def count_endpoints(conn: AsyncConnection, client_id: int) -> int:
    return int((await conn.execute(select(func.count()).where(_live(client_id)))).scalar_one())


async def lock_client(conn: AsyncConnection, client_id: int) -> None:
    """Serialise endpoint creation per client (the limit of 10 holds under concurrency): a row lock
    on PostgreSQL; SQLite's write transaction already excludes others."""
    await conn.execute(select(clients.c.id).where(clients.c.id == client_id).with_for_update())


async def insert_endpoint(conn: AsyncConnection, values: dict[str, Any]) -> Endpoint:
    row = (await conn.execute(insert(webhook_endpoints).values(values).returning(*_ENDPOINT))).one()
    return Endpoint(*row)


async def list_endpoints(conn: AsyncConnection, client_id: int) -> list[Endpoint]:
    rows = await conn.execute(select(*_ENDPOINT).where(_live(client_id)).order_by(W.id))
    return [Endpoint(*r) for r in rows]


async def get_endpoint(
    conn: AsyncConnection, client_id: int, public_id: str, *, for_update: bool = False
) -> Endpoint | None:
    if "\x00" in public_id:  # no id has one, and PostgreSQL refuses it in a text parameter (a 500 before)
        return None
    query = select(*_ENDPOINT).where(_live(client_id), W.public_id == public_id)
    if for_update:
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return Endpoint(*row) if row else None


async def update_endpoint(conn: AsyncConnection, endpoint_id: int, values: dict[str, Any]) -> Endpoint:
    row = (
        await conn.execute(update(webhook_endpoints).where(W.id == endpoint_id).values(values).returning(*_ENDPOINT))
    ).one()
    return Endpoint(*row)


async def fail_pending(conn: AsyncConnection, endpoint_id: int, *, reason: str, now: datetime) -> int:
    """Stop every pending delivery to an endpoint (disabled or deleted): ``failed``, with the reason."""
    result = await conn.execute(
        update(webhook_deliveries)
        .where(D.endpoint_id == endpoint_id, D.status == PENDING)
        .values(status=FAILED, last_error=reason, finished_at=now, lease_until=None)
    )
    return int(result.rowcount)


# --- events --------------------------------------------------------------------------------------------


async def claim_unfanned(conn: AsyncConnection, *, limit: int) -> list[ClientEvent]:
    """The oldest events not yet fanned out, row-locked (other workers skip them on PostgreSQL)."""
    query = (
        select(*_EVENT).where(E.fanned_out_at.is_(None)).order_by(E.id).limit(limit).with_for_update(skip_locked=True)
    )
    return [ClientEvent(*r) for r in await conn.execute(query)]


async def endpoints_naming(conn: AsyncConnection, client_id: int, event_type: str) -> list[SigningTarget]:
    """The client's enabled, not deleted endpoints that name ``event_type`` itself ("*" does not
    count: docs/rules/ride.md#client-events), with what signing a POST to them needs."""
    query = select(*(W[name] for name in names(SigningTarget))).where(
        W.client_id == client_id, W.status == ENABLED, W.deleted_at.is_(None)
    )
    rows = [SigningTarget(*r) for r in await conn.execute(query.order_by(W.id))]
    return [row for row in rows if event_type in (row.events or ())]


async def endpoints_of_clients(conn: AsyncConnection, client_ids: Iterable[int]) -> list[Subscriber]:
    """Enabled, not deleted endpoints of these clients."""
    query = select(*(W[name] for name in names(Subscriber))).where(
        W.client_id.in_(sorted(set(client_ids))), W.status == ENABLED, W.deleted_at.is_(None)
    )
    return [Subscriber(*r) for r in await conn.execute(query)]


async def bookings_by_id(conn: AsyncConnection, booking_ids: Iterable[int]) -> dict[int, Booking]:
    rows = await conn.execute(select(bookings).where(bookings.c.id.in_(sorted(set(booking_ids)))))
    return {int(r["id"]): Booking.from_row(r) for r in rows.mappings()}


_FANNED_OUT = (
    update(client_events)
    .where(E.id == bindparam("e_pk"))
    .values(body=bindparam("e_body", type_=E.body.type), fanned_out_at=bindparam("e_now", type_=E.fanned_out_at.type))
)


async def mark_fanned_out(conn: AsyncConnection, bodies: dict[int, str], *, now: datetime) -> None:
    """Each event's body fixed and the event marked fanned out: one executemany for the batch."""
    if bodies:
        await conn.execute(_FANNED_OUT, [{"e_pk": pk, "e_body": body, "e_now": now} for pk, body in bodies.items()])


async def insert_deliveries(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        await conn.execute(insert(webhook_deliveries), list(rows))


# --- delivery ------------------------------------------------------------------------------------------


def _claimable(now: datetime) -> Any:
    return and_(D.status == PENDING, or_(D.lease_until.is_(None), D.lease_until < now))


# What a claimed delivery reads: ``models.WebhookDelivery``'s fields, in order. A delivery that is
# no client event (a driver position) has its own webhook-id and body, and its kind for a type.
_CLAIMED: tuple[Any, ...] = (
    D.id,
    D.endpoint_id,
    D.kind,
    D.attempts,
    D.lease_until,
    D.deadline_at,
    D.created_at,
    func.coalesce(D.webhook_id, E.event_id).label("event_id"),
    func.coalesce(E.type, D.kind).label("type"),
    func.coalesce(D.body, E.body).label("body"),
    W.url,
    W.secret_enc,
    W.old_secret_enc,
    W.old_secret_until,
)


async def claim_due(
    conn: AsyncConnection,
    *,
    now: datetime,
    lease_until: datetime,
    limit: int,
    per_endpoint: int,
    busy: Iterable[int] = (),
    kinds: Sequence[str] | None = None,
    taken: dict[int, int] | None = None,
) -> list[WebhookDelivery]:
    """Lease up to ``limit`` due deliveries to enabled endpoints, at most ``per_endpoint`` of any one
    endpoint and none of ``busy`` ones; answers each with its event and endpoint. ``kinds``: only
    those kinds; ``taken``: how many each endpoint has from an earlier claim in this transaction
    (updated), so two claims together keep the cap."""
    # The oldest due candidates (one range scan of ix_webhook_deliveries_status_next), a few times the
    # batch so that an endpoint's backlog at the head leaves room for the others; capped per endpoint
    # here. Row-locked, skipping rows another worker is claiming (PostgreSQL).
    candidates = (
        select(D.id, D.endpoint_id)
        .select_from(webhook_deliveries.join(webhook_endpoints, W.id == D.endpoint_id))
        .where(_claimable(now), D.next_attempt_at <= now, W.status == ENABLED, W.deleted_at.is_(None))
        .order_by(D.next_attempt_at, D.id)
        .limit(limit * 4)
        .with_for_update(skip_locked=True, of=webhook_deliveries)
    )
    skip = sorted(set(busy))
    if skip:
        candidates = candidates.where(D.endpoint_id.not_in(skip))
    if kinds is not None:
        candidates = candidates.where(D.kind.in_(list(kinds)))
    taken = {} if taken is None else taken
    chosen: list[int] = []
    for delivery_id, endpoint_id in (await conn.execute(candidates)).all():
        if taken.get(endpoint_id, 0) < per_endpoint:
            taken[endpoint_id] = taken.get(endpoint_id, 0) + 1
            chosen.append(int(delivery_id))
            if len(chosen) >= limit:
                break
    if not chosen:
        return []
    ids = [
        int(i)
        for i in (
            await conn.execute(
                update(webhook_deliveries)
                .where(D.id.in_(chosen), _claimable(now))
                .values(lease_until=lease_until)
                .returning(D.id)
            )
        ).scalars()
    ]
    if not ids:
        return []
    query = (
        select(*_CLAIMED)
        .select_from(
            webhook_deliveries.outerjoin(client_events, E.id == D.event_pk).join(
                webhook_endpoints, W.id == D.endpoint_id
            )
        )
        .where(D.id.in_(ids))
        .order_by(D.next_attempt_at, D.id)
    )
    return [WebhookDelivery(*r) for r in await conn.execute(query)]


async def record(
    conn: AsyncConnection,
    delivery_id: int,
    lease_until: datetime | None,
    *,
    status: str,
    now: datetime,
    http_status: int | None,
    error: str | None,
    next_attempt_at: datetime | None,
) -> bool:
    """The attempt's outcome on a delivery we still hold the lease on (``lease_until`` as claimed):
    finished (delivered or failed) or rescheduled (``next_attempt_at``). False when the lease was lost."""
    values: dict[str, Any] = {
        "attempts": D.attempts + 1,
        "lease_until": None,
        "last_http_status": http_status,
        "last_error": (error or "")[:1000] or None,
        "status": status,
    }
    if status == PENDING:
        values["next_attempt_at"] = next_attempt_at
    else:
        values["finished_at"] = now
    result = await conn.execute(
        update(webhook_deliveries)
        .where(D.id == delivery_id, D.status == PENDING, D.lease_until == lease_until)
        .values(values)
    )
    return result.rowcount == 1


# The same record as one autocommit statement for PostgreSQL's direct path, run unflushed
# (``Database.write_one_unflushed``): a record lost in a PostgreSQL crash only means the delivery is
# sent again after its lease, with the same webhook-id, which at-least-once delivery allows anyway;
# waiting for a WAL flush per delivery was most of a delivery's cost (bench/webhooks.py).
_RECORDED = (
    update(webhook_deliveries)
    .where(
        D.id == bindparam("d_id"), D.status == PENDING, D.lease_until == bindparam("d_lease", type_=D.lease_until.type)
    )
    .values(
        attempts=D.attempts + 1,
        lease_until=None,
        last_http_status=bindparam("d_http", type_=D.last_http_status.type),
        last_error=bindparam("d_error", type_=D.last_error.type),
        status=bindparam("d_status", type_=D.status.type),
        next_attempt_at=func.coalesce(bindparam("d_next", type_=D.next_attempt_at.type), D.next_attempt_at),
        finished_at=bindparam("d_finished", type_=D.finished_at.type),
    )
    .returning(D.id)
    .cte("recorded")
)
RECORD_STATEMENT = DirectStatement(select(_RECORDED.c.id))


def record_params(
    delivery_id: int,
    lease_until: datetime | None,
    *,
    status: str,
    now: datetime,
    http_status: int | None,
    error: str | None,
    next_attempt_at: datetime | None,
) -> dict[str, Any]:
    return {
        "d_id": delivery_id,
        "d_lease": lease_until,
        "d_http": http_status,
        "d_error": (error or "")[:1000] or None,
        "d_status": status,
        "d_next": next_attempt_at,
        "d_finished": None if status == PENDING else now,
    }


async def disable_endpoint(conn: AsyncConnection, endpoint_id: int, *, reason: str, now: datetime) -> None:
    await conn.execute(
        update(webhook_endpoints)
        .where(W.id == endpoint_id, W.status == ENABLED)
        .values(status=DISABLED, disabled_reason=reason, updated_at=now)
    )


async def deliveries_page(
    conn: AsyncConnection, endpoint_id: int, *, below_id: int | None, limit: int
) -> list[LoggedDelivery]:
    """An endpoint's delivery log, newest first."""
    query = (
        select(
            D.id,
            D.status,
            D.attempts,
            D.last_http_status,
            D.next_attempt_at,
            D.created_at,
            E.event_id,
            E.type,
            D.last_error,
        )
        .select_from(webhook_deliveries.join(client_events, E.id == D.event_pk))
        .where(D.endpoint_id == endpoint_id)
        .order_by(D.id.desc())
        .limit(limit)
    )
    if below_id is not None:
        query = query.where(D.id < below_id)
    return [LoggedDelivery(*r) for r in await conn.execute(query)]


async def prune_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> int:
    """Up to ``limit`` client events older than ``cutoff`` with no delivery still pending, deleted
    with their deliveries (the delivery log keeps the retention period). Returns how many events."""
    old = (
        select(E.id)
        .where(
            E.created_at < cutoff,
            E.fanned_out_at.is_not(None),
            ~exists(select(D.id).where(D.event_pk == E.id, D.status == PENDING)),
        )
        .order_by(E.id)
        .limit(limit)
    )
    ids = [int(i) for i in (await conn.execute(old)).scalars()]
    if ids:
        await conn.execute(delete(webhook_deliveries).where(D.event_pk.in_(ids)))
        await conn.execute(delete(client_events).where(E.id.in_(ids)))
    return len(ids)


async def prune_finished_of_kind(conn: AsyncConnection, kind: str, *, finished_before: datetime, limit: int) -> int:
    """Up to ``limit`` finished deliveries of ``kind`` (one that is no client event: a driver
    position) finished before ``finished_before``, deleted; answers how many."""
    doomed = [
        int(i)
        for i in (
            await conn.execute(
                select(D.id).where(D.kind == kind, D.status != PENDING, D.finished_at < finished_before).limit(limit)
            )
        ).scalars()
    ]
    if doomed:
        await conn.execute(delete(webhook_deliveries).where(D.id.in_(doomed)))
    return len(doomed)
