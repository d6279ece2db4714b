"""Apply Alembic migrations programmatically (``transfers db upgrade`` and ``serve`` at start)."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(database_url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url)
    return cfg


@contextmanager
def _alembic_quiet() -> Iterator[None]:
    """Alembic's own INFO lines (its context, then one line per revision with the revision's whole
    docstring) are not shown: on a fresh database that was some 60 lines of migration history before
    the server's first line. The caller logs one line for the whole upgrade; warnings still show."""
    logger = logging.getLogger("alembic")
    before = logger.level
    logger.setLevel(max(logging.WARNING, before))
    try:
        yield
    finally:
        logger.setLevel(before)


def _upgrade(cfg: Config, revision: str) -> None:
    with _alembic_quiet():
        command.upgrade(cfg, revision)


def upgrade(database_url: str, revision: str = "head") -> None:
    """Upgrade to ``revision``. Safe to call from inside a running event loop (runs in a thread)."""
    cfg = alembic_config(database_url)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _upgrade(cfg, revision)
        return
    errors: list[BaseException] = []

    def _target() -> None:
        try:
            _upgrade(cfg, revision)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=_target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
