"""Exchange-rate use cases (docs/rules/fx.md): the rates in use, importing an ECB file, setting a
manual rate, fetching the ECB file (at once or as the scheduled job), and the table a search
converts with. Each write is one transaction with its audit row: an import is the whole file or
nothing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import structlog

from transfers.clients import repository as audit
from transfers.clock import Clock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.fx import ecb
from transfers.fx import repository as repo
from transfers.fx.fetch import FetchFailed, fetch_file
from transfers.fx.rates import Rate, RateError, RateTable, Source, check_currency, in_use, parse_rate, sandbox_table

log = structlog.get_logger("transfers.fx")

# The ECB publishes its reference rates around 16:00 CET on working days; the scheduled job fetches
# after that hour and, when a try fails, again after RETRY (docs/rules/fx.md#fetch).
ECB_ZONE = ZoneInfo("Europe/Berlin")
ECB_PUBLISHED = time(16, 0)
RETRY = timedelta(minutes=15)


def today(clock: Clock) -> date:
    """The UTC day rates are judged on."""
    return clock.now().astimezone(UTC).date()


async def rates_in_use(db: Database, settings: Settings, day: date) -> dict[str, Rate]:
    """The rate in use per accepted currency on ``day``: the stored ones, with the sandbox table when
    the provider is ``sandbox`` (``rates.in_use`` chooses)."""
    async with db.read() as conn:
        stored = await repo.newest_rates(conn, day)
    candidates = stored + (sandbox_table(day) if settings.resolved_fx_provider == "sandbox" else [])
    enabled = settings.enabled_currencies
    return {c: r for c, r in in_use(candidates, day).items() if enabled is None or c in enabled}


async def rate_table(db: Database, settings: Settings, clock: Clock) -> RateTable:
    """What a search converts with: the rates in use today and the allowed age (one read per search)."""
    day = today(clock)
    return RateTable(await rates_in_use(db, settings, day), day, settings.fx_max_age_days)


class RateTables:
    """The rate tables searches convert with, one process's: the rates in use are read at most every
    ``TRANSFERS_FX_CACHE_SECONDS`` (and again as soon as the UTC day changes, since the day decides which
    rate is in use and which is stale), so a search pays no database read for its rates; a rate set or
    imported is used by every search within that bound. Each call answers a new ``RateTable`` (its
    pairs and its ``fx_rate_unavailable`` log lines are the search's own); concurrent callers during a
    refresh share one read."""

    def __init__(self, db: Database, settings: Settings, clock: Clock) -> None:
        self._db, self._settings, self._clock = db, settings, clock
        self._rates: dict[str, Rate] = {}
        self._day: date | None = None
        self._read_at: datetime | None = None
        self._lock = asyncio.Lock()

    def _fresh(self, now: datetime) -> bool:
        return (
            self._read_at is not None
            and self._day == now.astimezone(UTC).date()
            and (now - self._read_at).total_seconds() < self._settings.fx_cache_seconds
        )

    async def current(self) -> RateTable:
        now = self._clock.now()
        day = now.astimezone(UTC).date()
        if not self._fresh(now):
            async with self._lock:
                if not self._fresh(now):
                    self._rates = await rates_in_use(self._db, self._settings, day)
                    self._day, self._read_at = day, now
        return RateTable(self._rates, day, self._settings.fx_max_age_days)


@dataclass(frozen=True, slots=True)
class Imported:
    """What an import wrote: the file's kind, its dates, the rates stored and the currencies skipped."""

    kind: str
    first: date
    last: date
    days: int
    rates: int
    skipped: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": Source.ECB.value,
            "file": self.kind,
            "from": self.first.isoformat(),
            "to": self.last.isoformat(),
            "days": self.days,
            "rates": self.rates,
            "skipped": list(self.skipped),
        }


async def import_file(db: Database, clock: Clock, settings: Settings, data: bytes, *, actor: str) -> Imported:
    """An ECB reference file (daily or history; XML, CSV or ZIP) stored in one transaction: its rates
    replace the ECB rates of the dates it covers. ``ecb.EcbFileError`` (nothing written) when the file
    is not whole. Currencies the service does not accept (no longer in ISO 4217, like CYP in the
    history, or left out of TRANSFERS_CURRENCIES) are skipped and named."""
    parsed = ecb.parse(data)
    enabled = settings.enabled_currencies
    skipped: set[str] = set()
    days: dict[date, dict[str, Any]] = {}
    for day, rates in parsed.days.items():
        kept = {}
        for code, rate in rates.items():
            try:
                kept[check_currency(code, enabled)] = rate
            except RateError:
                skipped.add(code)
        if kept:
            days[day] = kept
    if not days:
        raise ecb.EcbFileError(f"the file has no rate of a currency this service accepts (skipped: {_names(skipped)})")
    now = clock.now()
    async with db.write() as conn:
        written = await repo.replace_ecb_days(conn, days, now=now, actor=actor)
        result = Imported(parsed.kind, min(days), max(days), len(days), written, tuple(sorted(skipped)))
        await audit.record_admin_action(
            conn, actor=actor, action="fx.import", subject="fx:ecb", details=result.as_dict(), now=now
        )
    return result


