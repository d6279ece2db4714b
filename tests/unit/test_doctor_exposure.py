"""The doctor's exposure rows (docs/operations/security.md): who may read ``/metrics`` in each environment,
and whether a SQLite database's files (made before they were created private, or by hand) are open to
other accounts, with the chmod that closes them."""

from __future__ import annotations

from pathlib import Path

from transfers.config import Settings
from transfers.ops.exposure import database_files_row, metrics_row


def test_metrics_row_by_environment_and_token() -> None:
    assert metrics_row(Settings(environment="live", secret_key="k", metrics_token="t"))[1] == "PASS"
    assert metrics_row(Settings(environment="sandbox"))[1] == "PASS"
    check, verdict, detail = metrics_row(Settings(environment="live", secret_key="k"))
    assert (check, verdict) == ("metrics", "WARN") and "TRANSFERS_METRICS_TOKEN" in detail and "404" in detail


def test_database_files_row(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    folder.mkdir(mode=0o700)
    folder.chmod(0o700)
    database = folder / "transfers.sqlite3"
    settings = Settings(database_url=f"sqlite:///{database}")
    assert database_files_row(settings) is None  # nothing made yet
    database.write_bytes(b"")
    database.chmod(0o600)
    assert database_files_row(settings) == (
        "database files",
        "PASS",
        f"{database} and its folder are readable by their owner only",
    )
    wal = folder / "transfers.sqlite3-wal"
    wal.write_bytes(b"")
    wal.chmod(0o644)
    folder.chmod(0o755)
    _, verdict, detail = database_files_row(settings) or ("", "", "")
    assert verdict == "WARN" and f"{wal} (644)" in detail and f"{folder} (755)" in detail
    assert f"chmod 600 {database}*" in detail
    assert database_files_row(Settings(database_url="postgresql://u@h/db")) is None
