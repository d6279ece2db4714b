"""Partner health (docs/rules/console.md): every search call counted per partner and UTC minute, kept in the
database so it survives restarts and every process shows the same numbers.

How it is written, and why this way: a search asks up to ten partners, and an insert per call (or an
upsert per call on the request path) would add a database write per partner to every search. So a
call is only counted in this process's memory (``HealthBuffer.record``: a dictionary lookup and a few
integer additions, ~1 µs, docs/operations/performance-history.md#partner-health), and a background task
(``run_flusher``, started by ``runtime.start``) adds what was counted to the minute rows every
``TRANSFERS_PARTNER_HEALTH_FLUSH_SECONDS`` and once more when the process stops. The rows are
*added to* (an upsert that sums), never overwritten, so any number of processes share them. What a
process killed with SIGKILL had not flushed yet (at most one interval) is lost: these are health
figures, not money. A flush that fails (database down) keeps its counts and retries next time.

What a row holds: the calls, one counter per outcome of the partner client (``ok``, ``timeout``,
``connect_error``, ``http_error``, ``invalid`` = an answer that is not JSON or breaks the wire
contract, ``too_large``, ``redirect``, ``blocked``), and the latency as a sum, a maximum and a fixed
histogram (``LATENCY_BOUNDS_MS``) from which ``p95_ms`` is read. Rows older than
``TRANSFERS_PARTNER_HEALTH_RETENTION_DAYS`` (30) are deleted by the scheduled jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog

from transfers.db.tables import LATENCY_BOUNDS_MS, SEARCH_OUTCOMES

log = structlog.get_logger("transfers.partners.health")

_OUTCOME_INDEX = {name: i for i, name in enumerate(SEARCH_OUTCOMES)}
BUCKETS = len(LATENCY_BOUNDS_MS) + 1
# A process counting for a database that stays down keeps at most this many (partner, minute) tallies;
# past it the oldest minutes are dropped (and logged) rather than growing without bound.
MAX_PENDING_TALLIES = 50_000


def minute_of(instant: datetime) -> datetime:
    return instant.replace(second=0, microsecond=0)


@dataclass
class Tally:
    """One partner's search calls in one minute, as counted so far by one process."""

    calls: int = 0
    outcomes: list[int] = field(default_factory=lambda: [0] * len(SEARCH_OUTCOMES))
    latency_sum_ms: int = 0
    latency_max_ms: int = 0
    buckets: list[int] = field(default_factory=lambda: [0] * BUCKETS)

    def add(self, outcome_index: int, duration_ms: int) -> None:
        """One call."""
        self.calls += 1
        self.outcomes[outcome_index] += 1
        self.latency_sum_ms += duration_ms
        if duration_ms > self.latency_max_ms:
            self.latency_max_ms = duration_ms
        self.buckets[bisect_left(LATENCY_BOUNDS_MS, duration_ms)] += 1

    def merge(self, other: Tally) -> None:
        self.calls += other.calls
        self.outcomes = [a + b for a, b in zip(self.outcomes, other.outcomes, strict=True)]
        self.latency_sum_ms += other.latency_sum_ms
        self.latency_max_ms = max(self.latency_max_ms, other.latency_max_ms)
        self.buckets = [a + b for a, b in zip(self.buckets, other.buckets, strict=True)]


Key = tuple[int, datetime]  # (partner_id, minute)
# What stores tallies: ``health_repository.add_tallies`` bound to a database.
FlushWriter = Callable[[dict[Key, Tally]], Awaitable[None]]


class HealthBuffer:
    """This process's counts not yet in the database. Only touched from the event loop's thread, so
    no lock: ``record`` and ``take`` never interleave mid-update."""

    def __init__(self) -> None:
        self._tallies: dict[Key, Tally] = {}
        # A search records every partner's call with the same ``now``: its minute is computed once.
        self._last: tuple[datetime, datetime] | None = None

    def record(self, partner_id: int, outcome: str, duration_ms: float, now: datetime) -> None:
        """Count one search call (``outcome``: the partner client's, or ``invalid`` for an answer the
        search refused). Unknown outcomes are a programming error and raise."""
        last = self._last
        if last is None or last[0] is not now:
            last = self._last = (now, minute_of(now))
        key = (partner_id, last[1])
        tally = self._tallies.get(key)
        if tally is None:
            tally = self._tallies[key] = Tally()
        tally.add(_OUTCOME_INDEX[outcome], max(0, round(duration_ms)))

    def take(self) -> dict[Key, Tally]:
        """Everything counted so far; the buffer starts empty again."""
        taken, self._tallies = self._tallies, {}
        return taken

    def give_back(self, tallies: dict[Key, Tally]) -> None:
        """Put counts whose flush failed back, merged with whatever was counted meanwhile."""
        for key, tally in tallies.items():
            mine = self._tallies.get(key)
            if mine is None:
                self._tallies[key] = tally
            else:
                mine.merge(tally)
        if len(self._tallies) > MAX_PENDING_TALLIES:
            keep = sorted(self._tallies, key=lambda k: k[1])[-MAX_PENDING_TALLIES:]
            dropped = len(self._tallies) - len(keep)
            self._tallies = {k: self._tallies[k] for k in keep}
            log.warning("partner_health_dropped", tallies=dropped)

    def __len__(self) -> int:
        return len(self._tallies)


def p95_ms(buckets: Sequence[int], latency_max_ms: int) -> int | None:
    """The 95th percentile at the histogram's resolution: the upper bound of the bucket holding the
    call at rank ceil(0.95 x calls), never above the slowest call seen (so one slow bucket of a
    few fast calls is not reported as that bucket's bound). None without calls."""
    total = sum(buckets)
    if total == 0:
        return None
    rank = math.ceil(0.95 * total)
    seen = 0
    for index, count in enumerate(buckets):
        seen += count
        if seen >= rank:
            bound = LATENCY_BOUNDS_MS[index] if index < len(LATENCY_BOUNDS_MS) else latency_max_ms
            return min(bound, latency_max_ms)
    return latency_max_ms  # unreachable: the loop ends at the total


@dataclass(frozen=True)
class PartnerHealth:
    """One partner over the last hour (``health_repository.last_hour``)."""

    partner_id: int
    name: str
    status: str
    search_calls: int
    errors: int
    errors_by_outcome: dict[str, int]
    p95_latency_ms: int | None
    deliveries_pending: int
    deliveries_failed: int
    """Partner deliveries that failed (refused) or expired within the hour."""

    @property
    def error_rate(self) -> float:
        return self.errors / self.search_calls if self.search_calls else 0.0


HOUR = timedelta(hours=1)


async def flush(buffer: HealthBuffer, write: FlushWriter) -> int:
    """Add the buffer's counts to the database; answers how many minute rows were written. On any
    error the counts go back into the buffer (for the next flush) and the error propagates."""
    taken = buffer.take()
    if not taken:
        return 0
    try:
        await write(taken)
    except BaseException:
        buffer.give_back(taken)
        raise
    return len(taken)


async def run_flusher(buffer: HealthBuffer, write: FlushWriter, every_seconds: float, stopping: asyncio.Event) -> None:
    """Flush every ``every_seconds`` until ``stopping`` is set, then once more. A failed flush is
    logged and retried at the next tick (its counts were kept)."""
    while not stopping.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=every_seconds)
        try:
            await flush(buffer, write)
        except Exception as exc:  # the database may be down for a while: never kill the task
            log.warning("partner_health_flush_failed", error=type(exc).__name__, pending=len(buffer))
