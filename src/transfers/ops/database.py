"""Is the database usable by this code? Reachable, the login accepted, the database there, and its
schema at the migration head this code ships; and what to print when it is not.

Probed with one short-lived driver connection (asyncpg, or sqlite3 read-only), not the service's
pools: a refused or missing database must read as one line naming it, never as a pool's traceback.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from transfers.db.migrate import alembic_config
from transfers.ops.errors import BackendUnavailable
from transfers.ops.masking import mask_url, scrub, url_password

CONNECT_TIMEOUT_SECONDS = 5.0
_MAX_CHAIN = 8
# SQLSTATEs worth waiting for: the server is starting up, shutting down, or full.
_TRANSIENT_STATES = frozenset({"57P01", "57P02", "57P03", "53300"})
_NETWORK_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ETIMEDOUT,
        errno.EHOSTDOWN,
        errno.ENETDOWN,
        errno.ECONNABORTED,
    }
)


@dataclass(frozen=True)
class Schema:
    """Where the database's schema stands against this code's migrations."""

    current: tuple[str, ...]  # revisions in alembic_version; empty: never migrated
    heads: tuple[str, ...]  # what this code's migrations end at
    unknown: tuple[str, ...]  # revisions in the database this code does not have (a newer release's)

    @property
    def at_head(self) -> bool:
        return set(self.current) == set(self.heads)

    @property
    def ahead(self) -> bool:
        return bool(self.unknown)


def shown_target(url: str) -> str:
    """The database as printed: the URL as the operator wrote it (async driver names dropped), password masked."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        parsed = parsed.set(drivername="postgresql")
    elif parsed.get_backend_name() == "sqlite":
        parsed = parsed.set(drivername="sqlite")
    return mask_url(parsed.render_as_string(hide_password=False))


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def code_heads(url: str) -> tuple[tuple[str, ...], ScriptDirectory]:
    scripts = ScriptDirectory.from_config(alembic_config(url))
    return tuple(scripts.get_heads()), scripts


async def read_schema(url: str) -> Schema:
    """Connect once and read ``alembic_version``; ``BackendUnavailable`` when the database cannot be used."""
    with unusable_as_unavailable(url):
        current = await _sqlite_revisions(url) if is_sqlite(url) else await _postgres_revisions(url)
    heads, scripts = code_heads(url)
    unknown = []
    for revision in current:
        try:
            known = scripts.get_revision(revision)
        except Exception:  # alembic raises its own ResolutionError/CommandError for ids it lacks
            known = None
        if known is None:
            unknown.append(revision)
    return Schema(current=current, heads=heads, unknown=tuple(unknown))


def schema_problem(schema: Schema, url: str, *, migrates: bool) -> BackendUnavailable | None:
    """Why this code cannot run on the schema (None: it can). ``migrates``: the command applies pending
    migrations itself (``serve``, ``db upgrade``), so only a schema ahead of the code is a problem."""
    target = shown_target(url)
    if schema.ahead:
        return BackendUnavailable(
            f"database {target} is at migration {', '.join(schema.unknown)}, which this release does not know "
            f"(its newest is {', '.join(schema.heads)}): a newer release migrated it; run that release"
        )
    if migrates or schema.at_head:
        return None
    if not schema.current:
        return BackendUnavailable(
            f"database {target} has no schema yet: run `transfers db upgrade` "
            "(or start `transfers serve`, which applies migrations)"
        )
    return BackendUnavailable(
        f"database {target} is at migration {', '.join(schema.current)}, this release needs "
        f"{', '.join(schema.heads)}: run `transfers db upgrade` (or start `transfers serve`)",
        transient=True,
    )


