"""Process-level harness: the installed ``transfers`` console script run as real subprocesses.

* Every process is started here, bound to 127.0.0.1 on a free port, with its output in files
  (never pipes nobody reads); its PID is recorded, and whatever is still running when the test
  ends is killed by that PID (never by name).
* Every test gets a fresh database: a new PostgreSQL database on the server named by
  ``TRANSFERS_TEST_DATABASE_URL`` (dropped afterwards), or a SQLite file in the test's tmp dir.
* Test partners (``tests.fake_partner.FakePartner``) are served in-process on the test's event
  loop, so the test can read what they recorded and change their mode at any moment. Anything that
  waits (subprocesses, ``pg_ctl``) is awaited, never blocking that loop.
* ``private_postgres`` is a PostgreSQL cluster of the test's own (initdb + pg_ctl as the postgres
  OS user, on a free port from 5433 up) for tests that stop and start the database server.
* Every wait is bounded in count and time; figures a scenario prints are repeated in the
  terminal summary (``process test figures``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ON_POSTGRES, PG_URL
from tests.fake_partner import FakePartner
from tests.servers import LiveServer, free_port
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.db.tables import outbox
from transfers.partners.secrets_box import SecretBox

TRANSFERS_BIN = Path(sys.executable).with_name("transfers")
SECRET_KEY = "process-tests-secret-key-0123456789"
PG_BIN = Path("/usr/lib/postgresql/15/bin")

FIGURES: list[str] = []
_MIGRATIONS = asyncio.Lock()


def report(line: str) -> None:
    """Print a figure now (visible with -s) and again in the terminal summary."""
    FIGURES.append(line)
    print(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if FIGURES:
        terminalreporter.section("process test figures")
        for line in FIGURES:
            terminalreporter.write_line(line)


def async_url(plain: str) -> str:
    if plain.startswith("postgresql://"):
        return "postgresql+asyncpg://" + plain.split("://", 1)[1]
    return plain.replace("sqlite://", "sqlite+aiosqlite://", 1)


async def eventually(
    check: Callable[[], Any], *, timeout: float, interval: float = 0.2, what: str = "condition"
) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout:g}s")
        await asyncio.sleep(interval)


# --- databases ---------------------------------------------------------------------------------


@dataclass
class FreshDatabase:
    """A migrated database of the test's own, plus what the test needs to seed it."""

    url: str  # as operators write it (TRANSFERS_DATABASE_URL of the subprocesses)
    db: Database  # the test's own pool, for seeding and for the final checks
    clock: SystemClock = field(default_factory=SystemClock)
    box: SecretBox = field(default_factory=lambda: SecretBox(SECRET_KEY))
    clients: int = 0

    @property
    def is_postgres(self) -> bool:
        return self.url.startswith("postgresql")

    async def make_client(self, *, balance: str = "1000.00", pay_type: str = "wallet") -> tuple[int, str]:
        self.clients += 1
        created = await client_service.create_client(
            self.db,
            self.clock,
            NewClient(
                name=f"Process test agency {self.clients}",
                pay_type=pay_type,
                currency="EUR",
                opening_balance=Decimal(balance),
                can_create=True,
                can_cancel=True,
            ),
            actor="tests",
        )
        return created.client_id, created.api_key

    async def outbox_rows(self) -> list[dict[str, Any]]:
        async with self.db.read() as conn:
            return [dict(r._mapping) for r in await conn.execute(select(outbox).order_by(outbox.c.id))]


