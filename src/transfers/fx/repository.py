"""Exchange-rate persistence (``fx_rates``, ``fx_fetches``). Repositories write; the caller's scope commits."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import fx_fetches, fx_rates
from transfers.fx.rates import Rate, Source, rate_text

_FETCH_ROW = 1


async def newest_rates(conn: AsyncConnection, today: date) -> list[Rate]:
    """Each currency's stored rates of its newest date not after ``today`` (every source of that date:
    ``rates.in_use`` picks among them). One grouped scan of the unique index, however long the history."""
    r = fx_rates.c
    newest = (
        select(r.currency, func.max(r.as_of).label("as_of")).where(r.as_of <= today).group_by(r.currency).subquery()
    )
    rows = await conn.execute(
        select(r.currency, r.rate, r.source, r.as_of).join(
            newest, and_(newest.c.currency == r.currency, newest.c.as_of == r.as_of)
        )
    )
    return [Rate(str(c), Decimal(str(v)), Source(str(s)), _day(d)) for c, v, s, d in rows]


async def replace_ecb_days(
    conn: AsyncConnection, days: Mapping[date, Mapping[str, Decimal]], *, now: datetime, actor: str
) -> int:
    """The ECB rates of the dates from the first to the last of ``days`` replaced by ``days``' (an
    import is the file's word on the dates it covers). Returns the rows written."""
    first, last = min(days), max(days)
    await conn.execute(
        delete(fx_rates).where(
            fx_rates.c.source == Source.ECB.value, fx_rates.c.as_of >= first, fx_rates.c.as_of <= last
        )
    )
    rows = [
        {
            "currency": code,
            "source": Source.ECB.value,
            "as_of": day,
            "rate": rate_text(rate),
            "created_at": now,
            "actor": actor,
        }
        for day, rates in sorted(days.items())
        for code, rate in sorted(rates.items())
    ]
    for start in range(0, len(rows), 5000):  # a history file is ~200 000 rates
        await conn.execute(insert(fx_rates), rows[start : start + 5000])
    return len(rows)


async def put_manual(conn: AsyncConnection, rate: Rate, *, now: datetime, actor: str) -> None:
    """The manual rate of ``rate.currency`` on ``rate.as_of``, replacing one set for that date before."""
    await conn.execute(
        delete(fx_rates).where(
            fx_rates.c.currency == rate.currency,
            fx_rates.c.source == Source.MANUAL.value,
            fx_rates.c.as_of == rate.as_of,
        )
    )
    await conn.execute(
        insert(fx_rates).values(
            currency=rate.currency,
            source=Source.MANUAL.value,
            as_of=rate.as_of,
            rate=rate_text(rate.rate),
            created_at=now,
            actor=actor,
        )
    )


@dataclass(frozen=True, slots=True)
class FetchState:
    """The scheduled fetch's one row (``fx_fetches``)."""

    attempted_at: datetime | None
    succeeded_at: datetime | None
    last_error: str | None


async def fetch_state(conn: AsyncConnection) -> FetchState:
    row = (await conn.execute(select(fx_fetches).where(fx_fetches.c.id == _FETCH_ROW))).first()
    if row is None:
        return FetchState(None, None, None)
    return FetchState(row.attempted_at, row.succeeded_at, row.last_error)


async def claim_fetch(conn: AsyncConnection, *, now: datetime, published: datetime, retry_before: datetime) -> bool:
    """Whether this caller fetches now: no success since ``published`` (today's file's hour) and no
    try since ``retry_before``. A conditional UPDATE, so of several workers exactly one claims it."""
    c = fx_fetches.c
    claimed = await conn.execute(
        update(fx_fetches)
        .where(
            c.id == _FETCH_ROW,
            or_(c.succeeded_at.is_(None), c.succeeded_at < published),
            or_(c.attempted_at.is_(None), c.attempted_at < retry_before),
        )
        .values(attempted_at=now)
    )
    return bool(claimed.rowcount)


async def record_fetch(conn: AsyncConnection, *, now: datetime, error: str | None) -> None:
    """A fetch's outcome: success stamps ``succeeded_at`` and clears the error; a failure keeps the error."""
    values: dict[str, object] = {"attempted_at": now, "last_error": error}
    if error is None:
        values["succeeded_at"] = now
    await conn.execute(update(fx_fetches).where(fx_fetches.c.id == _FETCH_ROW).values(**values))


def _day(value: object) -> date:
    """SQLite hands a Date column back as a date already; a text from a raw path is parsed."""
    return value if isinstance(value, date) else date.fromisoformat(str(value))
