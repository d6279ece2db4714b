"""The doctor's rows about what the deployment exposes (docs/operations/security.md): who may read
``/metrics``, and whether the SQLite database's files are its owner's only. Pure reads of the settings
and the file system: nothing here changes a mode or a setting, the rows say what to do."""

from __future__ import annotations

import stat
from pathlib import Path

from sqlalchemy.engine import make_url

from transfers.config import ENV_PREFIX, Settings

SQLITE_SIDE_FILES = ("", "-wal", "-shm", "-journal")


def metrics_row(cfg: Settings) -> tuple[str, str, str]:
    """(check, verdict, detail) of ``GET /metrics``'s exposure."""
    if cfg.metrics_token:
        return "metrics", "PASS", f"GET /metrics answers only Authorization: Bearer <{ENV_PREFIX}METRICS_TOKEN>"
    if cfg.is_sandbox:
        return (
            "metrics",
            "PASS",
            f"GET /metrics is served to anyone (sandbox); set {ENV_PREFIX}METRICS_TOKEN before this port is reachable",
        )
    return (
        "metrics",
        "WARN",
        f"GET /metrics is refused (404) in live until {ENV_PREFIX}METRICS_TOKEN is set: Prometheus cannot scrape it",
    )


def database_files_row(cfg: Settings) -> tuple[str, str, str] | None:
    """(check, verdict, detail) of the SQLite database's files and folder; None on PostgreSQL (its files
    are its server's) or before the database file exists."""
    url = make_url(cfg.resolved_database_url)
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    database = Path(url.database)
    if not database.exists():
        return None
    open_to_others = [
        f"{path} ({oct(stat.S_IMODE(path.stat().st_mode))[2:]})"
        for path in (*(Path(f"{database}{suffix}") for suffix in SQLITE_SIDE_FILES), database.parent)
        if path.exists() and path.stat().st_mode & 0o077
    ]
    if not open_to_others:
        return "database files", "PASS", f"{database} and its folder are readable by their owner only"
    return (
        "database files",
        "WARN",
        f"readable by other accounts: {', '.join(open_to_others)}; run chmod 700 {database.parent} and "
        f"chmod 600 {database}*",
    )


def exposure_rows(cfg: Settings) -> list[tuple[str, str, str]]:
    """The metrics row, and the database files' row on SQLite."""
    files = database_files_row(cfg)
    return [metrics_row(cfg)] if files is None else [metrics_row(cfg), files]
