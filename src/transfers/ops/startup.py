"""Before a command uses the database (or Redis): make sure it can, or stop with one line (exit 69).

``serve`` and ``worker`` may be started by an orchestrator at the same moment as PostgreSQL: they
wait up to ``--wait-for-db`` seconds for a server that is down, starting up or full, logging each
attempt. A refused login, a missing database or a schema newer than the code is not waited for:
waiting would not change it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import structlog

from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.ops.database import Schema, read_schema, schema_problem, shown_target, unusable_as_unavailable
from transfers.ops.errors import BackendUnavailable
from transfers.ops.masking import mask_url
from transfers.ops.redis_probe import ping_redis

log = structlog.get_logger("transfers.startup")
T = TypeVar("T")
RETRY_SECONDS = 1.0


async def prepare_database(
    cfg: Settings,
    *,
    wait_seconds: float = 0.0,
    migrate: bool = False,
    wait_for_migrations: bool = False,
    apply: bool = True,
) -> None:
    """Return once the database is usable by this code; raise ``BackendUnavailable`` otherwise.

    ``migrate``: pending migrations are not a problem; ``apply`` them here (``serve``) unless False
    (``db upgrade`` applies its own ``--revision``). ``wait_for_migrations``: a schema behind the
    code is waited for too (a ``worker`` started beside the ``serve`` that is migrating)."""
    url = cfg.resolved_database_url

    async def usable() -> Schema:
        schema = await read_schema(url)
        found = schema_problem(schema, url, migrates=migrate)
        if found is None:
            return schema
        if not wait_for_migrations:
            found.transient = False  # a schema behind is waited for only by the worker
        raise found

    schema, attempts = await _until_available(usable, "database_unavailable", shown_target(url), wait_seconds)
    if attempts > 1:
        log.info("database_available", target=shown_target(url), attempts=attempts)
    if migrate and apply and not schema.at_head:
        await apply_migrations(url)
        # One line for the whole upgrade (Alembic's own per-revision lines are not shown).
        log.info(
            "database_migrated",
            target=shown_target(url),
            from_revision=",".join(schema.current) or None,
            to_revision=",".join(schema.heads),
        )


async def apply_migrations(url: str, revision: str = "head") -> None:
    """Alembic's upgrade, with a database failure on the way read as one line."""
    with unusable_as_unavailable(url):
        await asyncio.to_thread(upgrade, url, revision)


async def prepare_redis(cfg: Settings, *, wait_seconds: float = 0.0) -> None:
    """When Redis is configured, return once it answers a PING; ``BackendUnavailable`` after ``wait_seconds``."""
    if not cfg.redis_url:
        return
    redis_url = cfg.redis_url

    async def answers() -> None:
        await ping_redis(redis_url, max(cfg.rate_limit_redis_timeout_seconds, 1.0))

    await _until_available(answers, "redis_unavailable", mask_url(redis_url), wait_seconds)


async def _until_available(
    attempt_once: Callable[[], Awaitable[T]], event: str, target: str, wait_seconds: float
) -> tuple[T, int]:
    """``attempt_once``'s result and how many attempts it took. A transient ``BackendUnavailable`` is
    retried every ``RETRY_SECONDS`` (each one logged as ``event``) until ``wait_seconds`` have
    passed; a lasting one (a refused login, a schema newer than the code) is raised at once."""
    started = time.monotonic()
    deadline = started + max(0.0, wait_seconds)
    attempt = 0
    while True:
        attempt += 1
        try:
            return await attempt_once(), attempt
        except BackendUnavailable as exc:
            if not exc.transient or time.monotonic() >= deadline:
                raise _gave_up(exc, attempt, started)  # noqa: B904 (the driver's error is its cause)
            pause = min(RETRY_SECONDS, max(0.0, deadline - time.monotonic()))
            log.warning(event, target=target, attempt=attempt, error=str(exc), retry_in_seconds=round(pause, 2))
            await asyncio.sleep(pause)


def _gave_up(exc: BackendUnavailable, attempts: int, started: float) -> BackendUnavailable:
    if attempts == 1:
        return exc
    final = BackendUnavailable(f"{exc} (gave up after {attempts} attempts in {time.monotonic() - started:.0f} s)")
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
