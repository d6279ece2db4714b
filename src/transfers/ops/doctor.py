"""The checks of ``transfers doctor``: can this deployment run, as configured, right now?

Each check is one row (PASS, WARN, FAIL or SKIP) with a detail line; the command exits 0 only when
none failed. Checks that need something that failed (the database, the settings) are skipped, not
failed again.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.clock import SystemClock
from transfers.config import Settings, get_settings, unknown_variables
from transfers.db.engine import Database
from transfers.flights.providers import ProviderError, build_provider
from transfers.fx import service as fx_service
from transfers.hosted import repository as hosted_repo
from transfers.ops.database import is_sqlite, read_schema, schema_problem, shown_target
from transfers.ops.errors import BackendUnavailable
from transfers.ops.exposure import exposure_rows
from transfers.ops.masking import mask_url
from transfers.ops.messaging_probe import sms_row, smtp_row
from transfers.ops.partner_probe import probe_partner
from transfers.ops.redis_probe import ping_redis
from transfers.ops.settings_errors import describe_validation_error
from transfers.partners.client import PartnerClient, PartnerEndpoint
from transfers.partners.models import PartnerRecord
from transfers.partners.repository import enabled_with_secrets
from transfers.partners.secrets_box import SANDBOX_KEY_FILE, SecretBox
from transfers.partners.service import endpoint
from transfers.ratecards import card as rate_cards
from transfers.ratecards import repository as cards_repo
from transfers.reference.repository import vehicle_type_names

Verdict = Literal["PASS", "WARN", "FAIL", "SKIP"]
# Each process opens up to this many connections per TRANSFERS_DATABASE_POOL_SIZE (docs/operations/scaling.md).
CONNECTIONS_PER_POOL_SIZE = 3.5
CLOCK_TOLERANCE_SECONDS = 2.0


@dataclass(frozen=True)
class Row:
    check: str
    result: Verdict
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "result": self.result, "detail": self.detail}


@dataclass
class Report:
    rows: list[Row]

    @property
    def passed(self) -> bool:
        return all(row.result != "FAIL" for row in self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "checks": [row.as_dict() for row in self.rows]}


async def run_doctor(*, processes: int = 1) -> Report:
    rows: list[Row] = []
    try:
        cfg = get_settings()
    except ValidationError as exc:
        rows.append(Row("settings", "FAIL", "; ".join(describe_validation_error(exc))))
        skipped = ("database", "redis", "flight provider", "fx rates", "secret key", "partners", "smtp", "sms provider")
        rows += [Row(name, "SKIP", "settings invalid") for name in skipped]
        return Report(rows)
    problems = cfg.deployment_problems()
    rows.append(
        Row("settings", "FAIL", "; ".join(problems))
        if problems
        else Row("settings", "PASS", f"environment {cfg.environment}")
    )
    # One row per unknown variable, each with its own "did you mean": joined into one cell, a long
    # list was cut at the table's width and the suggestions lost.
    unknown = unknown_variables()
    rows += [Row("variables", "WARN", line) for line in unknown] or [
        Row("variables", "PASS", "every TRANSFERS_* variable is a setting of this release")
    ]
    database = await _database_rows(cfg, processes)
    rows += database
    rows.append(await _redis_row(cfg))
    rows.append(await flight_provider_row(cfg))
    database_ok = all(r.result != "FAIL" for r in database[:2])
    rows.append(await fx_row(cfg) if database_ok else Row("fx rates", "SKIP", "database unusable"))
    rows += await _secret_and_partner_rows(cfg, database_ok=database_ok)
    rows += [Row(check, verdict, detail) for check, verdict, detail in exposure_rows(cfg)]  # type: ignore[arg-type]
    # docs/rules/messages.md#sending: e-mail over SMTP, text messages through the SMS provider
    rows += [Row(check, verdict, detail) for check, verdict, detail in (await smtp_row(cfg), await sms_row(cfg))]  # type: ignore[arg-type]
    return Report(rows)


async def fx_row(cfg: Settings) -> Row:
    """docs/rules/fx.md#doctor: how old the rates in use are, and whether the ECB file can be fetched.
    WARN (never FAIL: the service answers, leaving out the offers a stale rate would price) when a rate
    is stale, when there are none, when the ECB file is not fetched or its last fetch failed."""
    db = Database(cfg.resolved_database_url, pool_size=1, application_name="transfers-doctor")
    try:
        found = await fx_service.freshness(db, SystemClock(), cfg)
    finally:
        await db.dispose()
    notes: list[str] = []
    verdict: Verdict = "PASS"
    if not found.rates:
        verdict, head = "WARN", f"{found.provider}: no rates: every offer needing a conversion is left out"
    else:
        newest = max(r.as_of for r in found.rates.values())
        head = (
            f"{found.provider}: {len(found.rates)} rates, newest {newest.isoformat()}, "
            f"oldest {found.oldest_days} day(s) old (max {cfg.fx_max_age_days})"
        )
    if found.stale:
        verdict = "WARN"
        notes.append(f"stale, so unused: {', '.join(found.stale[:10])}")
    if found.provider == "ecb" and not cfg.fx_ecb_url:
        verdict = "WARN"
        notes.append("TRANSFERS_FX_ECB_URL is not set: nothing is fetched")
    if found.fetch.last_error:
        verdict = "WARN"
        notes.append(f"last fetch failed: {found.fetch.last_error[:200]}")
    elif found.fetch.succeeded_at is not None:
        notes.append(f"last fetched {found.fetch.succeeded_at.isoformat(timespec='seconds')}")
    return Row("fx rates", verdict, "; ".join([head, *notes]))


async def _database_rows(cfg: Settings, processes: int) -> list[Row]:
    url = cfg.resolved_database_url
    target = shown_target(url)
    try:
        schema = await read_schema(url)
    except BackendUnavailable as exc:
        return [Row("database", "FAIL", str(exc)), Row("migrations", "SKIP", "database unreachable")]
    rows = [Row("database", "PASS", f"{target} reachable")]
    problem = schema_problem(schema, url, migrates=False)
    rows.append(
        Row("migrations", "FAIL", str(problem))
        if problem is not None
        else Row("migrations", "PASS", f"at {', '.join(schema.current)} (this release's head)")
    )
    if is_sqlite(url):
        note = "SQLite: not applicable (one file on this machine, read with this machine's clock)"
        return rows + [Row(name, "SKIP", note) for name in ("database time zone", "max_connections", "clock")]
    try:
        facts = await _postgres_facts(url)
    except Exception as exc:  # it answered a moment ago; report, do not crash the report
        return [*rows, Row("database settings", "FAIL", f"{target}: {type(exc).__name__}: {exc}")]
    return [*rows, _time_zone_row(facts), _connections_row(cfg, facts, processes), _clock_row(facts)]


async def _postgres_facts(url: str) -> dict[str, Any]:
    import asyncpg
    from sqlalchemy.engine import make_url

    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    conn = await asyncpg.connect(dsn, timeout=5)
    try:
        facts: dict[str, Any] = {
            "time_zone": await conn.fetchval("SHOW TimeZone"),
            "max_connections": int(await conn.fetchval("SHOW max_connections")),
            "reserved": int(await conn.fetchval("SHOW superuser_reserved_connections")),
            "in_use": int(
                await conn.fetchval("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            ),
        }
        before = time.time()
        server_now: datetime = await conn.fetchval("SELECT clock_timestamp()")
        after = time.time()
        facts["skew"] = server_now.timestamp() - (before + after) / 2
        facts["round_trip"] = after - before
        return facts
    finally:
        await conn.close(timeout=5)


def _time_zone_row(facts: dict[str, Any]) -> Row:
    zone = str(facts["time_zone"])
    if zone.upper() in ("UTC", "ETC/UTC", "GMT", "ZULU"):
        return Row("database time zone", "PASS", zone)
    return Row(
        "database time zone",
        "WARN",
        f"{zone}: times are stored with their offset and the service shows them in UTC, but psql and "
        "reports in SQL show this zone; UTC avoids confusion (ALTER DATABASE ... SET TimeZone = 'UTC')",
    )


def _connections_row(cfg: Settings, facts: dict[str, Any], processes: int) -> Row:
    per_process = math.ceil(CONNECTIONS_PER_POOL_SIZE * cfg.database_pool_size)
    need = per_process * processes
    usable = facts["max_connections"] - facts["reserved"]
    detail = (
        f"max_connections {facts['max_connections']} ({usable} for applications, {facts['in_use']} in use "
        f"now); {processes} process(es) x {per_process} (3.5 x TRANSFERS_DATABASE_POOL_SIZE "
        f"{cfg.database_pool_size}) = {need}"
    )
    if need > usable:
        return Row("max_connections", "FAIL", detail + ": raise max_connections or lower the pool size")
    return Row("max_connections", "PASS", detail)


def _clock_row(facts: dict[str, Any]) -> Row:
    skew = float(facts["skew"])
    detail = f"this machine is {abs(skew):.3f} s {'behind' if skew > 0 else 'ahead of'} the database's clock"
    if abs(skew) > CLOCK_TOLERANCE_SECONDS + float(facts["round_trip"]):
        return Row(
            "clock",
            "FAIL",
            detail + f" (over {CLOCK_TOLERANCE_SECONDS:g} s: leases, deadlines and "
            "signature timestamps depend on it; run NTP on both)",
        )
    return Row("clock", "PASS", detail)


async def flight_provider_row(cfg: Settings) -> Row:
    """docs/rules/flights.md#provider: the configured flight provider answers (aerodatabox: one real call)."""
    kind = cfg.resolved_flight_provider
    if kind == "aerodatabox" and not (cfg.flight_provider_url and cfg.flight_provider_key):
        return Row(
            "flight provider",
            "FAIL",
            "aerodatabox needs TRANSFERS_FLIGHT_PROVIDER_URL and TRANSFERS_FLIGHT_PROVIDER_KEY",
        )
    provider = build_provider(cfg, SystemClock())
    try:
        detail = await provider.probe()
    except ProviderError as exc:
        return Row("flight provider", "FAIL", f"{kind}: {exc}")
    finally:
        await provider.aclose()
    return Row("flight provider", "WARN" if kind == "none" else "PASS", detail)


