"""The soak's world (``bench/soak.py``): a throwaway PostgreSQL database, a Redis of its own, the
service's processes, the test partners and the client-webhook receiver, all on loopback.

Every process is started here in its own session, its PID recorded, and stopped by that PID (never
by name); the database is created and dropped by name (``soak_<random>``), and the faults that cut
database connections touch only that database's backends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from tests.fake_partner import FakePartner, Recorded
from tests.servers import LiveServer

from transfers.cancellation.policy import parse_spec
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.hosted import service as hosted_service
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner

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

    @property
    def async_url(self) -> str:
        return "postgresql+asyncpg://" + self.url.split("://", 1)[1]

    async def _admin(self, statement: str, *args: Any) -> Any:
        conn = await asyncpg.connect(self.server_url, timeout=10)
        try:
            return await conn.fetch(statement, *args)
        finally:
            await conn.close()

    async def create(self) -> Database:
        await self._admin(f'CREATE DATABASE "{self.name}"')
        await asyncio.to_thread(upgrade, self.async_url)
        self.db = Database(self.async_url, pool_size=2, application_name=CHECKER)
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

    async def connections(self) -> int:
        rows = await self._admin("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", self.name)
        return int(rows[0][0])

    async def drop(self) -> None:
        if self.db is not None:
            with contextlib.suppress(Exception):
                await self.db.dispose()
        with contextlib.suppress(Exception):
            await self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


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


def service_env(database_url: str, redis_port: int, pool_size: int) -> dict[str, str]:
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
    if "allow_private_webhook_urls" in Settings.model_fields:
        # The client-webhook receiver is on loopback: the SSRF guard on webhook URLs allows it only when told.
        env["TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS"] = "1"
    return env


# --- partners and the webhook receiver -------------------------------------------------------------


class SoakPartner(FakePartner):
    """A FakePartner that fails a share of its calls with 503 (``fail_rate``) and remembers the
    status it answered each call with."""

    fail_rate: float = 0.0
    answered: dict[int, int]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answered = {}
        self.rng = random.Random(hash(self.name) & 0xFFFF)

    async def _answer(self, request: Any, record: Recorded) -> Response:
        while self.mode == "hang":  # no answer while it hangs (the service gives up first), then a 503
            await asyncio.sleep(0.2)
            if self.mode != "hang":
                self.answered[id(record)] = 503
                return Response(b'{"status":"Error","message":"hung"}', status_code=503, media_type="application/json")
        if self.fail_rate and self.rng.random() < self.fail_rate:
            response = Response(b'{"status":"Error","message":"busy"}', status_code=503, media_type="application/json")
        else:
            response = await super()._answer(request, record)
        self.answered[id(record)] = response.status_code
        return response

    def ok(self, record: Recorded) -> bool:
        status = self.answered.get(id(record))
        return status is not None and 200 <= status < 300


@dataclass
class Hook:
    webhook_id: str
    type: str
    reservation_no: str | None
    sequence: int | None
    body: bytes
    status: int
    at: float


@dataclass
class FlakyReceiver:
    """A client's webhook endpoint: records every delivery and answers 500 to a share of them."""

    fail_rate: float = 0.1
    received: list[Hook] = field(default_factory=list)
    url: str = ""
    rng: random.Random = field(default_factory=lambda: random.Random(7))

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self._hook, methods=["POST"])])

    async def _hook(self, request: Request) -> Response:
        raw = await request.body()
        body = orjson.loads(raw)
        data = body.get("data") or {}
        booking = data.get("booking") or {}
        status = 500 if self.rng.random() < self.fail_rate else 200
        self.received.append(
            Hook(
                request.headers.get("webhook-id", ""),
                body.get("type", ""),
                booking.get("reservation_no") or data.get("reservation_no"),
                data.get("sequence"),
                raw,
                status,
                time.monotonic(),
            )
        )
        return Response(b"", status_code=status)


@dataclass
class PartnerSetup:
    partner: SoakPartner | None  # None: the hosted partner
    partner_id: int
    api_key: str
    airports: tuple[str, ...]


@dataclass
class World:
    db: SoakDatabase
    partners: dict[str, PartnerSetup]
    clients: list[tuple[int, str]]  # (client_id, api key)
    receiver: FlakyReceiver
    servers: list[LiveServer]
    slots: dict[str, Slot]


PARTNERS: dict[str, dict[str, Any]] = {
    # name: (airports, FakePartner settings, default cancellation policy)
    "Fast A": {"airports": ("LHR",), "fake": {}, "policy": None},
    "Fast B": {"airports": ("LHR",), "fake": {}, "policy": "0:25"},  # every cancel keeps a 25 % fee
    "Fast C": {"airports": ("LHR",), "fake": {}, "policy": None},  # the one that hangs for a while
    "Slow": {"airports": ("LGW",), "fake": {"mode": "slow", "delay": 1.2}, "policy": None},
    "Flaky": {"airports": ("STN",), "fake": {"fail": 0.15}, "policy": None},
}
HOSTED = "Hosted"
HOSTED_AIRPORTS = ("LCY",)


async def seed(db: Database, clients: int) -> tuple[dict[str, PartnerSetup], list[tuple[int, str]], list[LiveServer]]:
    """Partners (served in this process on loopback, registered through the service's own use
    cases), the hosted partner with a rate card, and the clients with big wallets."""
    clock, box = SystemClock(), SecretBox(SECRET_KEY)
    setups: dict[str, PartnerSetup] = {}
    servers: list[LiveServer] = []
    for name, spec in PARTNERS.items():
        fake = dict(spec["fake"])
        fail = fake.pop("fail", 0.0)
        partner = SoakPartner(name=name, **fake)
        partner.fail_rate = fail
        server = await LiveServer(partner.app()).start()
        servers.append(server)
        partner.url = server.url
        registered = await register_partner(
            db,
            clock,
            box,
            name=name,
            base_url=server.url,
            airports=spec["airports"],
            markup_percent=Decimal("10"),
            allow_private=True,
            actor="soak",
            cancellation_policy=parse_spec(spec["policy"]) if spec["policy"] else None,
        )
        partner.signing_secret = registered.signing_secret
        partner.token = registered.outbound_token
        setups[name] = PartnerSetup(partner, registered.partner_id, registered.api_key, spec["airports"])
    hosted = await hosted_service.register_hosted_partner(
        db, clock, box, name=HOSTED, airports=HOSTED_AIRPORTS, markup_percent=Decimal("5"), actor="soak"
    )
    card = json.loads((ROOT / "examples" / "rate-card.json").read_text())
    card["blackout_dates"] = []
    for vehicle in card["vehicles"]:
        vehicle["daily_capacity"] = 1000
    await hosted_service.set_rate_card(db, clock, hosted.partner_id, card, actor="soak")
    setups[HOSTED] = PartnerSetup(None, hosted.partner_id, hosted.api_key, HOSTED_AIRPORTS)
    made = []
    for n in range(clients):
        created = await client_service.create_client(
            db,
            clock,
            NewClient(
                name=f"Soak agency {n + 1}",
                pay_type="wallet",
                currency="EUR",
                opening_balance=Decimal("1000000.00"),
            ),
            actor="soak",
        )
        made.append((created.client_id, created.api_key))
    return setups, made, servers