async def _pg_admin(server_plain_url: str, statement: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(server_plain_url, timeout=10)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@dataclass(frozen=True)
class Template:
    """A database migrated once per session that each test's fresh database is copied from: a
    PostgreSQL database (``CREATE DATABASE ... TEMPLATE``) on the run's server, or a SQLite file.
    A copy is the same schema and rows as a migration (the same ``alembic_version`` too), in 0.05 s
    instead of a migration's 0.4-0.7 s."""

    server_plain_url: str | None  # None: SQLite
    source: str  # the template database's name, or the SQLite file's path


@pytest.fixture(scope="session")
async def migrated_template() -> AsyncIterator[Template]:
    """One migrated database for the session's ``fresh_db``s; dropped (or deleted) at the end."""
    server = PG_URL if ON_POSTGRES else None
    with tempfile.TemporaryDirectory(prefix="transfers-template-") as tmp:
        if server is None:
            path = Path(tmp) / "template.sqlite3"
            async with _MIGRATIONS:
                await asyncio.to_thread(upgrade, f"sqlite+aiosqlite:///{path}")
            yield Template(None, str(path))
            return
        name = f"tp_template_{secrets.token_hex(6)}"
        await _pg_admin(server, f'CREATE DATABASE "{name}"')
        try:
            async with _MIGRATIONS:
                await asyncio.to_thread(upgrade, async_url(server.rsplit("/", 1)[0] + "/" + name))
            yield Template(server, name)
        finally:
            with contextlib.suppress(Exception):
                await _pg_admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _normalised(server_plain_url: str) -> str:
    """postgresql://... whichever way the URL was written (postgres://, postgresql+asyncpg://)."""
    if server_plain_url.startswith(("postgres://", "postgresql+asyncpg://")):
        return "postgresql://" + server_plain_url.split("://", 1)[1]
    return server_plain_url


def _copy_sqlite(source: str, target: Path) -> None:
    """SQLite's online backup: a consistent copy whatever the source's journal holds."""
    with contextlib.closing(sqlite3.connect(source)) as src, contextlib.closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


@contextlib.asynccontextmanager
async def fresh_database_on(
    server_plain_url: str | None, tmp: Path, template: Template | None = None
) -> AsyncIterator[FreshDatabase]:
    """A new database on the PostgreSQL server of ``server_plain_url`` (dropped afterwards), or a
    SQLite file under ``tmp`` when it is None: migrated, or copied from ``template`` (which must be
    on the same server; the private clusters of ``private_postgres`` have none)."""
    name = f"tp_{secrets.token_hex(6)}"
    if server_plain_url:
        server_plain_url = _normalised(server_plain_url)
    if template is not None:
        assert template.server_plain_url == server_plain_url, "a template copies only onto its own server"
    if server_plain_url:
        source = f' TEMPLATE "{template.source}"' if template is not None else ""
        # Copies one at a time: PostgreSQL refuses a template that another session is connected to.
        async with _MIGRATIONS:
            await _pg_admin(server_plain_url, f'CREATE DATABASE "{name}"{source}')
        plain = server_plain_url.rsplit("/", 1)[0] + "/" + name
    else:
        plain = f"sqlite:///{tmp / (name + '.sqlite3')}"
        if template is not None:
            await asyncio.to_thread(_copy_sqlite, template.source, tmp / (name + ".sqlite3"))
    try:
        if template is None:
            # In a thread, so the loop the test partners run on is never blocked; one at a time, because
            # Alembic keeps its migration context in module globals (concurrent upgrades deadlock).
            async with _MIGRATIONS:
                await asyncio.to_thread(upgrade, async_url(plain))
        db = Database(async_url(plain), pool_size=4, application_name="transfers-tests")
        try:
            yield FreshDatabase(plain, db)
        finally:
            await db.dispose()
    finally:
        if server_plain_url:
            with contextlib.suppress(Exception):
                await _pg_admin(server_plain_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def fresh_db(tmp_path: Path, migrated_template: Template) -> AsyncIterator[FreshDatabase]:
    """A fresh database on the backend of this run (PostgreSQL when TRANSFERS_TEST_DATABASE_URL is set),
    copied from the session's migrated template."""
    async with fresh_database_on(PG_URL if ON_POSTGRES else None, tmp_path, migrated_template) as fresh:
        yield fresh


# --- processes -----------------------------------------------------------------------------------


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    out: Path
    err: Path
    port: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def url(self) -> str:
        assert self.port is not None
        return f"http://127.0.0.1:{self.port}"

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def logs(self, limit: int = 4000) -> str:
        text = ""
        for path in (self.out, self.err):
            with contextlib.suppress(OSError):
                text += f"--- {path.name}\n" + path.read_text(errors="replace")[-limit:]
        return text


class Processes:
    """Starts ``transfers`` subprocesses and owns their PIDs; ``close`` kills what is left."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[Proc] = []
        self.pids: list[int] = []  # every PID ever started, for the record
        self._counter = 0

    def env(self, database_url: str, **overrides: object) -> dict[str, str]:
        """The subprocess environment: the caller's minus any TRANSFERS_*, plus test settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
        env.update(
            {
                "PYTHONUNBUFFERED": "1",
                "TRANSFERS_DATABASE_URL": database_url,
                "TRANSFERS_SECRET_KEY": SECRET_KEY,
                "TRANSFERS_SANDBOX_PARTNER": "0",
                "TRANSFERS_ENVIRONMENT": "sandbox",
                # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
                "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
                "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
                "TRANSFERS_LOG_LEVEL": "INFO",
                "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000",
                "TRANSFERS_RATE_LIMIT_BURST": "1000000",
                "TRANSFERS_OUTBOX_POLL_SECONDS": "0.2",
                # Up to 3.5 x this per process on PostgreSQL (docs/operations/scaling.md): a test runs up
                # to four processes beside the suite's own pools and another suite in CI, under the
                # server's max_connections of 100; 10 (the default) let a worker meet "too many clients".
                "TRANSFERS_DATABASE_POOL_SIZE": "5",
            }
        )
        env.update({f"TRANSFERS_{k.upper()}": str(v) for k, v in overrides.items()})
        return env

    def start(self, name: str, args: list[str], env: dict[str, str], *, port: int | None = None) -> Proc:
        self._counter += 1
        stem = f"{self._counter:02d}-{name}"
        out, err = self.workdir / f"{stem}.out", self.workdir / f"{stem}.err"
        with out.open("wb") as out_fd, err.open("wb") as err_fd:
            # The cwd is the test's tmp dir: no stray .env or var/ of the checkout is picked up.
            popen = subprocess.Popen(  # noqa: S603 (our own console script, fixed arguments)
                [str(TRANSFERS_BIN), *args],
                env=env,
                stdout=out_fd,
                stderr=err_fd,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                start_new_session=True,
            )
        proc = Proc(name, popen, out, err, port)
        self.procs.append(proc)
        self.pids.append(popen.pid)
        return proc

    async def serve(
        self,
        name: str,
        env: dict[str, str],
        *extra: str,
        port: int | None = None,
        ready_timeout: float = 60.0,
        wait: bool = True,
    ) -> Proc:
        """``transfers serve --port P`` (plus ``extra``), returned once /healthz answers."""
        port = port or free_port()
        proc = self.start(name, ["serve", "--host", "127.0.0.1", "--port", str(port), *extra], env, port=port)
        if wait:
            await self.wait_healthy(proc, timeout=ready_timeout)
        return proc

    async def wait_logged(self, proc: Proc, event: str, *, timeout: float = 60.0) -> None:
        """Wait until ``proc`` has logged ``event`` (JSON log lines on stdout, parsed: the
        renderer's spacing is not part of the format)."""

        def logged() -> bool:
            if proc.returncode is not None:
                raise AssertionError(f"{proc.name} exited with {proc.returncode}\n{proc.logs()}")
            for line in proc.out.read_text(errors="replace").splitlines():
                with contextlib.suppress(ValueError):
                    if isinstance(entry := json.loads(line), dict) and entry.get("event") == event:
                        return True
            return False

        await eventually(logged, timeout=timeout, interval=0.1, what=f"{proc.name} logs {event}")

    async def wait_healthy(self, proc: Proc, *, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=2) as client:
            while True:
                if proc.returncode is not None:
                    raise AssertionError(f"{proc.name} exited with {proc.returncode}\n{proc.logs()}")
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(proc.url + "/healthz")).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise AssertionError(f"{proc.name} not healthy within {timeout:g}s\n{proc.logs()}")
                await asyncio.sleep(0.1)

    async def wait_exit(self, proc: Proc, *, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while proc.returncode is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"{proc.name} (pid {proc.pid}) still running after {timeout:g}s\n{proc.logs()}")
            await asyncio.sleep(0.05)
        rc = proc.returncode
        assert rc is not None
        return rc

    def signal(self, proc: Proc, sig: signal.Signals) -> None:
        if proc.returncode is None:
            os.kill(proc.pid, sig)

    async def stop(self, proc: Proc, *, timeout: float = 40.0) -> int:
        """SIGTERM, then wait for the exit; the exit code is returned."""
        self.signal(proc, signal.SIGTERM)
        return await self.wait_exit(proc, timeout=timeout)

    async def kill(self, proc: Proc) -> None:
        self.signal(proc, signal.SIGKILL)
        await self.wait_exit(proc, timeout=10)

    def close(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.popen.wait(timeout=10)


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Processes]:
    processes = Processes(tmp_path)
    try:
        yield processes
    finally:
        processes.close()


# --- test partners -------------------------------------------------------------------------------


class RecordingPartner(FakePartner):
    """A FakePartner that also remembers the HTTP status it answered each recorded call with."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.answered: dict[int, int] = {}  # id(Recorded) -> status code

    async def _answer(self, request: Any, record: Any) -> Any:
        response = await super()._answer(request, record)
        self.answered[id(record)] = response.status_code
        return response

    def status_of(self, record: Any) -> int | None:
        return self.answered.get(id(record))


class Partners:
    """RecordingPartners served in-process on loopback, registered in a fresh database."""

    def __init__(self) -> None:
        self.servers: list[LiveServer] = []

    async def add(
        self, fresh: FreshDatabase, *, airports: tuple[str, ...], name: str, **fake: Any
    ) -> tuple[RecordingPartner, int]:
        partner = RecordingPartner(name=name, **fake)
        server = await LiveServer(partner.app()).start()
        self.servers.append(server)
        partner.url = server.url
        registered = await self.register(fresh, base_url=server.url, airports=airports, name=name)
        partner.signing_secret = registered.signing_secret
        partner.token = registered.outbound_token
        return partner, registered.partner_id

    @staticmethod
    async def register(fresh: FreshDatabase, *, base_url: str, airports: tuple[str, ...], name: str) -> Any:
        """Register a partner served by the test itself; returns transfers' RegisteredPartner."""
        from transfers.partners.service import register_partner

        return await register_partner(
            fresh.db,
            fresh.clock,
            fresh.box,
            name=name,
            base_url=base_url,
            airports=airports,
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="tests",
        )

    async def close(self) -> None:
        await asyncio.gather(*(server.stop() for server in self.servers))


@pytest.fixture
async def partners() -> AsyncIterator[Partners]:
    factory = Partners()
    try:
        yield factory
    finally:
        await factory.close()


def deliveries_by_webhook_id(partner: FakePartner, path: str) -> dict[str, list[Any]]:
    """The partner's recorded calls on ``path``, grouped by webhook-id, in arrival order."""
    grouped: dict[str, list[Any]] = {}
    for call in partner.calls(path):
        grouped.setdefault(call.headers.get("webhook-id", ""), []).append(call)
    return grouped


def overlapping(calls: list[Any]) -> list[tuple[float, float, float]]:
    """Pairs of calls (same webhook-id) where one started before the previous one finished."""
    ordered = sorted(calls, key=lambda c: c.started)
    return [
        (a.started, a.finished, b.started)
        for a, b in itertools.pairwise(ordered)
        if a.finished == 0.0 or b.started < a.finished
    ]


# --- a private PostgreSQL cluster ---------------------------------------------------------------


async def run_cmd(*argv: str, timeout: float = 60.0) -> tuple[int, str]:
    """Run a command without blocking the event loop (the test partners live on it)."""
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, stdin=asyncio.subprocess.DEVNULL
    )
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), timeout=timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, output.decode(errors="replace")


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class PrivateCluster:
    root: Path
    port: int
    postmaster_pids: list[int] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    async def _pg_ctl(self, *args: str, timeout: float = 60.0) -> tuple[int, str]:
        return await run_cmd(
            "runuser", "-u", "postgres", "--", str(PG_BIN / "pg_ctl"), "-D", str(self.data), *args, timeout=timeout
        )

    async def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root} "
            "-c max_connections=100"
        )
        rc, output = await self._pg_ctl("-l", str(self.root / "postgres.log"), "-w", "-t", "30", "-o", options, "start")
        assert rc == 0, output + self.log()
        pid_file = self.data / "postmaster.pid"
        self.postmaster_pids.append(int(pid_file.read_text().split()[0]))

    async def stop_immediate(self) -> None:
        rc, output = await self._pg_ctl("-m", "immediate", "-w", "-t", "30", "stop")
        assert rc == 0, output

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "postgres.log").read_text(errors="replace")[-3000:]
        return ""


