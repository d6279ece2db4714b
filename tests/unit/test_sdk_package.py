"""The SDK (``sdk/``, distribution ``transfers-sdk``, package ``transfers_sdk``) stands apart from the
server: its own status enum equal to the server's, httpx pinned as the server pins it, no import of
``transfers``. (Installing it alone into an empty virtualenv: tests/e2e/test_sdk_install.py.)"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import transfers_sdk
from tests.source_facts import file_facts
from transfers.bookings.state import BookingStatus as ServerStatus
from transfers_sdk import BookingStatus as SdkStatus

ROOT = Path(__file__).resolve().parents[2]
SDK_SOURCES = sorted((ROOT / "sdk" / "src" / "transfers_sdk").glob("*.py"))


def test_the_sdk_status_enum_equals_the_servers() -> None:
    assert [(s.name, s.value) for s in SdkStatus] == [(s.name, s.value) for s in ServerStatus]


def test_httpx_is_the_only_dependency_and_pinned_like_the_server() -> None:
    sdk = tomllib.loads((ROOT / "sdk" / "pyproject.toml").read_text())["project"]
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert sdk["name"] == "transfers-sdk"
    assert sdk["dependencies"] == [d for d in server["dependencies"] if d.startswith("httpx==")]


@pytest.mark.process  # starts a fresh interpreter to see what importing the SDK loads
def test_the_sdk_imports_nothing_of_the_server() -> None:
    assert SDK_SOURCES
    for source, facts in zip(SDK_SOURCES, file_facts(SDK_SOURCES), strict=True):
        for imp in facts.imports:
            assert imp.top != "transfers", (source, imp)
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, transfers_sdk; print(sorted({m.split('.')[0] for m in sys.modules}))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT / "sdk",
    ).stdout
    for server_part in ("'transfers'", "'fastapi'", "'sqlalchemy'", "'pydantic'", "'asyncpg'"):
        assert server_part not in loaded


def test_the_server_no_longer_ships_the_sdk() -> None:
    assert not (ROOT / "src" / "transfers" / "sdk").exists()
    assert transfers_sdk.__file__ is not None and "sdk/src/transfers_sdk" in transfers_sdk.__file__
