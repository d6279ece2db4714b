"""The search fan-out alone, on both databases: 10 partners, 50 partners, 9 + 1 hanging.

Part of ``make bench`` (after the suite); alone, in ~4 minutes:

    .venv/bin/python -m bench.search --dsn postgresql://postgres@127.0.0.1/throwaway [--rounds 3]
    .venv/bin/python -m bench.search --dsn ... --hold      # servers up, request files printed (profiling)

One bench partner process (``bench/partner.py``) serves 50 good ports answering after L = 200 ms and
one that never answers. One API process per database (``transfers serve --no-worker``, settings as in
the suite). Every case runs at 4 searches at a time; the rounds are interleaved (each case of each
database once per round) so drift in the machine's load hits every case alike, and each figure is the
median over the rounds. CPU is the API process's (``/proc/<pid>/stat``) per search: much less
sensitive to the other work on the machine than latency. The load average is printed beside each
round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import orjson

from bench import seed
from bench.procs import Proc, cpu_seconds
from bench.suite import BIN, ROOT, SEARCH, SECRET, asyncpg_url, free_port, log
from bench.wrkrun import Request, WrkResult, write_requests, wrk

GOOD = 50
POINT = (51.5074, -0.1278, "Trafalgar Square, London")
# airport -> (the partners asked: indexes into the good ports, plus the hanging one?)
CASES = {
    "10 partners": ("LHR", 10, False),
    "10 partners, in GBP": ("LHR", 10, False),
    "50 partners": ("FRA", 50, False),
    "9 + 1 hanging": ("AMS", 9, True),
}
# docs/rules/fx.md#search: the case searched in another currency than the partners quote in (EUR), so every
# quote is converted (the client holds a GBP wallet beside its EUR one); the others name none.
CURRENCY = {"10 partners, in GBP": "GBP"}


@dataclass
class Figure:
    cpu_ms: float
    p50: float
    p99: float
    requests: int
    load: str


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def seed_db(url: str, ports: list[int], hang_port: int) -> str:
    """50 partners (LHR: the first 10, FRA: all 50, AMS: the first 9 and the hanging one); one
    wallet client. Returns its API key."""
    from transfers.clock import SystemClock
    from transfers.db.engine import Database
    from transfers.partners.secrets_box import SecretBox
    from transfers.partners.service import register_partner
    from transfers.wallet.repository import add_wallet

    db = Database(asyncpg_url(url), pool_size=2)
    box = SecretBox(SECRET)
    try:
        for i, port in enumerate(ports):
            airports = ["FRA"] + (["LHR"] if i < 10 else []) + (["AMS"] if i < 9 else [])
            await register_partner(
                db,
                SystemClock(),
                box,
                name=f"bench-partner-{i + 1:02d}",
                base_url=f"http://127.0.0.1:{port}",
                airports=tuple(sorted(airports)),
                markup_percent=Decimal("0"),
                allow_private=True,
                actor="bench",
            )
        await register_partner(
            db,
            SystemClock(),
            box,
            name="bench-partner-hanging",
            base_url=f"http://127.0.0.1:{hang_port}",
            airports=("AMS",),
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="bench",
        )
        created = await seed.seed_clients(db, {"search": Decimal("1000000000")})
        async with db.write() as conn:  # the converted case searches in GBP: one of the client's wallets
            await add_wallet(conn, created["search"].client_id, "GBP", default=False, now=datetime.now(UTC))
    finally:
        await db.dispose()
    return created["search"].api_key


def body(iata: str, currency: str | None = None) -> str:
    lat, lng, name = POINT
    pickup = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT10:00")
    request = {
        "pickup_datetime": pickup,
        "pickup_location": {"type": "AIRPORT", "iata_code": iata},
        "dropoff_location": {"type": "POINT", "lat": lat, "lng": lng, "name": name},
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }
    if currency is not None:
        request["currency"] = currency
    return orjson.dumps(request).decode()


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="transfers-search-bench-"))
        self.pidfile: Path = args.pidfile or self.work / "pids"
        self.procs: list[Proc] = []
        self.ports = [free_port() for _ in range(GOOD)]
        self.hang_port = free_port()
        self.labels: list[str] = []
        self.dbs = {"PostgreSQL": args.dsn, "SQLite": f"sqlite:///{self.work / 'search.sqlite3'}"}

    def env(self, url: str, src: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
        env.update(
            {
                "TRANSFERS_DATABASE_URL": url,
                "TRANSFERS_SECRET_KEY": SECRET,
                "TRANSFERS_ENVIRONMENT": "sandbox",
                "TRANSFERS_SANDBOX_PARTNER": "0",
                "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
                "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
                "TRANSFERS_PARTNER_TIMEOUT_SECONDS": f"{self.a.deadline:g}",
                "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
                "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
                "TRANSFERS_LOG_LEVEL": "INFO",
                # --before: that tree's src/ ahead of this one's (the venv's editable install is a path entry)
                "PYTHONPATH": f"{src}:{ROOT}" if src else str(ROOT),
            }
        )
        return env

    def start(self, name: str, argv: list[str], env: dict[str, str], ready: str) -> Proc:
        proc = Proc(name, argv, env=env, cwd=self.work, log=self.work / f"{name}.log", pidfile=self.pidfile)
        self.procs.append(proc.start())
        proc.wait_http(ready)
        return proc

    def run(self) -> int:
        try:
            return self._run()
        finally:
            for proc in self.procs:
                proc.stop()

    def _run(self) -> int:
        log(f"search bench: work directory {self.work}")
        self.start(
            "partner",
            [
                sys.executable,
                "-m",
                "bench.partner",
                "--ports",
                ",".join(map(str, self.ports)),
                "--hang-ports",
                str(self.hang_port),
                "--latency-ms",
                f"{self.a.latency_ms:g}",
            ],
            self.env(self.a.dsn),
            f"http://127.0.0.1:{self.ports[0]}/healthz",
        )
        apis: dict[str, tuple[Proc, str, dict[str, Path]]] = {}
        variants: list[tuple[str, str | None]] = [("", None)]
        if self.a.before:
            variants = [(" before", str(self.a.before)), (" after", None)]
        for db_label, url in self.dbs.items():
            subprocess.run(
                [str(BIN / "transfers"), "db", "upgrade"],
                env=self.env(url),
                cwd=self.work,
                check=True,
                capture_output=True,
            )
            key = asyncio.run(seed_db(url, self.ports, self.hang_port))
            for suffix, src in variants:
                label = db_label + suffix
                port = free_port()
                api_url = f"http://127.0.0.1:{port}"
                proc = self.start(
                    f"api-{label.replace(' ', '-')}",
                    [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port)],
                    self.env(url, src),
                    api_url + "/healthz",
                )
                files = {
                    case: write_requests(
                        self.work / f"{label.replace(' ', '-')}-{iata}{CURRENCY.get(case, '')}.requests",
                        [Request("POST", SEARCH, key, body(iata, CURRENCY.get(case)))],
                    )
                    for case, (iata, _, _) in CASES.items()
                }
                apis[label] = (proc, api_url, files)
        self.labels = list(apis)
        if self.a.hold:
            print(
                json.dumps(
                    {
                        label: {"url": u, "pid": p.pid, "requests": {c: str(f) for c, f in fs.items()}}
                        for label, (p, u, fs) in apis.items()
                    },
                    indent=2,
                ),
                flush=True,
            )
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            signal.sigwait({signal.SIGINT, signal.SIGTERM})
            return 0
        for _, api_url, files in apis.values():
            for path in files.values():
                wrk(api_url, path, connections=self.a.connections, duration=self.a.warmup)
        figures: dict[tuple[str, str], list[Figure]] = {}
        for round_no in range(self.a.rounds):
            log(f" round {round_no + 1}/{self.a.rounds}, load {load_average()}")
            for label, (proc, api_url, files) in apis.items():
                for case, path in files.items():
                    figure = self.measure(proc, api_url, path)
                    figures.setdefault((label, case), []).append(figure)
                    log(
                        f"  {label} {case}: CPU {figure.cpu_ms:.2f} ms/search, p50 {figure.p50:.1f}, "
                        f"p99 {figure.p99:.1f} ms ({figure.requests} searches, load {figure.load})"
                    )
        self.report(figures)
        return 0

    def measure(self, proc: Proc, url: str, path: Path) -> Figure:
        pid = proc.api_pids()[0]
        before = cpu_seconds(pid)
        result: WrkResult = wrk(url, path, connections=self.a.connections, duration=self.a.duration)
        if result.errors:
            raise RuntimeError(f"{result.errors} errors: {result.raw}")
        spent = cpu_seconds(pid) - before
        return Figure(spent * 1000 / result.requests, result.p50_ms, result.p99_ms, result.requests, load_average())

    def report(self, figures: dict[tuple[str, str], list[Figure]]) -> None:
        latency, deadline = self.a.latency_ms, self.a.deadline * 1000
        lines = [
            f"search bench {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {self.a.connections} searches at a time, "
            f"L = {latency:g} ms, deadline {deadline:g} ms, {self.a.rounds} x {self.a.duration:g} s "
            "(medians of the rounds)",
            "",
            "| database | case | CPU ms/search | per extra partner | p50 over floor | p99 over floor | load |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
        for label in self.labels:
            cpu = {case: statistics.median(f.cpu_ms for f in figures[(label, case)]) for case in CASES}
            for case in CASES:
                fs = figures[(label, case)]
                floor = deadline if CASES[case][2] else latency
                per = f"{(cpu['50 partners'] - cpu['10 partners']) / 40:.3f}" if case == "50 partners" else ""
                p50 = statistics.median(f.p50 for f in fs) - floor
                p99 = statistics.median(f.p99 for f in fs) - floor
                loads = ", ".join(f.load.split()[0] for f in fs)
                lines.append(f"| {label} | {case} | {cpu[case]:.2f} | {per} | {p50:.1f} | {p99:.1f} | {loads} |")
        print("\n".join(lines), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of a throwaway database")
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--hold", action="store_true")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a src/ directory of an older tree (e.g. `git archive <commit> src | tar -x -C DIR`): its API "
        "processes run beside this tree's, measured in the same interleaved rounds",
    )
    parser.add_argument("--quick", action="store_true", help="one round of 3 s runs")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every module
    if args.quick:
        args.duration, args.warmup, args.rounds = 3.0, 1.0, 1
    sys.exit(Bench(args).run())


if __name__ == "__main__":
    main()
