"""``prepare_redis`` waits for a Redis that is not up yet (``serve --wait-for-db``), through the same
retry loop as the database wait (``ops/startup._until_available``): every failed attempt is one
``redis_unavailable`` warning with the password masked, and the wait ends at the deadline with the
number of attempts, or as soon as a real Redis (started meanwhile on loopback) answers."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import pytest
from structlog.testing import capture_logs

from tests.servers import free_port
from transfers.config import Settings
from transfers.ops.errors import BackendUnavailable
from transfers.ops.startup import prepare_redis

PASSWORD = "redis-wait-secret"


def _settings(port: int) -> Settings:
    return Settings(redis_url=f"redis://:{PASSWORD}@127.0.0.1:{port}/0")


async def test_a_redis_that_never_comes_gives_up_at_the_deadline() -> None:
    port = free_port()
    started = time.monotonic()
    with capture_logs() as logs, pytest.raises(BackendUnavailable) as raised:
        await prepare_redis(_settings(port), wait_seconds=1.5)
    assert 1.4 <= time.monotonic() - started < 10
    assert str(raised.value).startswith(f"Redis redis://:***@127.0.0.1:{port}/0 unreachable")
    warnings = [e for e in logs if e["event"] == "redis_unavailable"]
    assert len(warnings) >= 1 and f"(gave up after {len(warnings) + 1} attempts" in str(raised.value)
    assert all(e["target"] == f"redis://:***@127.0.0.1:{port}/0" and PASSWORD not in str(e) for e in warnings)


async def test_a_redis_started_during_the_wait_is_used() -> None:
    port = free_port()

    async def start_later() -> subprocess.Popen[bytes]:
        await asyncio.sleep(1.2)
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is needed on PATH"
        command = [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--requirepass",
            PASSWORD,
        ]
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603

    later = asyncio.create_task(start_later())
    try:
        with capture_logs() as logs:
            await prepare_redis(_settings(port), wait_seconds=15)
    finally:
        server = await later
        server.terminate()
        server.wait(timeout=10)
    attempts = [e["attempt"] for e in logs if e["event"] == "redis_unavailable"]
    assert attempts[:1] == [1] and attempts == list(range(1, len(attempts) + 1))  # it waited, then PING answered
