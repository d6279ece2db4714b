"""``serve`` started before PostgreSQL accepts connections waits for it (``--wait-for-db``) and serves.

PostgreSQL is shared and cannot be stopped here: the service is pointed at a port of the test's own
that refuses connections (bound, not yet listening) for 5 s, then forwards to the real server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.process.conftest import FreshDatabase, Processes
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


@contextlib.asynccontextmanager
async def late_proxy(target_host: str, target_port: int, refuse_for: float) -> AsyncIterator[int]:
    """A port that refuses connections for ``refuse_for`` s, then forwards each to the target."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
    port = sock.getsockname()[1]
    tasks: set[asyncio.Future[Any]] = set()

    async def forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            writer.close()
            return
        both = asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        tasks.add(both)
        both.add_done_callback(tasks.discard)

    server: asyncio.Server | None = None

    async def open_later() -> None:
        nonlocal server
        await asyncio.sleep(refuse_for)
        server = await asyncio.start_server(forward, sock=sock)

    opener = asyncio.create_task(open_later())
    try:
        yield port
    finally:
        opener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await opener
        if server is not None:
            server.close()
        for task in list(tasks):
            task.cancel()
        sock.close()


async def test_serve_waits_for_postgres_then_serves(fresh_db: FreshDatabase, procs: Processes) -> None:
    real = urlsplit(fresh_db.url)
    async with late_proxy(real.hostname or "127.0.0.1", real.port or 5432, REFUSE_SECONDS) as port:
        url = fresh_db.url.replace(real.netloc, f"{real.username}@127.0.0.1:{port}")
        serve = await procs.serve("serve", operator_env(url), "--wait-for-db", "30", ready_timeout=60)
        async with httpx.AsyncClient(timeout=10) as http:
            ready = await http.get(serve.url + "/readyz")
        assert ready.status_code == 200, ready.text
        attempts = [json.loads(line) for line in serve.out.read_text().splitlines() if "database_unavailable" in line]
        assert len(attempts) >= 2, serve.logs()  # refused for 5 s, retried every second
        assert all(f"127.0.0.1:{port}" in a["target"] and "connection refused" in a["error"] for a in attempts)
        assert "Traceback" not in serve.err.read_text()
        assert await procs.stop(serve) == 0