async def _postgres_revisions(url: str) -> tuple[str, ...]:
    import asyncpg

    conn = await asyncpg.connect(_driver_dsn(url), timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        try:
            rows = await conn.fetch("SELECT version_num FROM alembic_version")
        except asyncpg.UndefinedTableError:
            return ()
        return tuple(sorted(str(r[0]) for r in rows))
    finally:
        await conn.close(timeout=CONNECT_TIMEOUT_SECONDS)


def _driver_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _sqlite_revisions(url: str) -> tuple[str, ...]:
    path = make_url(url).database or ""
    if not path or path == ":memory:":
        return ()

    def read() -> tuple[str, ...]:
        if not Path(path).exists():
            return ()  # created on first use
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=CONNECT_TIMEOUT_SECONDS)
        try:
            try:
                rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    return ()
                raise
            return tuple(sorted(str(r[0]) for r in rows))
        finally:
            conn.close()

    return await asyncio.to_thread(read)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps: SQLAlchemy's ``.orig``, ``__cause__``, ``__context__``."""
    seen: list[BaseException] = []
    queue: list[BaseException | None] = [exc]
    while queue and len(seen) < _MAX_CHAIN:
        current = queue.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        queue += [getattr(current, "orig", None), current.__cause__, current.__context__]
    return seen


_DRIVER_MODULES = ("asyncpg", "sqlalchemy", "aiosqlite", "sqlite3", "alembic")


def raised_by_database(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) came out of the database stack. Why: a plain OSError or
    TimeoutError elsewhere (a file not writable, a partner timing out) is not the database's fault,
    and SQLAlchemy lets asyncpg's ``ConnectionRefusedError`` through unwrapped."""
    for error in _chain(exc):
        tb = error.__traceback__
        while tb is not None:
            module = str(tb.tb_frame.f_globals.get("__name__", ""))
            if module.split(".", 1)[0] in _DRIVER_MODULES:
                return True
            tb = tb.tb_next
    return False


@contextmanager
def unusable_as_unavailable(url: str) -> Iterator[None]:
    """Around a step that talks to the database at ``url`` (read the schema, migrate): an error that
    means the database cannot be used leaves as one-line ``BackendUnavailable`` (the driver's error as its
    cause); any other error, a bug, leaves unchanged with its traceback."""
    try:
        yield
    except Exception as exc:
        problem = describe_database_error(exc, url)
        if problem is None:
            raise
        raise problem from exc


def describe_database_error(exc: BaseException, url: str, *, anywhere: bool = False) -> BackendUnavailable | None:
    """One line for an error that means the database cannot be used; None for any other error.

    ``anywhere``: ``exc`` was caught far from the database (the CLI's last resort), so only an error
    raised inside the database stack counts."""
    if anywhere and not raised_by_database(exc):
        return None
    target = shown_target(url)
    parsed = make_url(url)
    secrets = [url_password(url), parsed.password if isinstance(parsed.password, str) else None]
    for error in _chain(exc):
        line = _describe_one(error, target, parsed)
        if line is not None:
            text, transient = line
            return BackendUnavailable(scrub(text, secrets), transient=transient)
    return None


def _describe_one(error: BaseException, target: str, parsed: Any) -> tuple[str, bool] | None:
    state = getattr(error, "sqlstate", None)
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if isinstance(state, str):
        if state in ("28P01", "28000"):
            return f"database {target} refused the login: {message}", False
        if state == "3D000":
            return (
                f"database {target}: {message} (create it: createdb -h {parsed.host or 'localhost'} {parsed.database})",
                False,
            )
        if state in _TRANSIENT_STATES or state.startswith("08"):
            return f"database {target} unavailable: {message}", True
    if isinstance(error, sqlite3.OperationalError) and "unable to open" in message:
        return f"database {target} cannot be opened: {message}", False
    if isinstance(error, socket.gaierror):
        return f"database {target} unreachable: host {parsed.host!r} not found ({error.strerror})", True
    if isinstance(error, ConnectionRefusedError):
        return f"database {target} unreachable: connection refused (is PostgreSQL running and listening there?)", True
    if isinstance(error, TimeoutError):
        return f"database {target} unreachable: no answer within {CONNECT_TIMEOUT_SECONDS:g} s", True
    if isinstance(error, ConnectionError | socket.herror) or (
        isinstance(error, OSError) and error.errno in _NETWORK_ERRNOS
    ):
        reason = error.strerror or message
        return f"database {target} unreachable: {reason}", True
    if type(error).__name__ in ("ConnectionDoesNotExistError", "InterfaceError") and "closed" in message:
        return f"database {target} unavailable: {message}", True
    return None
