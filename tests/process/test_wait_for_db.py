"""``serve`` started before PostgreSQL accepts connections waits for it (``--wait-for-db``) and serves.

PostgreSQL is shared and cannot be stopped here: the service is pointed at a port of the test's own
that refuses connections (bound, not yet listening) for 5 s, then forwards to the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.process.conftest import FreshDatabase, Processes, eventually
from tests.process.operator import operator_env

pytestmark = [pytest.mark.pg_only, pytest.mark.slow]
REFUSE_SECONDS = 5.0


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


class LateProxy:
    """A port that refuses connections (bound, not listening) until ``open()``, then forwards each
    connection to the target."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.server: asyncio.Server | None = None
        self.pipes: set[asyncio.Future[Any]] = set()

    async def open(self) -> None:
        self.server = await asyncio.start_server(self._forward, sock=self.sock)

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        both = asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        self.pipes.add(both)
        both.add_done_callback(self.pipes.discard)

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for pipe in list(self.pipes):
            pipe.cancel()
        self.sock.close()


@contextlib.asynccontextmanager
async def late_proxy(target_host: str, target_port: int) -> AsyncIterator[LateProxy]:
    proxy = LateProxy(target_host, target_port)
    try:
        yield proxy
    finally:
        proxy.close()


def _attempts(proc: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in proc.out.read_text().splitlines() if "database_unavailable" in line]


async def test_serve_waits_for_postgres_then_serves(fresh_db: FreshDatabase, procs: Processes) -> None:
    """Refused for at least 5 s and at least 2 logged attempts (on a loaded machine the process may
    take seconds to import before its first attempt), then reachable: serve goes on and serves."""
    real = urlsplit(fresh_db.url)
    async with late_proxy(real.hostname or "127.0.0.1", real.port or 5432) as proxy:
        url = fresh_db.url.replace(real.netloc, f"{real.username}@127.0.0.1:{proxy.port}")
        serve = await procs.serve("serve", operator_env(url), "--wait-for-db", "60", wait=False)
        started = time.monotonic()
        await eventually(lambda: len(_attempts(serve)) >= 2, timeout=60, what="two logged attempts")
        await asyncio.sleep(max(0.0, REFUSE_SECONDS - (time.monotonic() - started)))
        await proxy.open()
        await procs.wait_healthy(serve, timeout=60)
        async with httpx.AsyncClient(timeout=10) as http:
            ready = await http.get(serve.url + "/readyz")
        assert ready.status_code == 200, ready.text
        attempts = _attempts(serve)
        assert all(f"127.0.0.1:{proxy.port}" in a["target"] and "connection refused" in a["error"] for a in attempts), (
            serve.logs()
        )
        assert "Traceback" not in serve.err.read_text()
        assert await procs.stop(serve) == 0
