"""The SDK is its own distribution: ``pip install ./sdk`` into an empty virtualenv brings
``transfers_sdk`` and ``httpx``, nothing of the server, and the SDK so installed talks to the service.

Slow (a virtualenv and an install, ~25 s): it may fetch httpx and the build backend from the
package index. CI runs it with the rest of the suite."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ClientFactory
from tests.servers import LiveServer

SDK = Path(__file__).resolve().parents[2] / "sdk"
SERVER_PARTS = ("transfers", "fastapi", "starlette", "sqlalchemy", "asyncpg", "aiosqlite", "uvicorn", "alembic")

PROBE = """
import importlib.metadata, importlib.util, json, sys
import transfers_sdk
from transfers_sdk import TransfersClient
installed = sorted(d.metadata["Name"].lower() for d in importlib.metadata.distributions())
with TransfersClient(sys.argv[1], sys.argv[2], max_retries=0) as api:
    reasons = [r.id for r in api.cancellation_reasons()]
print(json.dumps({
    "installed": installed,
    "importable": {name: importlib.util.find_spec(name) is not None for name in sys.argv[3].split(",")},
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[3].split(",")),
    "reasons": reasons,
    "version": transfers_sdk.__version__,
}))
"""


async def run(*argv: str, cwd: Path) -> str:
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=300)
    assert process.returncode == 0, (argv, err.decode()[-2000:])
    return out.decode()


@pytest.mark.slow
async def test_the_sdk_installs_alone_and_calls_the_service(
    tmp_path: Path, service: LiveServer, make_client: ClientFactory
) -> None:
    venv = tmp_path / "venv"
    await run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python")
    # From a copy: setuptools builds in the source tree (build/, *.egg-info), and CI runs the suite on
    # SQLite and on PostgreSQL at once, so two builds in ./sdk could meet (and the checkout stays clean).
    sdk = tmp_path / "sdk"
    shutil.copytree(SDK, sdk, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    await run(python, "-m", "pip", "install", "--quiet", str(sdk), cwd=tmp_path)
    _, key = await make_client()
    # cwd is the temporary directory, so nothing of the repository is on the path by accident.
    report = json.loads(await run(python, "-c", PROBE, service.url, key, ",".join(SERVER_PARTS), cwd=tmp_path))
    installed = set(report["installed"])
    assert {"transfers-sdk", "httpx"} <= installed
    assert not installed & {
        "transfers",
        "fastapi",
        "starlette",
        "sqlalchemy",
        "asyncpg",
        "aiosqlite",
        "pydantic",
        "uvicorn",
        "alembic",
        "aiohttp",
    }, installed
    assert report["importable"] == dict.fromkeys(SERVER_PARTS, False)
    assert report["loaded"] == []
    assert report["reasons"], "the installed SDK read the cancellation reasons from the service"