async def set_rate(
    db: Database, clock: Clock, settings: Settings, currency: str, rate: str, as_of: date | None, *, actor: str
) -> Rate:
    """A manual rate (``transfers fx set``), as of today unless ``as_of`` says otherwise. ``RateError``
    for an unknown, disabled or base currency, a rate that is not a positive decimal, or a date after
    today; nothing is written then."""
    day = today(clock)
    code = check_currency(currency, settings.enabled_currencies)
    value = parse_rate(rate)
    when = as_of or day
    if when > day:
        raise RateError(f"--as-of {when} is after today ({day}): a rate is set for a day that has come")
    stored = Rate(code, value, Source.MANUAL, when)
    now = clock.now()
    async with db.write() as conn:
        await repo.put_manual(conn, stored, now=now, actor=actor)
        await audit.record_admin_action(
            conn, actor=actor, action="fx.set", subject=f"fx:{code}", details=stored.as_dict(), now=now
        )
    return stored


async def fetch(
    db: Database,
    clock: Clock,
    settings: Settings,
    *,
    actor: str,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Imported:
    """The ECB file fetched from ``TRANSFERS_FX_ECB_URL`` and imported (``transfers fx fetch`` and the
    scheduled job). ``FetchFailed`` or ``ecb.EcbFileError`` when it cannot be had or read whole: the
    failure is recorded for ``transfers doctor`` and the stored rates stay in use until stale."""
    url = settings.fx_ecb_url
    if not url:
        raise FetchFailed("TRANSFERS_FX_ECB_URL is not set: there is no ECB file to fetch")
    try:
        data = await fetch_file(url, timeout_seconds=settings.fx_fetch_timeout_seconds, transport=transport)
        result = await import_file(db, clock, settings, data, actor=actor)
    except (FetchFailed, ecb.EcbFileError) as exc:
        async with db.write() as conn:
            await repo.record_fetch(conn, now=clock.now(), error=str(exc)[:1000])
        raise
    async with db.write() as conn:
        await repo.record_fetch(conn, now=clock.now(), error=None)
    return result


def published_at(now: datetime) -> datetime:
    """Today's publication hour of the ECB file (16:00 in Frankfurt), as a UTC instant."""
    local = now.astimezone(ECB_ZONE)
    return datetime.combine(local.date(), ECB_PUBLISHED, ECB_ZONE).astimezone(UTC)


async def fetch_if_due(
    db: Database, clock: Clock, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None
) -> int:
    """The scheduled job: with the ``ecb`` provider and a URL, once a day after 16:00 CET (again after
    ``RETRY`` when a try failed), one worker fetches. Answers 1 when it imported a file, else 0; a
    failure is logged (``fx_fetch_failed``) and never stops the other jobs."""
    if settings.resolved_fx_provider != "ecb" or not settings.fx_ecb_url:
        return 0
    now = clock.now()
    published = published_at(now)
    if now < published:
        return 0
    async with db.write() as conn:
        claimed = await repo.claim_fetch(conn, now=now, published=published, retry_before=now - RETRY)
    if not claimed:
        return 0
    try:
        imported = await fetch(db, clock, settings, actor="system:jobs", transport=transport)
    except (FetchFailed, ecb.EcbFileError) as exc:
        log.warning("fx_fetch_failed", url=settings.fx_ecb_url, error=str(exc))
        return 0
    log.info("fx_rates_fetched", **imported.as_dict())
    return 1


@dataclass(frozen=True, slots=True)
class Freshness:
    """How old the rates in use are, for ``transfers doctor``."""

    provider: str
    rates: dict[str, Rate]
    stale: list[str]
    oldest_days: int | None
    fetch: repo.FetchState


async def freshness(db: Database, clock: Clock, settings: Settings) -> Freshness:
    day = today(clock)
    rates = await rates_in_use(db, settings, day)
    table = RateTable(rates, day, settings.fx_max_age_days)
    ages = table.ages()
    stale = sorted(c for c, age in ages.items() if age > settings.fx_max_age_days)
    async with db.read() as conn:
        state = await repo.fetch_state(conn)
    return Freshness(settings.resolved_fx_provider, rates, stale, max(ages.values()) if ages else None, state)


def _names(codes: set[str]) -> str:
    return ", ".join(sorted(codes)[:10]) or "none"
