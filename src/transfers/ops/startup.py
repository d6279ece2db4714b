"""Before a command uses the database (or Redis): make sure it can, or stop with one line (exit 69).

``serve`` and ``worker`` may be started by an orchestrator at the same moment as PostgreSQL: they
wait up to ``--wait-for-db`` seconds for a server that is down, starting up or full, logging each
attempt. A refused login, a missing database or a schema newer than the code is not waited for:
waiting would not change it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import structlog

from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.ops.database import describe_database_error, read_schema, schema_problem, shown_target
from transfers.ops.errors import Unavailable
from transfers.ops.masking import mask_url
from transfers.ops.redis_probe import ping_redis

log = structlog.get_logger("transfers.startup")
RETRY_SECONDS = 1.0


async def prepare_database(cfg: Settings, *, wait_seconds: float = 0.0, migrate: bool = False,
                           wait_for_migrations: bool = False, apply: bool = True) -> None:
    """Return once the database is usable by this code; raise ``Unavailable`` otherwise.

    ``migrate``: pending migrations are not a problem; ``apply`` them here (``serve``) unless False
    (``db upgrade`` applies its own ``--revision``). ``wait_for_migrations``: a schema behind the
    code is waited for too (a ``worker`` started beside the ``serve`` that is migrating)."""
    url = cfg.resolved_database_url
    started = time.monotonic()
    deadline = started + max(0.0, wait_seconds)
    attempt = 0
    while True:
        attempt += 1
        try:
            schema = await read_schema(url)
            found = schema_problem(schema, url, migrates=migrate)
            if found is None:
                break
            if not wait_for_migrations:
                found.transient = False  # a schema behind is waited for only by the worker
            raise found
        except Unavailable as exc:
            if not exc.transient or time.monotonic() >= deadline:
                raise _gave_up(exc, attempt, started)  # noqa: B904 (the driver's error is its cause)
            problem = exc
        pause = min(RETRY_SECONDS, max(0.0, deadline - time.monotonic()))
        log.warning("database_unavailable", target=shown_target(url), attempt=attempt, error=str(problem),
                    retry_in_seconds=round(pause, 2))
        await asyncio.sleep(pause)
    if attempt > 1:
        log.info("database_available", target=shown_target(url), attempts=attempt)
    if migrate and apply and not schema.at_head:
        await apply_migrations(url)


async def apply_migrations(url: str, revision: str = "head") -> None:
    """Alembic's upgrade, with a database failure on the way read as one line."""
    try:
        await asyncio.to_thread(upgrade, url, revision)
    except Exception as exc:
        problem = describe_database_error(exc, url)
        if problem is None:
            raise
        raise problem from exc


async def prepare_redis(cfg: Settings, *, wait_seconds: float = 0.0) -> None:
    """When Redis is configured, return once it answers a PING; ``Unavailable`` after ``wait_seconds``."""
    if not cfg.redis_url:
        return
    started = time.monotonic()
    deadline = started + max(0.0, wait_seconds)
    attempt = 0
    while True:
        attempt += 1
        try:
            await ping_redis(cfg.redis_url, max(cfg.rate_limit_redis_timeout_seconds, 1.0))
            return
        except Unavailable as exc:
            if not exc.transient or time.monotonic() >= deadline:
                raise _gave_up(exc, attempt, started)  # noqa: B904 (the driver's error is its cause)
            pause = min(RETRY_SECONDS, max(0.0, deadline - time.monotonic()))
            log.warning("redis_unavailable", target=mask_url(cfg.redis_url), attempt=attempt, error=str(exc),
                        retry_in_seconds=round(pause, 2))
            await asyncio.sleep(pause)


def _gave_up(exc: Unavailable, attempts: int, started: float) -> Unavailable:
    if attempts == 1:
        return exc
    final = Unavailable(f"{exc} (gave up after {attempts} attempts in {time.monotonic() - started:.0f} s)")
    final.__cause__ = exc.__cause__
    return final


def run_preflight(cfg: Settings, **options: Any) -> None:
    """``prepare_database`` (then ``prepare_redis`` with what is left of the wait) from sync code."""
    wait = float(options.pop("wait_seconds", 0.0))
    redis = bool(options.pop("redis", False))

    async def both() -> None:
        started = time.monotonic()
        await prepare_database(cfg, wait_seconds=wait, **options)
        if redis:
            await prepare_redis(cfg, wait_seconds=max(0.0, wait - (time.monotonic() - started)))

    asyncio.run(both())
