"""Files the service creates are its owner's only (docs/operations/security.md#files): a new SQLite
database, its WAL and shared-memory files 0600 and a new ``var/`` 0700, the sandbox's secret key 0600,
whatever the umask (a permissive one of 000 here). PostgreSQL's files are its server's: nothing to set."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.private_files import create_private_file, make_private_folder
from transfers.partners import secrets_box


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask: every mode below is the service's own doing."""
    before = os.umask(0)
    try:
        yield
    finally:
        os.umask(before)


@pytest.mark.usefixtures("open_umask")
async def test_a_new_sqlite_database_and_its_folder_are_private(tmp_path: Path) -> None:
    path = tmp_path / "var" / "transfers.sqlite3"
    db = Database(f"sqlite+aiosqlite:///{path}", pool_size=1)
    try:
        async with db.write() as conn:
            await conn.execute(text("CREATE TABLE t (a INTEGER)"))
            await conn.execute(text("INSERT INTO t VALUES (1)"))
        async with db.read() as conn:
            assert (await conn.execute(text("SELECT a FROM t"))).scalar_one() == 1
            made = sorted(p.name for p in path.parent.iterdir())
            assert made == ["transfers.sqlite3", "transfers.sqlite3-shm", "transfers.sqlite3-wal"]
            assert {name: oct(mode(path.parent / name)) for name in made} == dict.fromkeys(made, "0o600")
    finally:
        await db.dispose()
    assert mode(path.parent) == 0o700


@pytest.mark.usefixtures("open_umask")
def test_the_sandbox_secret_key_and_var_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    key = secrets_box.resolve_secret_key(Settings(environment="sandbox", secret_key=""))
    assert (tmp_path / "var" / "secret.key").read_text() == key
    assert mode(tmp_path / "var") == 0o700 and mode(tmp_path / "var" / "secret.key") == 0o600
    assert secrets_box.resolve_secret_key(Settings(environment="sandbox", secret_key="")) == key  # read again


@pytest.mark.usefixtures("open_umask")
def test_existing_files_and_folders_keep_their_modes(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    made = shared / "a" / "b"
    make_private_folder(made)
    assert mode(shared) == 0o755 and mode(shared / "a") == 0o700 and mode(made) == 0o700
    existing = shared / "given.sqlite3"
    existing.write_bytes(b"")
    existing.chmod(0o640)
    assert create_private_file(existing) is False and mode(existing) == 0o640
