"""Apply Alembic migrations programmatically (``transfers db upgrade`` and ``serve`` at start)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url)
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    """Upgrade to ``revision``. Safe to call from inside a running event loop (runs in a thread)."""
    cfg = alembic_config(database_url)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        command.upgrade(cfg, revision)
        return
    errors: list[BaseException] = []

    def _target() -> None:
        try:
            command.upgrade(cfg, revision)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=_target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