@pytest.fixture
async def private_postgres() -> AsyncIterator[PrivateCluster]:
    """A PostgreSQL 15 cluster of this test's own under /tmp, trust auth, on a free port >= 5433."""
    if os.geteuid() != 0 or not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip("needs root, runuser and PostgreSQL 15 server binaries for a private cluster")
    port = next((p for p in range(5433, 5533) if _port_free(p)), None)
    assert port is not None, "no free port in 5433-5532"
    root = Path(tempfile.mkdtemp(prefix="transfers-pg-", dir="/tmp"))
    postgres_user = pwd.getpwnam("postgres")
    os.chown(root, postgres_user.pw_uid, postgres_user.pw_gid)
    cluster = PrivateCluster(root, port)
    try:
        rc, output = await run_cmd(
            "runuser",
            "-u",
            "postgres",
            "--",
            str(PG_BIN / "initdb"),
            "-D",
            str(cluster.data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "--no-instructions",
            "-E",
            "UTF8",
            "--locale=C",
        )
        assert rc == 0, output
        await cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(Exception):
            await cluster.stop_immediate()
        pid_file = cluster.data / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            still = int(pid_file.read_text().split()[0])  # pg_ctl could not stop it
            if still in cluster.postmaster_pids:  # only a postmaster this fixture started
                os.kill(still, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
