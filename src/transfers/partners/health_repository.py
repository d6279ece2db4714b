"""Partner health rows (``partner_search_minutes``) and the last-hour summary per partner.

Writes add to a minute's row (``INSERT ... ON CONFLICT (partner_id, minute) DO UPDATE SET calls =
calls + excluded.calls, ...``), atomic on both databases, so processes flushing the same minute at
the same moment both count. Rows are written in key order so two flushes on PostgreSQL lock shared
rows in the same order (no deadlock).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.engine import Database
from transfers.db.tables import LATENCY_COLUMNS, SEARCH_OUTCOMES, outbox, partner_search_minutes, partners
from transfers.delivery.repository import EXPIRED, FAILED, PARTNER_CALLS, PENDING
from transfers.partners.health import HOUR, Key, PartnerHealth, Tally, minute_of, p95_ms

T = partner_search_minutes
_OUTCOME_COLUMNS = tuple(f"outcome_{name}" for name in SEARCH_OUTCOMES)
_SUMMED = ("calls", *_OUTCOME_COLUMNS, "latency_sum_ms", *LATENCY_COLUMNS)


def _row(key: Key, tally: Tally) -> dict[str, Any]:
    row: dict[str, Any] = {
        "partner_id": key[0],
        "minute": key[1],
        "calls": tally.calls,
        "latency_sum_ms": tally.latency_sum_ms,
        "latency_max_ms": tally.latency_max_ms,
    }
    row.update(zip(_OUTCOME_COLUMNS, tally.outcomes, strict=True))
    row.update(zip(LATENCY_COLUMNS, tally.buckets, strict=True))
    return row


def _upsert(is_sqlite: bool) -> Any:
    """``INSERT ... ON CONFLICT (partner_id, minute) DO UPDATE`` adding every counter; built once per
    dialect and run with a list of rows (executemany: the statement is compiled once, not per flush)."""
    dialect_insert = sqlite.insert if is_sqlite else postgresql.insert
    greatest = func.max if is_sqlite else func.greatest  # SQLite's two-argument max() is scalar
    statement = dialect_insert(T)
    excluded = statement.excluded
    return statement.on_conflict_do_update(
        index_elements=[T.c.partner_id, T.c.minute],
        set_={
            **{name: T.c[name] + excluded[name] for name in _SUMMED},
            "latency_max_ms": greatest(T.c.latency_max_ms, excluded.latency_max_ms),
        },
    )


_UPSERT = {True: _upsert(True), False: _upsert(False)}


async def add_tallies(db: Database, tallies: dict[Key, Tally]) -> None:
    """Add the counts to their minute rows (created when missing), in one transaction."""
    rows = [_row(key, tallies[key]) for key in sorted(tallies)]
    async with db.write() as conn:
        await conn.execute(_UPSERT[db.is_sqlite], rows)


async def prune_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> int:
    """Delete up to ``limit`` minute rows older than ``cutoff`` (oldest first); answers how many."""
    doomed = select(T.c.id).where(T.c.minute < cutoff).order_by(T.c.minute).limit(limit)
    result = await conn.execute(delete(T).where(T.c.id.in_(doomed.scalar_subquery())))
    return int(result.rowcount or 0)


async def minute_rows(conn: AsyncConnection, partner_id: int) -> list[dict[str, Any]]:
    """Every stored minute of one partner, oldest first (tests and diagnostics)."""
    rows = await conn.execute(select(T).where(T.c.partner_id == partner_id).order_by(T.c.minute))
    return [dict(r) for r in rows.mappings()]


async def last_hour(
    conn: AsyncConnection, now: datetime, partner_ids: Iterable[int] | None = None
) -> list[PartnerHealth]:
    """Per partner (every partner, or those named), ordered by id: search calls, errors (by
    outcome) and the p95 latency over the 60 minutes ending with the current one; partner
    deliveries pending now, and failed or expired within the hour."""
    since = minute_of(now) - HOUR + timedelta(minutes=1)
    wanted = None if partner_ids is None else sorted(set(partner_ids))
    listed = select(partners.c.id, partners.c.name, partners.c.status).order_by(partners.c.id)
    if wanted is not None:
        listed = listed.where(partners.c.id.in_(wanted))
    known = (await conn.execute(listed)).all()
    if not known:
        return []
    ids = [int(r.id) for r in known]
    sums = (
        select(
            T.c.partner_id,
            *(func.sum(T.c[name]).label(name) for name in _SUMMED),
            func.max(T.c.latency_max_ms).label("latency_max_ms"),
        )
        .where(T.c.minute >= since, T.c.partner_id.in_(ids))
        .group_by(T.c.partner_id)
    )
    by_partner = {int(r.partner_id): r for r in (await conn.execute(sums)).mappings()}
    pending = await _count_by_partner(conn, ids, outbox.c.status == PENDING)
    failed = await _count_by_partner(
        conn, ids, outbox.c.status.in_((FAILED, EXPIRED)), outbox.c.finished_at >= now - HOUR
    )
    report = []
    for row in known:
        pid = int(row.id)
        found = by_partner.get(pid)
        calls = int(found["calls"] or 0) if found else 0
        outcomes = {name: int(found[f"outcome_{name}"] or 0) if found else 0 for name in SEARCH_OUTCOMES}
        buckets = [int(found[name] or 0) if found else 0 for name in LATENCY_COLUMNS]
        report.append(
            PartnerHealth(
                partner_id=pid,
                name=row.name,
                status=row.status,
                search_calls=calls,
                errors=calls - outcomes["ok"],
                errors_by_outcome={k: v for k, v in outcomes.items() if k != "ok" and v},
                p95_latency_ms=p95_ms(buckets, int(found["latency_max_ms"] or 0) if found else 0),
                deliveries_pending=pending.get(pid, 0),
                deliveries_failed=failed.get(pid, 0),
            )
        )
    return report


async def _count_by_partner(conn: AsyncConnection, ids: list[int], *conditions: Any) -> dict[int, int]:
    query = (
        select(outbox.c.partner_id, func.count().label("n"))
        .where(outbox.c.partner_id.in_(ids), PARTNER_CALLS, *conditions)
        .group_by(outbox.c.partner_id)
    )
    return {int(r.partner_id): int(r.n) for r in await conn.execute(query)}
