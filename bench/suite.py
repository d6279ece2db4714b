"""The benchmark suite: start everything, seed, run each scenario under wrk, print one table.

Started by ``bench/run.sh`` (``make bench``), which installs wrk, creates the throwaway database
and stops by PID whatever this leaves behind. Every figure that matters is a ratio to a baseline
measured in the same run on the same machine (the machine is shared and noisy).

    python -m bench.suite --dsn postgresql://postgres@127.0.0.1/bench_x --pidfile /tmp/x.pids
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

from bench import seed
from bench.procs import Proc, cpu_seconds, postgres_cpu_seconds, rss_mib
from bench.wrkrun import Request, WrkResult, write_requests, wrk

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
SECRET = "bench-secret-key-not-for-production"
BOOKING = "/api/v1/booking-api/booking"
SEARCH = "/api/v1/booking-api/search"
LAYOUT = seed.PartnerLayout()
POINTS = {
    "CDG": (48.8566, 2.3522, "Hotel de Ville, Paris"),
    "LHR": (51.5074, -0.1278, "Trafalgar Square, London"),
    "AMS": (52.3731, 4.8922, "Dam Square, Amsterdam"),
}
WALLETS = 100  # the "many wallets" create scenario: one search per wallet, cycled by wrk
DRAIN_BOOKINGS = 50  # the overdraft probe: a wallet that pays for exactly this many bookings
CREATE_FLIGHTS = 2000  # distinct flight numbers the create requests cycle through (``Suite.create_requests``)


def log(message: str) -> None:
    print(f"[{datetime.now().strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Options:
    dsn: str
    pidfile: Path
    duration: float
    warmup: float
    rounds: int
    small: int
    big: int
    cancel_targets: int
    latency_ms: float
    deadline_s: float
    servers: bool
    hold: bool = False


@dataclass
class Row:
    section: str
    name: str
    rps: float | None = None
    p50: float | None = None
    p99: float | None = None
    cpu: float | None = None  # API (or baseline) process CPU ms per request
    pg_cpu: float | None = None  # the PostgreSQL server's CPU ms per request (its processes, summed)
    figure: str = ""
    target: str = ""
    verdict: str = ""
    detail: dict[str, Any] = field(default_factory=dict)


class Suite:
    def __init__(self, opts: Options) -> None:
        self.o = opts
        self.work = Path(tempfile.mkdtemp(prefix="transfers-bench-"))
        self.procs: list[Proc] = []
        self.rows: list[Row] = []
        self.notes: list[str] = []
        self.plans: dict[str, list[str]] = {}
        self.memory: dict[str, float] = {}
        self.started = time.monotonic()
        self.sqlite_path = self.work / "transfers.sqlite3"
        self.partner_ports = [free_port() for _ in range(10)]
        self.hang_port = free_port()
        self.keys: dict[str, str] = {}
        self.client_ids: dict[str, int] = {}
        self.by_url: dict[str, Proc] = {}  # which process serves a URL (CPU per request)
        # The scale scenario's small side: a second database that stays at exactly `small` bookings.
        self.small_dsn = self.o.dsn.rsplit("/", 1)[0] + "/" + self.o.dsn.rsplit("/", 1)[1] + "_small"
        self.small_keys: dict[str, str] = {}
        self.small_ids: dict[str, int] = {}

    # --- plumbing --------------------------------------------------------------------------------

    @property
    def pg_url(self) -> str:
        return self.o.dsn

    @property
    def sqlite_url(self) -> str:
        return f"sqlite:///{self.sqlite_path}"

    def env(self, database_url: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
        env.update(
            {
                "TRANSFERS_DATABASE_URL": database_url,
                "TRANSFERS_SECRET_KEY": SECRET,
                "TRANSFERS_ENVIRONMENT": "sandbox",
                "TRANSFERS_SANDBOX_PARTNER": "0",
                "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
                "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
                "TRANSFERS_PARTNER_TIMEOUT_SECONDS": f"{self.o.deadline_s:g}",
                # The limiter still runs on every request (its cost is measured); it just never refuses.
                "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
                "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
                "TRANSFERS_LOG_LEVEL": "INFO",
                "PYTHONPATH": str(ROOT),
            }
        )
        env.update(extra)
        return env

    def start(self, name: str, argv: list[str], env: dict[str, str], ready_url: str) -> Proc:
        log(f"starting {name}")
        proc = Proc(name, argv, env=env, cwd=self.work, log=self.work / f"{name}.log", pidfile=self.o.pidfile)
        self.procs.append(proc.start())
        proc.wait_http(ready_url)
        return proc

    def stop(self, proc: Proc) -> None:
        proc.stop()
        if proc in self.procs:
            self.procs.remove(proc)

    def service(
        self, name: str, database_url: str, *, server: str = "uvicorn", workers: int = 1, **settings: str
    ) -> tuple[Proc, str]:
        port = free_port()
        env = self.env(database_url, **settings)
        if server == "uvicorn":
            argv = [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port), "--workers", str(workers)]
        else:  # what `transfers serve` would run under granian: same factory, same settings
            env.update({"TRANSFERS_EMBEDDED_WORKER": "0", "TRANSFERS_PUBLIC_BASE_URL": f"http://127.0.0.1:{port}"})
            argv = [
                str(BIN / "granian"),
                "--interface",
                "asgi",
                "--factory",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--loop",
                "uvloop",
                "--no-access-log",
                "--log-level",
                "warning",
                "transfers.app:create_app",
            ]
        url = f"http://127.0.0.1:{port}"
        proc = self.start(name, argv, env, url + "/healthz")
        self.by_url[url] = proc
        return proc, url

    def run(self, url: str, requests: list[Request], tag: str, **kw: Any) -> WrkResult:
        path = write_requests(self.work / f"{tag}.requests", requests)
        proc = self.by_url.get(url)
        pids = proc.api_pids() if proc is not None else []
        before = sum(cpu_seconds(pid) for pid in pids)
        pg_before = postgres_cpu_seconds()
        result = wrk(url, path, **kw)
        if pids and result.requests:
            spent = sum(cpu_seconds(pid) for pid in pids) - before
            result.extra["cpu_ms_per_req"] = round(spent * 1000 / result.requests, 3)
        if result.requests:
            result.extra["pg_cpu_ms_per_req"] = round((postgres_cpu_seconds() - pg_before) * 1000 / result.requests, 3)
        log(
            f"  {tag}: {result.rps:,.0f} req/s, p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms, "
            f"{result.requests} requests, {result.errors} errors, "
            f"CPU {result.extra.get('cpu_ms_per_req', float('nan')):.2f} ms/req"
        )
        return result

    def warm(self, url: str, requests: list[Request], tag: str, connections: int = 32) -> None:
        if self.o.warmup > 0:
            self.run(url, requests, f"warmup-{tag}", connections=connections, duration=self.o.warmup)

    # --- the run ---------------------------------------------------------------------------------

    def main(self) -> int:
        try:
            self.prepare()
            if self.o.hold:
                self.hold()
                shutil.rmtree(self.work, ignore_errors=True)
                return 0
            self.scenarios()
        finally:
            for proc in list(self.procs):
                self.stop(proc)
        self.report()
        shutil.rmtree(self.work, ignore_errors=True)
        return 0

    def prepare(self) -> None:
        log(f"work directory {self.work}")
        asyncio.run(create_database(self.o.dsn, self.small_dsn))
        for url in (self.pg_url, self.small_dsn, self.sqlite_url):
            log(f"migrating {url.split('@')[-1]}")
            subprocess.run(
                [str(BIN / "transfers"), "db", "upgrade"],
                env=self.env(url),
                cwd=self.work,
                check=True,
                capture_output=True,
            )
        self.partner = self.start(
            "partner",
            [
                sys.executable,
                "-m",
                "bench.partner",
                "--ports",
                ",".join(map(str, self.partner_ports)),
                "--hang-ports",
                str(self.hang_port),
                "--latency-ms",
                f"{self.o.latency_ms:g}",
            ],
            self.env(self.pg_url),
            f"http://127.0.0.1:{self.partner_ports[0]}/healthz",
        )
        asyncio.run(self.seed_pg())
        asyncio.run(self.seed_small())
        asyncio.run(self.seed_sqlite())

    async def seed_pg(self) -> None:
        from transfers.db.engine import Database
        from transfers.partners.secrets_box import SecretBox

        db = Database(asyncpg_url(self.pg_url), pool_size=8)
        try:
            log("seeding PostgreSQL: partners, clients")
            self.partner_ids = await seed.seed_partners(
                db, SecretBox(SECRET), self.partner_ports, self.hang_port, LAYOUT
            )
            balances = {
                "scale": Decimal("1000000000"),
                "other": Decimal("1000000000"),
                "hot": Decimal("100000000"),
                "drain": Decimal(40 * DRAIN_BOOKINGS),
            }
            balances.update({f"wallet-{i:03d}": Decimal("1000000") for i in range(WALLETS)})
            created = await seed.seed_clients(db, balances)
        finally:
            await db.dispose()
        self.keys = {name: c.api_key for name, c in created.items()}
        self.client_ids = {name: c.client_id for name, c in created.items()}
        # 1 000 bookings over two clients (a quarter to "scale", whose bookings GET reads).
        await seed.seed_bookings_pg(
            self.pg_url,
            first=1,
            count=self.o.small,
            label="bookings",
            **self._booking_owners(self.client_ids, self.partner_ids[0], targets=False),
        )
        await seed.analyze_pg(self.pg_url)

    async def seed_small(self) -> None:
        """Exactly `small` bookings: 100 over two clients, the rest cancel targets of "scale"."""
        from transfers.db.engine import Database
        from transfers.partners.secrets_box import SecretBox

        log(f"seeding the {self.o.small:,}-booking database")
        db = Database(asyncpg_url(self.small_dsn), pool_size=4)
        try:
            partner_ids = await seed.seed_partners(db, SecretBox(SECRET), self.partner_ports, self.hang_port, LAYOUT)
            created = await seed.seed_clients(db, {"scale": Decimal("1000000000"), "other": Decimal("1000000000")})
        finally:
            await db.dispose()
        self.small_keys = {name: c.api_key for name, c in created.items()}
        self.small_ids = {name: c.client_id for name, c in created.items()}
        targets = self.o.cancel_targets
        await seed.seed_bookings_pg(
            self.small_dsn,
            first=1,
            count=self.o.small - targets,
            label="bookings",
            **self._booking_owners(self.small_ids, partner_ids[0], targets=False),
        )
        await seed.seed_bookings_pg(
            self.small_dsn,
            first=5_000_001,
            count=targets,
            label="cancel targets",
            **self._booking_owners(self.small_ids, partner_ids[0], targets=True),
        )
        await seed.analyze_pg(self.small_dsn)

    @staticmethod
    def _booking_owners(ids: dict[str, int], partner_id: int, *, targets: bool) -> dict[str, Any]:
        return {
            "scale_client": ids["scale"],
            "other_client": ids["other"],
            "partner_id": partner_id,
            "targets": targets,
        }

    async def seed_sqlite(self) -> None:
        from transfers.db.engine import Database
        from transfers.partners.secrets_box import SecretBox

        log("seeding SQLite: 1 partner, 1 client, 1 000 bookings")
        db = Database(asyncpg_url(self.sqlite_url), pool_size=2)
        try:
            partner_ids = await seed.seed_partners(db, SecretBox(SECRET), self.partner_ports, self.hang_port, LAYOUT)
            created = (await seed.seed_clients(db, {"sqlite": Decimal("1000000000")}))["sqlite"]
            await seed.seed_bookings_sqlite(db, count=1000, client_id=created.client_id, partner_id=partner_ids[0])
        finally:
            await db.dispose()
        self.keys["sqlite"] = created.api_key

    async def reservations(self, dsn: str, client_id: int, limit: int = 20_000) -> list[str]:
        conn = await asyncpg.connect(dsn)
        try:
            rows = await conn.fetch(
                "SELECT reservation_no FROM bookings WHERE client_id = $1 ORDER BY random() LIMIT $2", client_id, limit
            )
        finally:
            await conn.close()
        return [r[0] for r in rows]

    def scenarios(self) -> None:
        service, url = self.service("api-pg", self.pg_url)
        self.api = service
        lite, lite_url = self.service("api-sqlite", self.sqlite_url)
        first_id = asyncio.run(self.booking_id_of("scale"))
        base_port = free_port()
        baseline = self.start(
            "baseline",
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "bench.baseline:create_app",
                "--port",
                str(base_port),
                "--no-access-log",
                "--log-level",
                "warning",
            ],
            self.env(
                self.pg_url,
                BENCH_PG_URL=asyncpg_url(self.pg_url),
                BENCH_SQLITE_URL=asyncpg_url(self.sqlite_url),
                BENCH_BOOKING_ID=str(first_id),
            ),
            f"http://127.0.0.1:{base_port}/hello",
        )
        base = f"http://127.0.0.1:{base_port}"
        self.by_url[base] = baseline

        gets = asyncio.run(self.get_requests(self.pg_url, self.keys["scale"], self.client_ids["scale"]))
        self.warm(url, gets, "get-pg")
        pid = service.api_pids()[0]
        self.memory["after warm-up"] = rss_mib(pid)
        log(f"API RSS after warm-up: {self.memory['after warm-up']:.1f} MiB")

        self.throughput(url, lite_url, base, gets)
        self.stop(baseline)
        self.stop(lite)
        self.search(url)
        self.create(url)
        self.memory["after the run"] = rss_mib(pid)
        log(f"API RSS after the run: {self.memory['after the run']:.1f} MiB (CPU {cpu_seconds(pid):.0f} s)")
        self.stop(service)
        self.scale()
        if self.o.servers:
            self.servers(gets)

    async def booking_id_of(self, client: str) -> int:
        conn = await asyncpg.connect(self.pg_url)
        try:
            return int(
                await conn.fetchval("SELECT min(id) FROM bookings WHERE client_id = $1", self.client_ids[client])
            )
        finally:
            await conn.close()

    async def get_requests(self, dsn: str, key: str, client_id: int) -> list[Request]:
        return [Request("GET", f"{BOOKING}?reservation_no={r}", key) for r in await self.reservations(dsn, client_id)]

    def hold(self) -> None:
        """For profiling: the seeded service and baseline stay up, with the request files wrk needs."""
        import signal

        service, url = self.service("api-pg", self.pg_url)
        base_port = free_port()
        baseline = self.start(
            "baseline",
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--factory",
                "bench.baseline:create_app",
                "--port",
                str(base_port),
                "--no-access-log",
                "--log-level",
                "warning",
            ],
            self.env(
                self.pg_url,
                BENCH_PG_URL=asyncpg_url(self.pg_url),
                BENCH_BOOKING_ID=str(asyncio.run(self.booking_id_of("scale"))),
            ),
            f"http://127.0.0.1:{base_port}/hello",
        )
        files = {
            "get": write_requests(
                self.work / "get.requests",
                asyncio.run(self.get_requests(self.pg_url, self.keys["scale"], self.client_ids["scale"])),
            ),
            "row": write_requests(
                self.work / "row.requests",
                [Request("GET", f"/row/pg?id={i}") for i in asyncio.run(self.booking_ids("scale"))],
            ),
            "create": write_requests(
                self.work / "create.requests",
                self.create_requests(asyncio.run(self.make_searches(url, [f"wallet-{i:03d}" for i in range(WALLETS)]))),
            ),
            **{
                f"search-{iata}": write_requests(
                    self.work / f"search-{iata}.requests",
                    [Request("POST", SEARCH, self.keys["scale"], self.search_body(iata))],
                )
                for iata in POINTS
            },
        }
        print(
            json.dumps(
                {
                    "api": url,
                    "api_pid": service.pid,
                    "baseline": f"http://127.0.0.1:{base_port}",
                    "baseline_pid": baseline.pid,
                    "requests": {k: str(v) for k, v in files.items()},
                },
                indent=2,
            ),
            flush=True,
        )
        log(
            "holding: profile with e.g. `wrk -t1 -c16 -d20s -s bench/wrk/requests.lua <api> -- <get file> "
            "random 1` and `py-spy record -p <api_pid> -d 10`; Ctrl-C (or SIGTERM) to stop"
        )
        # Blocked only now: children inherit the signal mask, and they must stay stoppable by SIGTERM.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        signal.sigwait({signal.SIGINT, signal.SIGTERM})

    # --- 1, 2: baselines and GET booking -----------------------------------------------------------

    def throughput(self, url: str, lite_url: str, base: str, gets: list[Request]) -> None:
        log("throughput: baselines and GET booking, interleaved rounds")
        key = self.keys["scale"]
        ids = asyncio.run(self.booking_ids("scale"))
        lite_gets = [
            Request("GET", f"{BOOKING}?reservation_no={seed.reservation_no(n)}", self.keys["sqlite"])
            for n in range(1, 1001)
        ]
        cases: dict[str, tuple[str, list[Request]]] = {
            "hello": (base, [Request("GET", "/hello", key)]),
            "memory": (base, [Request("GET", "/resource", key)]),
            "row-pg": (base, [Request("GET", f"/row/pg?id={i}", key) for i in ids]),
            "get-pg": (url, gets),
            "row-sqlite": (base, [Request("GET", f"/row/sqlite?id={n}", key) for n in range(1, 1001)]),
            "get-sqlite": (lite_url, lite_gets),
        }
        for tag, (target, requests) in cases.items():
            if tag != "get-pg":
                self.warm(target, requests, tag)
        results: dict[str, list[WrkResult]] = {tag: [] for tag in cases}
        for round_no in range(self.o.rounds):
            log(f" round {round_no + 1}/{self.o.rounds}")
            for tag, (target, requests) in cases.items():
                results[tag].append(self.run(target, requests, tag, connections=32, duration=self.o.duration))
        med = {tag: median_result(rs) for tag, rs in results.items()}
        self.get_rps = med["get-pg"].rps
        self.get_result = med["get-pg"]
        self.add("Baselines", "FastAPI JSON hello", med["hello"], rounds=results["hello"])
        self.add(
            "Baselines", "FastAPI BookingResource from memory (response_model)", med["memory"], rounds=results["memory"]
        )
        self.add(
            "Baselines",
            "FastAPI + direct read, asyncpg pool: 1 row by PK (PostgreSQL)",
            med["row-pg"],
            rounds=results["row-pg"],
        )
        self.add(
            "Baselines",
            "FastAPI + direct read, sqlite3: 1 row by PK (SQLite)",
            med["row-sqlite"],
            rounds=results["row-sqlite"],
        )
        for tag, row_tag, label in (("get-pg", "row-pg", "PostgreSQL"), ("get-sqlite", "row-sqlite", "SQLite")):
            to_row = med[tag].rps / med[row_tag].rps
            to_mem = med[tag].rps / med["memory"].rps
            self.add(
                "GET booking",
                f"GET booking, valid key ({label})",
                med[tag],
                figure=f"{to_row:.0%} of PK read, {to_mem:.0%} of in-memory (req/s); CPU/req "
                f"{cpu_ratio(med[tag], med[row_tag])} PK read, {cpu_ratio(med[tag], med['memory'])} "
                "in-memory",
                target="≥ 60 % PK read, ≥ 30 % in-memory",
                verdict=verdict(to_row >= 0.60 and to_mem >= 0.30),
                rounds=results[tag],
            )

    async def booking_ids(self, client: str) -> list[int]:
        conn = await asyncpg.connect(self.pg_url)
        try:
            rows = await conn.fetch("SELECT id FROM bookings WHERE client_id = $1", self.client_ids[client])
        finally:
            await conn.close()
        return [int(r[0]) for r in rows]

    # --- 3: search fan-out ---------------------------------------------------------------------------

    def search_body(self, iata: str) -> str:
        lat, lng, name = POINTS[iata]
        pickup = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT10:00")
        return orjson.dumps(
            {
                "pickup_datetime": pickup,
                "pickup_location": {"type": "AIRPORT", "iata_code": iata},
                "dropoff_location": {"type": "POINT", "lat": lat, "lng": lng, "name": name},
                "travelers": {"adult": 2, "children": 0, "infant": 0},
            }
        ).decode()

    def search(self, url: str) -> None:
        log(f"search fan-out: partners answer after L = {self.o.latency_ms:g} ms, deadline {self.o.deadline_s:g} s")
        latency = self.o.latency_ms
        deadline = self.o.deadline_s * 1000
        key = self.keys["scale"]
        # The overhead targets are read at a light load (2 searches at a time, 20 partner calls in
        # flight), where latency is the service's own work and not queueing behind a saturated CPU;
        # req/s at 16 connections, where the API process is the bottleneck.
        cases = [
            (LAYOUT.one, "1 partner", latency, None, 2),
            (LAYOUT.ten, "10 partners", latency, "p50 ≤ 10 ms, p99 ≤ 25 ms", 2),
            (LAYOUT.hang, "9 partners + 1 hanging", deadline, "≤ 50 ms beyond the deadline", 2),
            (LAYOUT.one, "1 partner", latency, None, 16),
            (LAYOUT.ten, "10 partners", latency, None, 16),
        ]
        for iata, label, floor, target, connections in cases:
            requests = [Request("POST", SEARCH, key, self.search_body(iata))]
            tag = f"search-{iata}-c{connections}"
            self.warm(url, requests, tag, connections=connections)
            result = self.run(url, requests, tag, connections=connections, duration=self.o.duration)
            over50, over99 = result.p50_ms - floor, result.p99_ms - floor
            what = "L" if floor == latency else "deadline"
            ok = None
            if target and floor == latency:
                ok = over50 <= 10 and over99 <= 25
            elif target:
                ok = over99 <= 50
            self.add(
                "Search",
                f"search, {label} ({connections} connections)",
                result,
                figure=f"{what} + {over50:.1f} ms p50, {what} + {over99:.1f} ms p99",
                target=target or "",
                verdict=verdict(ok) if ok is not None else "",
                overhead_p50_ms=round(over50, 2),
                overhead_p99_ms=round(over99, 2),
            )

    # --- 4: create booking ---------------------------------------------------------------------------

    async def make_searches(self, url: str, clients: list[str], per_client: int = 1) -> list[tuple[str, str]]:
        body = self.search_body(LAYOUT.one)
        pairs: list[tuple[str, str]] = []
        limit = asyncio.Semaphore(16)
        async with httpx.AsyncClient(base_url=url, timeout=30) as http:

            async def one(name: str) -> None:
                async with limit:
                    answer = await http.post(
                        SEARCH,
                        content=body,
                        headers={"Authorization": f"Bearer {self.keys[name]}", "Content-Type": "application/json"},
                    )
                    answer.raise_for_status()
                    pairs.append((self.keys[name], answer.json()["search_id"]))

            await asyncio.gather(*(one(name) for name in clients for _ in range(per_client)))
        return pairs

    @staticmethod
    def create_requests(pairs: list[tuple[str, str]]) -> list[Request]:
        """One create per (key, search) pair and flight: the pairs cycled over ``CREATE_FLIGHTS`` flight numbers.

        Why many flights: each booking of a watched flight takes its flight's watch, and a watch's check
        reads and rewrites every booking of that flight (docs/rules/flights.md#watching). With every create
        on one flight (BA117, until 2026-11-26) the run built one flight of tens of thousands of bookings,
        which no real flight has, and its once-a-minute check at creation dominated the create figures."""
        count = max(len(pairs), CREATE_FLIGHTS)
        return [
            Request(
                "POST",
                BOOKING,
                key,
                orjson.dumps(
                    {
                        "search_id": search_id,
                        "vehicle_id": 1,
                        "suitcase": 1,
                        "small_bags": 1,
                        "passenger": {
                            "name": "Ada",
                            "surname": "Lovelace",
                            "phone": "+447911123456",
                            "email": "ada@example.com",
                        },
                        "travel_details": {"flight_number": f"BA{1000 + i % CREATE_FLIGHTS}", "extra_requests": None},
                    }
                ).decode(),
            )
            for i, (key, search_id) in ((i, pairs[i % len(pairs)]) for i in range(count))
        ]

    def create(self, url: str) -> None:
        log(f"create booking: searches for {WALLETS} wallets, the hot wallet and the drain probe")
        wallets = [f"wallet-{i:03d}" for i in range(WALLETS)]
        many = self.create_requests(asyncio.run(self.make_searches(url, wallets)))
        hot = self.create_requests(asyncio.run(self.make_searches(url, ["hot"], per_client=4)))
        drain = self.create_requests(asyncio.run(self.make_searches(url, ["drain"])))

        self.warm(url, many, "create-many")
        result = self.run(url, many, "create-many", mode="cycle", connections=32, duration=self.o.duration, count=True)
        ratio = result.rps / self.get_rps if self.get_rps else 0.0
        self.add(
            "Create booking",
            f"create, {WALLETS} wallets round-robin (PostgreSQL)",
            result,
            figure=f"{ratio:.0%} of GET booking req/s (CPU/req {cpu_ratio(result, self.get_result)} GET's); "
            f"5xx: {result.raw['s5xx']}",
            target="≥ 50 % of GET req/s, 0 5xx",
            verdict=verdict(ratio >= 0.5 and result.raw["s5xx"] == 0),
        )

        self.warm(url, hot, "create-hot")
        result = self.run(url, hot, "create-hot", mode="cycle", connections=32, duration=self.o.duration, count=True)
        per_second = result.raw["s2xx"] / result.seconds
        self.add(
            "Create booking",
            "create, one hot wallet (32 connections)",
            result,
            figure=f"{per_second:,.0f} bookings/s serialised; 5xx: {result.raw['s5xx']}",
            target="≥ 300 bookings/s, 0 5xx",
            verdict=verdict(per_second >= 300 and result.raw["s5xx"] == 0),
        )

        result = self.run(url, drain, "create-drain", mode="cycle", connections=32, duration=8, count=True)
        self.money = asyncio.run(self.check_money(["drain", "hot", *wallets]))
        drained_ok = self.money["drain_bookings"] == DRAIN_BOOKINGS and self.money["drain_balance"] == "0.00"
        clean = self.money["negative_balances"] == 0 and self.money["ledger_mismatches"] == 0
        self.add(
            "Create booking",
            f"overdraft probe: 32 connections on a wallet worth {DRAIN_BOOKINGS} bookings",
            result,
            figure=(
                f"{self.money['drain_bookings']} booked, balance {self.money['drain_balance']}, "
                f"{result.raw['s4xx']} refused (1101); 5xx: {result.raw['s5xx']}"
            ),
            target=f"exactly {DRAIN_BOOKINGS}, never below 0",
            verdict=verdict(drained_ok and clean),
        )
        self.add(
            "Create booking",
            f"money check on {2 + WALLETS} wallets after the create runs",
            None,
            figure=(
                f"{self.money['negative_balances']} negative balances, {self.money['ledger_mismatches']} "
                f"balance ≠ ledger sum, {self.money['debit_mismatches']} booking without its debit"
            ),
            target="0 overdraft",
            verdict=verdict(clean and self.money["debit_mismatches"] == 0),
        )

    async def check_money(self, names: list[str]) -> dict[str, Any]:
        ids = [self.client_ids[n] for n in names]
        conn = await asyncpg.connect(self.pg_url)
        try:
            rows = await conn.fetch(
                "SELECT w.client_id, w.balance, COALESCE((SELECT SUM(amount) FROM ledger_entries l "
                "WHERE l.wallet_id = w.id), 0) AS ledger, (SELECT count(*) FROM bookings b WHERE b.client_id = "
                "w.client_id) AS bookings, (SELECT count(*) FROM ledger_entries l WHERE l.wallet_id = w.id AND "
                "l.kind = 'debit_booking') AS debits FROM wallets w WHERE w.client_id = ANY($1::bigint[])",
                ids,
            )
        finally:
            await conn.close()
        drain = next(r for r in rows if r["client_id"] == self.client_ids["drain"])
        return {
            "wallets": len(rows),
            "negative_balances": sum(1 for r in rows if r["balance"] < 0),
            "ledger_mismatches": sum(1 for r in rows if r["balance"] != r["ledger"]),
            "debit_mismatches": sum(1 for r in rows if r["bookings"] != r["debits"]),
            "bookings": sum(int(r["bookings"]) for r in rows),
            "drain_bookings": int(drain["bookings"]),
            "drain_balance": f"{drain['balance']:.2f}",
        }

    # --- 5: scale --------------------------------------------------------------------------------------

    def grow(self) -> None:
        have = asyncio.run(count_bookings(self.pg_url))
        add = self.o.big - have - self.o.cancel_targets
        log(f"growing the database from {have:,} to {self.o.big:,} bookings")
        started = time.monotonic()
        ids, partner = self.client_ids, self.partner_ids[0]
        asyncio.run(
            seed.seed_bookings_pg(
                self.pg_url,
                first=self.o.small + 1,
                count=add,
                label="bookings",
                **self._booking_owners(ids, partner, targets=False),
            )
        )
        asyncio.run(
            seed.seed_bookings_pg(
                self.pg_url,
                first=6_000_001,
                count=self.o.cancel_targets,
                label="cancel targets",
                **self._booking_owners(ids, partner, targets=True),
            )
        )
        asyncio.run(seed.analyze_pg(self.pg_url, vacuum=True))
        self.seed_seconds = time.monotonic() - started
        log(f"seeded {add + self.o.cancel_targets:,} bookings in {self.seed_seconds:.0f} s (with VACUUM ANALYZE)")

    def scale(self) -> None:
        """GET and cancel on the 1 000-booking database and on the main one grown to 1 000 000, each
        served by a fresh API process, in interleaved rounds (the machine's load drifts; both sides
        see the same drift, and the side that goes first alternates)."""
        self.grow()
        small_proc, small_url = self.service("api-small", self.small_dsn)
        big_proc, big_url = self.service("api-big", self.pg_url)
        sides = {
            "small": (small_url, self.small_dsn, self.small_keys["scale"], self.small_ids["scale"]),
            "big": (big_url, self.pg_url, self.keys["scale"], self.client_ids["scale"]),
        }
        totals: dict[str, int] = {}
        gets: dict[str, list[Request]] = {}
        slices: dict[str, list[list[Request]]] = {}
        first = {"small": 5_000_001, "big": 6_000_001}
        for side, (url, dsn, key, client_id) in sides.items():
            totals[side] = asyncio.run(count_bookings(dsn))
            self.plans[f"{totals[side]:,} bookings"] = asyncio.run(self.explain(dsn, client_id))
            gets[side] = asyncio.run(self.get_requests(dsn, key, client_id))
            targets = [
                Request("DELETE", f"{BOOKING}?reservation_no={seed.reservation_no(n)}&cancellation_id=1", key)
                for n in range(first[side], first[side] + self.o.cancel_targets)
            ]
            warm, rest = targets[:60], targets[60:]
            per_round = len(rest) // self.o.rounds
            slices[side] = [rest[i * per_round : (i + 1) * per_round] for i in range(self.o.rounds)]
            self.warm(url, gets[side], f"scale-get-{side}", connections=8)
            self.run(url, warm, f"warmup-scale-cancel-{side}", mode="once", connections=8, duration=1, count=True)
        log(f"scale: {totals['small']:,} vs {totals['big']:,} bookings, {self.o.rounds} interleaved rounds")
        got: dict[str, list[WrkResult]] = {side: [] for side in sides}
        cancelled: dict[str, list[WrkResult]] = {side: [] for side in sides}
        for round_no in range(self.o.rounds):
            order = list(sides.items()) if round_no % 2 == 0 else list(reversed(sides.items()))
            for side, (url, *_) in order:
                got[side].append(
                    self.run(url, gets[side], f"scale-get-{side}", connections=8, duration=self.o.duration)
                )
            for side, (url, *_) in order:
                # Each request cancels another booking, so a run ends when its targets do (wrk then
                # idles until -d): req/s by Little's law, latency from the requests actually made.
                result = self.run(
                    url,
                    slices[side][round_no],
                    f"scale-cancel-{side}",
                    mode="once",
                    connections=8,
                    duration=3,
                    count=True,
                )
                result.closed_loop = True
                cancelled[side].append(result)
        self.memory["the 1M-scale API after its run"] = rss_mib(big_proc.pid)
        self.stop(small_proc)
        self.stop(big_proc)
        small, big = f"{totals['small']:,}", f"{totals['big']:,}"
        get_small, get_big = median_p50(got["small"]), median_p50(got["big"])
        cancel_small, cancel_big = median_p50(cancelled["small"]), median_p50(cancelled["big"])
        get_ratio = get_big.p50_ms / get_small.p50_ms
        cancel_ratio = cancel_big.p50_ms / cancel_small.p50_ms
        self.add("Scale", f"GET booking, {small} bookings (8 connections)", get_small, rounds=got["small"])
        self.add(
            "Scale",
            f"GET booking, {big} bookings (8 connections)",
            get_big,
            rounds=got["big"],
            figure=f"p50 {get_ratio:.2f}× the {small} figure (CPU/req {cpu_ratio(get_big, get_small)})",
            target="p50 ≤ 1.2×",
            verdict=verdict(get_ratio <= 1.2),
        )
        self.add(
            "Scale",
            f"cancel, {small} bookings (8 conn., each a different booking)",
            cancel_small,
            rounds=cancelled["small"],
            figure=cancel_note(cancelled["small"]),
        )
        self.add(
            "Scale",
            f"cancel, {big} bookings (8 conn., each a different booking)",
            cancel_big,
            rounds=cancelled["big"],
            figure=f"p50 {cancel_ratio:.2f}× the {small} figure (CPU/req {cpu_ratio(cancel_big, cancel_small)}); "
            + cancel_note(cancelled["big"]),
        )

    async def explain(self, dsn: str, client_id: int) -> list[str]:
        """The plans of the queries GET and cancel run, compiled from the same Core expressions."""
        from sqlalchemy import and_, select, update
        from sqlalchemy.dialects import postgresql

        from transfers.auth.repository import _LOOKUP
        from transfers.db.tables import bookings, wallets

        conn = await asyncpg.connect(dsn)
        try:
            sample = await conn.fetchrow(
                "SELECT id, reservation_no, client_id FROM bookings WHERE client_id = $1 ORDER BY id DESC LIMIT 1",
                client_id,
            )
            queries = {
                "GET/cancel: booking of a client by reservation_no": select(bookings).where(
                    bookings.c.reservation_no == sample["reservation_no"], bookings.c.client_id == sample["client_id"]
                ),
                "cancel: lock the booking": select(bookings).where(bookings.c.id == sample["id"]).with_for_update(),
                "cancel: compare-and-set the status": update(bookings)
                .where(and_(bookings.c.id == sample["id"], bookings.c.status == "PENDING_APPROVAL"))
                .values(status="CANCELLED"),
                "cancel: the client's wallet": select(wallets.c.id, wallets.c.balance).where(
                    wallets.c.client_id == sample["client_id"]
                ),
                "auth (cached 1 s): key by prefix": _LOOKUP.statement.params(prefix="tk_000000000000"),
            }
            lines: list[str] = []
            for title, query in queries.items():
                sql = str(
                    query.compile(
                        dialect=postgresql.dialect(),  # type: ignore[no-untyped-call]
                        compile_kwargs={"literal_binds": True},
                    )
                )
                transaction = conn.transaction()
                await transaction.start()
                try:  # EXPLAIN ANALYZE runs the statement: never keep what an UPDATE did
                    plan = await conn.fetch("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql)
                finally:
                    await transaction.rollback()
                lines.append(f"{title}:")
                lines.extend("    " + r[0] for r in plan)
            return lines
        finally:
            await conn.close()

    # --- server and worker count ------------------------------------------------------------------------

    def servers(self, gets: list[Request]) -> None:
        """GET booking under uvicorn and granian, 1 and 2 workers: each started fresh, 3 rounds."""
        log("ASGI server and worker count, GET booking on PostgreSQL")
        configs: list[tuple[str, int, int]] = [  # server, workers, TRANSFERS_DATABASE_POOL_SIZE
            ("uvicorn", 1, 10),
            ("uvicorn", 2, 10),
            ("granian", 1, 10),
            ("granian", 2, 10),
            ("uvicorn", 1, 20),
        ]
        if not (BIN / "granian").exists():
            self.notes.append("granian is not installed: the server comparison has uvicorn only")
            configs = [c for c in configs if c[0] != "granian"]
        results: dict[tuple[str, int, int], list[WrkResult]] = {c: [] for c in configs}
        rss: dict[tuple[str, int, int], list[float]] = {}
        for _ in range(3):
            for config in configs:
                server, workers, pool = config
                tag = f"{server}-{workers}-pool{pool}"
                proc, url = self.service(
                    f"api-{tag}", self.pg_url, server=server, workers=workers, TRANSFERS_DATABASE_POOL_SIZE=str(pool)
                )
                try:
                    self.warm(url, gets, tag)
                    results[config].append(self.run(url, gets, tag, connections=32, duration=self.o.duration))
                    rss[config] = [rss_mib(p) for p in proc.api_pids() if not is_helper(p)]
                finally:
                    self.stop(proc)
        for (server, workers, pool), runs in results.items():
            result = median_result(runs)
            name = f"GET booking under {server}, {workers} worker{'s' if workers > 1 else ''}"
            if pool != 10:
                name += f", TRANSFERS_DATABASE_POOL_SIZE={pool}"
            self.add(
                "ASGI server",
                name,
                result,
                rounds=runs,
                figure=f"runs {' / '.join(f'{r.rps:,.0f}' for r in runs)} req/s; RSS "
                + " + ".join(f"{r:.0f}" for r in rss[(server, workers, pool)])
                + " MiB",
            )

    # --- the table -------------------------------------------------------------------------------------

    def add(
        self,
        section: str,
        name: str,
        result: WrkResult | None,
        *,
        figure: str = "",
        target: str = "",
        verdict: str = "",
        rounds: list[WrkResult] | None = None,
        **detail: Any,
    ) -> None:
        row = Row(section, name, figure=figure, target=target, verdict=verdict, detail=dict(detail))
        if result is not None:
            row.rps, row.p50, row.p99 = result.rps, result.p50_ms, result.p99_ms
            row.cpu = result.extra.get("cpu_ms_per_req")
            row.pg_cpu = result.extra.get("pg_cpu_ms_per_req")
            row.detail["wrk"] = result.summary()
        if rounds:
            row.detail["rounds"] = [
                {
                    "rps": round(r.rps, 1),
                    "p50_ms": round(r.p50_ms, 2),
                    "p99_ms": round(r.p99_ms, 2),
                    "cpu_ms_per_req": r.extra.get("cpu_ms_per_req"),
                    "pg_cpu_ms_per_req": r.extra.get("pg_cpu_ms_per_req"),
                }
                for r in rounds
            ]
        self.rows.append(row)

    def report(self) -> None:
        mem = self.memory
        if mem:
            worst = max(mem.values())
            self.rows.append(
                Row(
                    "Memory",
                    "API process RSS (VmRSS)",
                    figure=", ".join(f"{k}: {v:.0f} MiB" for k, v in mem.items()),
                    target="< 200 MiB",
                    verdict=verdict(worst < 200),
                )
            )
        stamp = datetime.now().strftime("%Y-%m-%d")
        table = render_table(self.rows)
        extra = ["", "Indexes (EXPLAIN ANALYZE of the service's queries; bookings at each scale):"]
        for label, lines in self.plans.items():
            extra.append(f"  at {label}:")
            extra.extend("    " + line for line in lines)
        if getattr(self, "money", None):
            extra.append(f"Money after the create runs: {json.dumps(self.money)}")
        extra.extend(self.notes)
        machine = machine_info()
        header = (
            f"transfers bench {datetime.now().isoformat(timespec='seconds')} — {machine['nproc']} CPUs, "
            f"{machine['mem_total']}, load {machine['loadavg']}; L = {self.o.latency_ms:g} ms, deadline "
            f"{self.o.deadline_s:g} s, {self.o.duration:g} s per run after {self.o.warmup:g} s warm-up, "
            f"{self.o.rounds} interleaved rounds (median) for the throughput rows; took "
            f"{(time.monotonic() - self.started) / 60:.1f} min"
        )
        text = "\n".join([header, "", table, *extra])
        print(text, flush=True)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"{stamp}.md").write_text(f"# Benchmark run {stamp}\n\n```\n{text}\n```\n")
        (RESULTS / f"{stamp}.json").write_text(
            json.dumps(
                {
                    "date": datetime.now().isoformat(timespec="seconds"),
                    "machine": machine,
                    "options": {k: str(v) for k, v in vars(self.o).items()},
                    "rows": [vars(r) for r in self.rows],
                    "plans": self.plans,
                    "memory_mib": mem,
                    "money": getattr(self, "money", None),
                    "notes": self.notes,
                    "table": table,
                },
                indent=2,
                default=str,
            )
        )
        log(f"results written to {RESULTS / stamp}.md and .json")


def is_helper(pid: int) -> bool:
    """multiprocessing's resource tracker beside uvicorn's workers: not an API process."""
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def median_result(results: list[WrkResult]) -> WrkResult:
    ordered = sorted(results, key=lambda r: r.rps)
    return ordered[(len(ordered) - 1) // 2]  # the median (of two runs, the slower)


def cpu_ratio(a: WrkResult, b: WrkResult) -> str:
    x, y = a.extra.get("cpu_ms_per_req"), b.extra.get("cpu_ms_per_req")
    return f"{x / y:.1f}×" if x and y else "?"


def cancel_note(results: list[WrkResult]) -> str:
    total = {k: sum(int(r.raw[k]) for r in results) for k in ("s2xx", "s4xx", "s5xx")}
    return f"{total['s2xx']} cancelled, {total['s4xx']} 4xx, {total['s5xx']} 5xx"


def median_p50(results: list[WrkResult]) -> WrkResult:
    ordered = sorted(results, key=lambda r: r.p50_ms)
    return ordered[len(ordered) // 2]  # of two runs, the slower


async def count_bookings(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM bookings"))
    finally:
        await conn.close()


async def create_database(dsn: str, new_dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'CREATE DATABASE "{new_dsn.rsplit("/", 1)[1]}"')
    finally:
        await conn.close()


def verdict(ok: bool | None) -> str:
    if ok is None:
        return ""
    return "MET" if ok else "MISSED"


def render_table(rows: list[Row]) -> str:
    head = ["Scenario", "req/s", "p50 ms", "p99 ms", "CPU ms/req", "PG CPU ms/req", "Figure", "Target", ""]
    body = []
    section = None
    for r in rows:
        if r.section != section:
            section = r.section
            body.append([f"{section}", "", "", "", "", "", "", "", ""])
        body.append(
            [
                f"  {r.name}",
                fmt(r.rps, 0),
                fmt(r.p50, 2),
                fmt(r.p99, 2),
                fmt(r.cpu, 2),
                fmt(r.pg_cpu, 2),
                r.figure,
                r.target,
                r.verdict,
            ]
        )
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]
    numeric = {1, 2, 3, 4, 5}

    def render(line: list[str]) -> str:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True))]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([render(head), rule, *(render(line) for line in body)])


def fmt(value: float | None, digits: int) -> str:
    if value is None:
        return ""
    return f"{value:,.{digits}f}"


def machine_info() -> dict[str, Any]:
    mem = ""
    try:
        mem = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()[1]
        mem = "RAM " + mem.split()[1]
    except (OSError, IndexError):
        pass
    return {
        "nproc": os.cpu_count(),
        "mem_total": mem,
        "loadavg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def asyncpg_url(url: str) -> str:
    if url.startswith("postgresql://"):
        return "postgresql+asyncpg://" + url.split("://", 1)[1]
    if url.startswith("sqlite:///"):
        return "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
    return url


def main() -> None:
    parser = argparse.ArgumentParser(description="transfers benchmark suite")
    parser.add_argument("--dsn", required=True, help="postgresql://... of a throwaway database")
    parser.add_argument("--pidfile", required=True, type=Path)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured run")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the throughput runs")
    parser.add_argument("--big", type=int, default=1_000_000, help="bookings in the large scale phase")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--deadline", type=float, default=1.0, help="TRANSFERS_PARTNER_TIMEOUT_SECONDS")
    parser.add_argument("--no-servers", action="store_true", help="skip the ASGI server comparison")
    parser.add_argument("--quick", action="store_true", help="short runs and 20 000 bookings (development)")
    parser.add_argument(
        "--hold",
        action="store_true",
        help="seed, start the service and the baseline, print how to reach them, wait (profiling)",
    )
    args = parser.parse_args()
    opts = Options(
        dsn=args.dsn,
        pidfile=args.pidfile,
        duration=args.duration,
        warmup=args.warmup,
        rounds=args.rounds,
        small=1000,
        big=args.big,
        cancel_targets=900,
        latency_ms=args.latency_ms,
        deadline_s=args.deadline,
        servers=not args.no_servers,
        hold=args.hold,
    )
    if args.quick:
        opts.duration, opts.warmup, opts.rounds, opts.big = 3.0, 1.0, 1, 20_000
    sys.exit(Suite(opts).main())


if __name__ == "__main__":
    main()