async def _redis_row(cfg: Settings) -> Row:
    if not cfg.redis_url:
        return Row("redis", "SKIP", "not configured (each API process keeps its own rate-limit buckets)")
    try:
        await ping_redis(cfg.redis_url, max(cfg.rate_limit_redis_timeout_seconds, 1.0))
    except BackendUnavailable as exc:
        return Row("redis", "FAIL", str(exc))
    return Row("redis", "PASS", f"{mask_url(cfg.redis_url)} answers")


def _secret_key(cfg: Settings) -> tuple[str | None, str]:
    if cfg.secret_key:
        return cfg.secret_key, "TRANSFERS_SECRET_KEY set"
    if not cfg.is_sandbox:
        return None, "TRANSFERS_SECRET_KEY is required when TRANSFERS_ENVIRONMENT=live"
    if SANDBOX_KEY_FILE.exists():
        return SANDBOX_KEY_FILE.read_text().strip(), f"sandbox key from {SANDBOX_KEY_FILE}"
    return None, f"no key yet: `transfers serve` generates {SANDBOX_KEY_FILE} (sandbox)"


async def _secret_and_partner_rows(cfg: Settings, *, database_ok: bool) -> list[Row]:
    key, how = _secret_key(cfg)
    if not database_ok:
        return [
            Row("secret key", "FAIL" if key is None and not cfg.is_sandbox else "SKIP", how),
            Row("partners", "SKIP", "database unusable"),
        ]
    db = Database(cfg.resolved_database_url, pool_size=1, application_name="transfers-doctor")
    try:
        async with db.read() as conn:
            everyone = await enabled_with_secrets(conn)
            # Hosted partners have no server to probe (their base URL is empty): they are judged by
            # what they answer from, their rate card, and by who can accept their bookings.
            hosted_rows = [await _hosted_row(conn, s.record) for s in everyone if s.record.hosted]
    finally:
        await db.dispose()
    stored = [s for s in everyone if not s.record.hosted]
    if key is None:
        verdict: Verdict = "FAIL" if not cfg.is_sandbox or stored else "PASS"
        return [
            Row("secret key", verdict, how),
            *hosted_rows,
            Row("partners", "SKIP", "no secret key to open their secrets"),
        ]
    box = SecretBox(key)
    opened: list[tuple[PartnerRecord, PartnerEndpoint]] = []
    sealed_elsewhere: list[str] = []
    for sealed in stored:
        record = sealed.record
        try:
            opened.append((record, endpoint(sealed, box)))
        except Exception:  # cryptography's InvalidToken: sealed under another key
            sealed_elsewhere.append(f"{record.partner_id} {record.name}")
    rows = [
        Row(
            "secret key",
            "FAIL",
            f"{how}, but it does not open the stored secrets of partner(s) "
            f"{', '.join(sealed_elsewhere)}: they were sealed with another key",
        )
        if sealed_elsewhere
        else Row("secret key", "PASS", f"{how}; opens the secrets of {len(opened)} enabled partner(s)")
    ]
    return rows + hosted_rows + await _partner_rows(cfg, opened, hosted=len(hosted_rows))


