"""The soak's world (``bench/soak.py``): a throwaway PostgreSQL database, a Redis of its own and the
service's processes, all on loopback (the partners and the webhook receiver: ``bench/soak_partners.py``).

Every process is started here in its own session, its PID recorded, and stopped by that PID (never
by name); the database is created and dropped by name (``soak_<random>``), and the faults that cut
database connections touch only that database's backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade

ROOT = Path(__file__).resolve().parents[1]
TRANSFERS_BIN = Path(sys.executable).with_name("transfers")
SECRET_KEY = "soak-secret-key-0123456789-abcdef"
CHECKER = "transfers-soak"  # the application_name of the soak's own connections (never cut by a fault)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# --- database -------------------------------------------------------------------------------------


class SoakDatabase:
    """``soak_<random>`` on the server of ``server_url``: created, migrated, dropped (WITH FORCE)."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url  # postgresql://user@host:port/any-existing-db
        self.name = f"soak_{secrets.token_hex(5)}"
        self.url = server_url.rsplit("/", 1)[0] + "/" + self.name
        self.db: Database | None = None
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()  # one statement at a time on that one connection

    @property
    def async_url(self) -> str:
        return "postgresql+asyncpg://" + self.url.split("://", 1)[1]

    async def _admin(self, statement: str, *args: Any) -> Any:
        """On one connection to the server's own database, opened first and kept: on a server other
        work shares, a fault must not wait for a free connection slot (``too many clients``)."""
        for attempt in range(30):
            if self._conn is None or self._conn.is_closed():
                try:
                    self._conn = await asyncpg.connect(self.server_url, timeout=10)
                except asyncpg.TooManyConnectionsError:
                    if attempt == 29:
                        raise
                    await asyncio.sleep(1.0)
                    continue
            async with self._lock:
                return await self._conn.fetch(statement, *args)
        raise AssertionError("unreachable")

    async def create(self) -> Database:
        await self._admin(f'CREATE DATABASE "{self.name}"')
        await asyncio.to_thread(upgrade, self.async_url)
        self.db = Database(self.async_url, pool_size=1, application_name=CHECKER)
        return self.db

    async def terminate_service_backends(self) -> int:
        """``pg_terminate_backend`` of every connection to this database but the soak's own."""
        rows = await self._admin(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2",
            self.name,
            CHECKER,
        )
        return sum(1 for r in rows if r[0])

    async def server_connections(self) -> str:
        """How full the server is (other work may share it): "in use / max_connections"."""
        rows = await self._admin("SELECT count(*), current_setting('max_connections') FROM pg_stat_activity")
        return f"{rows[0][0]} / {rows[0][1]}"

    async def drop(self) -> None:
        if self.db is not None:
            with contextlib.suppress(Exception):
                await self.db.dispose()
        with contextlib.suppress(Exception):
            await self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()


# --- processes ------------------------------------------------------------------------------------


