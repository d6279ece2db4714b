"""Schemathesis over the served OpenAPI document (hardening item 6, RELIABILITY B1).

The service runs as its own process (``transfers serve``) on the session database with the
built-in sandbox partner, so searches return vehicles and bookings really get created. The run is
bounded (examples per operation, fixed seed) and must end with no failure of any check: no 5xx,
every status code, content type and body as documented. ``positive_data_acceptance`` is left out
on purpose: a schema-valid request can still break a business rule (an unknown reservation, a
search that expired), which the contract answers with 422.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.servers import free_port

SEED = "20261122"
MAX_EXAMPLES = "15"


@pytest.fixture
def served(plain_database_url: str, workdir: Path) -> Iterator[tuple[str, dict[str, str]]]:
    port = free_port()
    env = {
        **os.environ,
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": "test-secret-key-not-for-production",
        "TRANSFERS_SANDBOX_PARTNER": "1",
        "TRANSFERS_SANDBOX_APPROVE_AFTER_SECONDS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000",
        "TRANSFERS_RATE_LIMIT_BURST": "1000000",
    }
    log = (workdir / f"schemathesis-serve-{port}.log").open("w")
    proc = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "transfers.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        else:
            raise RuntimeError("service did not start")
        yield url, env
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        subprocess.run([sys.executable, "-c", _DISABLE_SANDBOX], env=env, check=True, cwd=workdir)  # noqa: S603


_DISABLE_SANDBOX = """
import asyncio
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.partners import repository as r

async def main():
    db = Database(get_settings().resolved_database_url, pool_size=1)
    async with db.write() as conn:
        for p in await r.list_partners(conn):
            if p.is_sandbox:
                await r.set_status(conn, p.partner_id, "disabled")
    await db.dispose()

asyncio.run(main())
"""


def test_schemathesis_finds_nothing(served: tuple[str, dict[str, str]], workdir: Path) -> None:
    url, env = served
    st = shutil.which("st", path=str(Path(sys.executable).parent))
    assert st, "schemathesis is part of the test extra"
    created = subprocess.run(
        [sys.executable, "-m", "transfers.cli.main", "clients", "create", "--name", "Fuzzer", "--balance", "100000"],
        capture_output=True,
        text=True,
        check=True,
        cwd=workdir,
        env=env,
    )
    key = created.stdout.strip().split('"api_key": "')[1].split('"')[0]
    result = subprocess.run(  # noqa: S603
        [
            st,
            "run",
            f"{url}/openapi.json",
            "-H",
            f"Authorization: Bearer {key}",
            "--checks",
            "all",
            "--exclude-checks",
            "positive_data_acceptance",
            "--max-examples",
            MAX_EXAMPLES,
            "--seed",
            SEED,
            "--request-timeout",
            "10",
            "--max-failures",
            "20",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=workdir,
    )
    summary = result.stdout[-3000:]
    print(summary)
    generated = re.search(r"(\d+) generated", result.stdout)
    assert generated and int(generated.group(1)) > 200, summary
    assert result.returncode == 0, summary
