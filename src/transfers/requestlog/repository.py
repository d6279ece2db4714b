"""The request log's rows (``api_requests``): the batch insert, one client's page, the retention.

A page is one client's requests of the last 7 days, newest first, by ``ix_api_requests_client_at``
(client, time, id): the keyset cursor is the last row's ``(at, id)``. The retention job deletes the
oldest rows by ``ix_api_requests_at``, a bounded batch per statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.engine import Database
from transfers.db.tables import api_requests
from transfers.requestlog.buffer import Entry

T = api_requests
RETENTION = timedelta(days=7)
"""docs/rules/agency-portal.md#request-log: the log looks back 7 days; older rows are deleted."""
PRUNE_BATCH = 5_000
_COLUMNS = ("at", "client_id", "method", "path", "status", "request_id", "idempotency_key", "duration_us")
_INSERT = insert(T)


async def insert_entries(db: Database, entries: Sequence[Entry]) -> None:
    """One batch, all or nothing. On PostgreSQL by ``COPY`` (asyncpg's binary copy: the entries are
    already tuples in the table's column order and aware datetimes), because the API process writes
    its own log and its CPU is the API's: an executemany through the engine cost ~7 % of a GET
    booking's CPU in bench/request_log.py, the copy a fraction of it. SQLite: an executemany."""
    async with db.write() as conn:
        if db.is_sqlite:
            await conn.execute(_INSERT, [dict(zip(_COLUMNS, entry, strict=True)) for entry in entries])
            return
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        await driver.copy_records_to_table(T.name, records=entries, columns=_COLUMNS)


@dataclass(frozen=True, slots=True)
class StatusFilter:
    """``2xx``..``5xx`` (a class) or one exact status (``404``); None: every request."""

    low: int
    high: int  # inclusive


def status_filter(value: str) -> StatusFilter | None:
    """What the page's status filter means; None for "every request" and for anything not a status
    class or a three-digit status (the page says which it read)."""
    text = value.strip().lower()
    if len(text) == 3 and text[0] in "12345" and text[1:] == "xx":
        low = int(text[0]) * 100
        return StatusFilter(low, low + 99)
    if len(text) == 3 and text.isascii() and text.isdigit() and 100 <= int(text) <= 599:
        return StatusFilter(int(text), int(text))
    return None


async def page(
    conn: AsyncConnection,
    client_id: int,
    *,
    since: datetime,
    status: StatusFilter | None,
    below: tuple[datetime, int] | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Up to ``limit`` of the client's requests at or after ``since``, newest first, strictly after
    (older than) ``below`` when given."""
    query = (
        select(T).where(T.c.client_id == client_id, T.c.at >= since).order_by(T.c.at.desc(), T.c.id.desc()).limit(limit)
    )
    if status is not None:
        query = query.where(T.c.status.between(status.low, status.high))
    if below is not None:
        at, row_id = below
        query = query.where(or_(T.c.at < at, and_(T.c.at == at, T.c.id < row_id)))
    return [dict(r) for r in (await conn.execute(query)).mappings()]


async def prune_before(conn: AsyncConnection, cutoff: datetime, *, limit: int = PRUNE_BATCH) -> int:
    """Delete up to ``limit`` rows older than ``cutoff`` (oldest first); answers how many."""
    doomed = select(T.c.id).where(T.c.at < cutoff).order_by(T.c.at).limit(limit)
    result = await conn.execute(delete(T).where(T.c.id.in_(doomed.scalar_subquery())))
    return int(result.rowcount or 0)