@dataclass
class Slot:
    """One role (api-1, api-2, worker, redis) and the processes that filled it, newest last."""

    name: str
    argv: list[str]
    env: dict[str, str]
    port: int | None
    logdir: Path
    popens: list[subprocess.Popen[bytes]] = field(default_factory=list)
    rss: list[tuple[float, int, float]] = field(default_factory=list)  # (t, pid, MiB)

    @property
    def popen(self) -> subprocess.Popen[bytes]:
        return self.popens[-1]

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.logdir / f"{self.name}.log"

    def start(self) -> None:
        with self.log.open("ab") as out:
            out.write(f"\n--- start {time.strftime('%H:%M:%S')}\n".encode())
            out.flush()
            self.popens.append(
                subprocess.Popen(
                    self.argv,
                    env=self.env,
                    cwd=self.logdir,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            )

    def alive(self) -> bool:
        return bool(self.popens) and self.popen.poll() is None

    async def kill(self) -> None:
        """SIGKILL by PID, then reap it."""
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)
        await self._reap(10.0)

    async def stop(self, timeout: float = 40.0) -> int | None:
        """SIGTERM by PID; the exit code (SIGKILL and None after ``timeout``)."""
        if not self.popens:
            return None
        if self.alive():
            os.kill(self.pid, signal.SIGTERM)
        if not await self._reap(timeout):
            os.kill(self.pid, signal.SIGKILL)
            await self._reap(10.0)
            return None
        return self.popen.returncode

    async def _reap(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.popen.poll() is None:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    def tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def sample_rss(self, t: float) -> None:
        if not self.alive():
            return
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.rss.append((t, self.pid, int(line.split()[1]) / 1024))

    def logged_errors(self) -> list[tuple[str, str]]:
        """(timestamp, line) of the JSON log lines at level error or above (tracebacks are logged as such)."""
        found = []
        with contextlib.suppress(OSError):
            for line in self.log.read_text(errors="replace").splitlines():
                if line.startswith("{") and '"level"' in line:
                    with contextlib.suppress(ValueError):
                        entry = json.loads(line)
                        if entry.get("level") in ("error", "critical", "exception"):
                            found.append((str(entry.get("timestamp", "")), line[:400]))
        return found


async def wait_http(slot: Slot, path: str = "/healthz", timeout: float = 90.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2) as http:
        while True:
            if not slot.alive():
                raise RuntimeError(f"{slot.name} exited with {slot.popen.returncode}\n{slot.tail()}")
            with contextlib.suppress(httpx.TransportError):
                if (await http.get(slot.url + path)).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{slot.name} not healthy within {timeout:g}s\n{slot.tail()}")
            await asyncio.sleep(0.1)


async def wait_logged(slot: Slot, event: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if not slot.alive():
            raise RuntimeError(f"{slot.name} exited with {slot.popen.returncode}\n{slot.tail()}")
        with contextlib.suppress(OSError):
            text = slot.log.read_text(errors="replace")
            marker = text.rfind("--- start ")
            if f'"{event}"' in text[marker:]:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{slot.name} did not log {event} within {timeout:g}s\n{slot.tail()}")
        await asyncio.sleep(0.1)


async def wait_redis(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"PING\r\n")
            await writer.drain()
            answer = await asyncio.wait_for(reader.readline(), 2)
            writer.close()
            if answer.startswith(b"+PONG"):
                return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"redis on {port} did not answer PING within {timeout:g}s")


def service_env(
    database_url: str, redis_port: int, pool_size: int, extra: dict[str, str] | None = None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "TRANSFERS_DATABASE_URL": database_url,
            "TRANSFERS_DATABASE_POOL_SIZE": str(pool_size),
            "TRANSFERS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "TRANSFERS_SECRET_KEY": SECRET_KEY,
            "TRANSFERS_ENVIRONMENT": "sandbox",
            "TRANSFERS_SANDBOX_PARTNER": "0",
            "TRANSFERS_LOG_LEVEL": "INFO",
            # Every call goes through the limiter (and Redis), but the soak's own steady rate never hits it.
            "TRANSFERS_RATE_LIMIT_PER_MINUTE": "60000",
            "TRANSFERS_RATE_LIMIT_BURST": "10000",
            "TRANSFERS_OUTBOX_POLL_SECONDS": "0.5",
            "TRANSFERS_JOBS_INTERVAL_SECONDS": "5",
            # Rides whose pickups are minutes away: bookable, and their creates not past a deadline at once.
            "TRANSFERS_MIN_LEAD_TIME_SECONDS": "60",
            "TRANSFERS_DELIVERY_DEADLINE_BEFORE_PICKUP_HOURS": "0",
            # A request or delivery the killed process held is taken over within seconds, not a minute.
            "TRANSFERS_IDEMPOTENCY_LOCK_SECONDS": "5",
            "TRANSFERS_OUTBOX_LEASE_SECONDS": "10",
            "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
            "TRANSFERS_FLIGHT_PROVIDER": "sandbox",
        }
    )
    env.update(extra or {})  # the local SMTP and Twilio-shaped servers (bench/soak_messages.py)
    if "allow_private_webhook_urls" in Settings.model_fields:
        # The client-webhook receiver is on loopback: the SSRF guard on webhook URLs allows it only when told.
        env["TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS"] = "1"
    return env
