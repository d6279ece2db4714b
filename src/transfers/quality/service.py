"""Computing the scorecards (docs/rules/quality.md#computing).

A run reads every count in one consistent read, computes every scorecard (each partner as a whole
and per airport), then writes them in ONE transaction: a run killed at any point leaves the previous
scores as they were. The same database and ``as_of`` always give the same scorecards.
"""

from __future__ import annotations

import time as monotonic_time
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Any

from transfers.db.engine import Database
from transfers.db.tables.quality import ALL_AIRPORTS
from transfers.errors import ErrorCode, NotFound
from transfers.quality import repository as repo
from transfers.quality.rules import Counts, Tier, scorecard, window
from transfers.search.ranking import PartnerQuality, Qualities

DAILY_AT = time(3, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Result:
    """One run: each partner's scorecard as a whole, and per airport (partner -> airport -> card)."""

    as_of: datetime
    cards: list[dict[str, Any]]
    airports: dict[int, dict[str, dict[str, Any]]]

    def rows(self) -> list[dict[str, Any]]:
        out = [{"partner_id": c["partner_id"], "airport_iata": ALL_AIRPORTS, "card": c} for c in self.cards]
        for partner_id, by_airport in self.airports.items():
            out += [{"partner_id": partner_id, "airport_iata": a, "card": c} for a, c in sorted(by_airport.items())]
        return out


async def compute(db: Database, as_of: datetime, partner_id: int | None = None) -> Result:
    """Every partner's scorecard at ``as_of`` (or one partner's), nothing written."""
    start, end = window(as_of)
    async with db.read_consistent() as conn:
        ids = await repo.partner_ids(conn, partner_id)
        counted = await repo.counts(conn, start, end, partner_id)
    whole: dict[int, Counts] = {pid: Counts() for pid in ids}
    airports: dict[int, dict[str, dict[str, Any]]] = {pid: {} for pid in ids}
    for (pid, airport), c in sorted(counted.items()):
        if pid not in whole:
            continue
        whole[pid] = whole[pid] + c
        airports[pid][airport] = scorecard(pid, as_of, c)
    return Result(as_of, [scorecard(pid, as_of, whole[pid]) for pid in ids], airports)


async def compute_and_store(db: Database, as_of: datetime, *, now: datetime, partner_id: int | None = None) -> Result:
    """``compute``, then the day's history replaced in one transaction."""
    result = await compute(db, as_of, partner_id)
    async with db.write() as conn:
        await repo.replace_day(conn, as_of.date().isoformat(), as_of, result.rows(), now=now, partner_id=partner_id)
    return result


def daily_as_of(now: datetime) -> datetime | None:
    """The scheduled run's instant for ``now``'s day: 03:00 UTC, once that time has come."""
    at = datetime.combine(now.astimezone(UTC).date(), DAILY_AT)
    return at if now >= at else None


async def run_daily(db: Database, now: datetime) -> int:
    """The scheduled job: today's scorecards at 03:00 UTC, once a day (0 when already done or too
    early); the count of partners scored."""
    as_of = daily_as_of(now)
    if as_of is None:
        return 0
    async with db.read() as conn:
        if await repo.computed_on(conn, as_of.date().isoformat(), as_of):
            return 0
    return len((await compute_and_store(db, as_of, now=now)).cards)


CACHE_SECONDS = 60.0  # scores change once a day; another process's new scores are seen within a minute
_CACHE: dict[int, tuple[float, Qualities]] = {}


async def current_qualities(db: Database) -> Qualities:
    """Each partner's latest score as search ranks by it (``search/ranking.py``), read at most once a
    minute per database: a search pays a dictionary lookup, not a query."""
    cached = _CACHE.get(id(db))
    clock = monotonic_time.monotonic()
    if cached is not None and cached[0] > clock:
        return cached[1]
    async with db.read() as conn:
        stored = await repo.latest(conn)
    qualities = {
        pid: PartnerQuality(
            int(s.card["score"]), s.card["tier"] == Tier.PREFERRED.value, s.card["tier"] == Tier.AT_RISK.value
        )
        for pid, s in stored.items()
    }
    _CACHE[id(db)] = (clock + CACHE_SECONDS, qualities)
    return qualities


def forget_cached() -> None:
    """The next search reads the scores again (after this process wrote new ones)."""
    _CACHE.clear()


async def latest_card(db: Database, partner_id: int) -> dict[str, Any]:
    """The partner's latest scorecard as a whole, as stored (the reverse API's answer); NotFound
    (``NOT_FOUND``) before its first computation."""
    async with db.read() as conn:
        stored = (await repo.latest(conn, partner_id)).get(partner_id)
    if stored is None:
        raise NotFound(
            ErrorCode.NOT_FOUND,
            "No scorecard has been computed for you yet; the service computes them daily at 03:00 UTC.",
        )
    return stored.card