async def _hosted_row(conn: AsyncConnection, record: PartnerRecord) -> Row:
    """A hosted partner passes with a stored rate card that validates now (vehicle types may have
    changed since it was saved) and at least one active portal user to accept its bookings."""
    name = f"partner {record.partner_id} {record.name}"
    problems: list[str] = []
    card = await cards_repo.get_card(conn, record.partner_id)
    if card is None:
        problems.append("no rate card: searches find none of its vehicles (transfers partners rate-card set)")
    else:
        errors = rate_cards.validate(card, vehicle_types=frozenset(await vehicle_type_names(conn)))
        if errors:
            first = errors[0]
            problems.append(f"rate card invalid ({len(errors)} problem(s)); first: {first.path}: {first.reason}")
    users = [u for u in await hosted_repo.users_of_partner(conn, record.partner_id) if u.status == "active"]
    if not users:
        problems.append("no active portal user to accept its bookings (transfers partners users create)")
    if problems:
        return Row(name, "FAIL", "hosted: " + "; ".join(problems))
    vehicles = len(card.get("vehicles", [])) if card else 0
    return Row(name, "PASS", f"hosted: rate card valid ({vehicles} vehicle(s)), {len(users)} active user(s)")


async def _partner_rows(
    cfg: Settings, partners: list[tuple[PartnerRecord, PartnerEndpoint]], *, hosted: int = 0
) -> list[Row]:
    if not partners:
        return [] if hosted else [Row("partners", "WARN", "no enabled partner: searches find no vehicles")]
    client = PartnerClient(
        max_response_bytes=cfg.partner_max_response_bytes,
        allow_private=cfg.private_partner_urls_allowed,
        trusted_url=cfg.sandbox_partner_url,
    )
    try:
        verdicts = await asyncio.gather(
            *(probe_partner(record, point, client, cfg.partner_timeout_seconds) for record, point in partners)
        )
    finally:
        await client.aclose()
    return [Row(f"partner {v.partner}", "PASS" if v.passed else "FAIL", v.detail) for v in verdicts]


def checked_at() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
