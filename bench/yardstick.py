"""The search overhead against a plain fan-out, loaded in the same run (the yardstick).

    .venv/bin/python -m bench.yardstick              # one run, about 3 minutes
    .venv/bin/python -m bench.yardstick --runs 3     # medians of three runs

What it starts, each in its own session and stopped on the way out (also on an error or Ctrl-C):

* ONE partner process (``bench/partner.py --vehicles 3 --record-holds``): ten partners answering
  ``POST /booking/search`` after exactly L = 200 ms with three vehicles, nine that answer at once and
  one that never answers;
* the service, ``transfers serve --workers 1``, rate limit lifted, ``TRANSFERS_PARTNER_TIMEOUT_SECONDS=1``,
  on a SQLite file and on a throwaway PostgreSQL database (created with ``createdb`` and dropped at
  the end); the partners registered through the service's own use case (``register_partner``, 10 %
  markup), one wallet client;
* the plain fan-out (``bench/fanout.py``: FastAPI, one uvicorn worker, uvloop, httptools, one shared
  aiohttp session) asking the same partners of the same process.

Each run loads, one after the other and with the same request: the service on SQLite, the fan-out,
the service on PostgreSQL, the fan-out again (each side's ratio is taken against the fan-out window
that follows it), every window ``wrk -t2 -c4`` for 10 s after a 3 s warm-up. Then the hanging case:
the nine instant partners and the hanging one, on each of the three. Overhead is the latency minus
L (minus the 1 s deadline in the hanging case); the partners' own hold (request read to answer
written, in the partner process) is printed beside it, since the latency includes their lateness.
docs/operations/performance.md#yardstick says how to read the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import orjson

from bench import seed
from bench.procs import Proc, cpu_seconds
from bench.suite import BIN, ROOT, SEARCH, SECRET, asyncpg_url, log
from bench.wrkrun import Request, write_requests, wrk

GOOD, INSTANT = 10, 9
TEN, HANG = "LHR", "AMS"  # the ten 200 ms partners; the nine instant ones and the hanging one
POINT = {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"}
SERVICE_TARGETS = ("SQLite", "PostgreSQL")


@dataclass
class Window:
    """One measured wrk window."""

    target: str
    case: str
    p50_ms: float
    p99_ms: float
    overhead_p50: float
    overhead_p99: float
    searches: int
    cpu_ms: float  # the serving process's CPU per search
    hold_p50: float | None
    hold_p99: float | None
    load: str


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (each socket held until all are picked, so none comes twice)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def body(iata: str) -> str:
    pickup = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT10:00")
    return orjson.dumps(
        {
            "pickup_datetime": pickup,
            "pickup_location": {"type": "AIRPORT", "iata_code": iata},
            "dropoff_location": POINT,
            "travelers": {"adult": 2, "children": 0, "infant": 0},
        }
    ).decode()


async def seed_service(url: str, good: list[int], instant: list[int], hang: int) -> str:
    """The partners (LHR: the ten 200 ms ones; AMS: the nine instant ones and the hanging one) and
    one wallet client, through the service's own use cases. Returns the client's API key."""
    from transfers.clock import SystemClock
    from transfers.db.engine import Database
    from transfers.partners.secrets_box import SecretBox
    from transfers.partners.service import register_partner

    db = Database(asyncpg_url(url), pool_size=2)
    box = SecretBox(SECRET)
    partners = [(p, TEN) for p in good] + [(p, HANG) for p in [*instant, hang]]
    try:
        for i, (port, airport) in enumerate(partners):
            await register_partner(
                db,
                SystemClock(),
                box,
                name=f"yardstick-partner-{i + 1:02d}",
                base_url=f"http://127.0.0.1:{port}",
                airports=(airport,),
                markup_percent=Decimal("10"),
                allow_private=True,
                actor="bench",
            )
        created = await seed.seed_clients(db, {"yardstick": Decimal("1000000000")})
    finally:
        await db.dispose()
    return created["yardstick"].api_key


class Yardstick:
    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="transfers-yardstick-"))
        self.pidfile: Path = args.pidfile or self.work / "pids"
        self.procs: list[Proc] = []
        ports = free_ports(GOOD + INSTANT + 4)
        self.good, self.instant, self.hang = ports[:GOOD], ports[GOOD : GOOD + INSTANT], ports[GOOD + INSTANT]
        self.api_ports = ports[GOOD + INSTANT + 1 :]  # SQLite, PostgreSQL, the fan-out
        self.pg_db = f"yardstick_{datetime.now(UTC):%Y%m%d%H%M%S}_{os.getpid()}"
        self.pg_created = False
        # target -> (process, base URL, {case: requests file}, search path)
        self.targets: dict[str, tuple[Proc, str, dict[str, Path]]] = {}

    # --- processes -------------------------------------------------------------------------------

    def env(self, url: str = "") -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSFERS_", "BENCH_"))}
        env.update(
            {
                "TRANSFERS_DATABASE_URL": url,
                "TRANSFERS_SECRET_KEY": SECRET,
                "TRANSFERS_ENVIRONMENT": "sandbox",
                "TRANSFERS_SANDBOX_PARTNER": "0",
                "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
                "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
                "TRANSFERS_PARTNER_TIMEOUT_SECONDS": "1",
                "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
                "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
                "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            }
        )
        if not url:
            del env["TRANSFERS_DATABASE_URL"]
        return env

    def start(self, name: str, argv: list[str], env: dict[str, str], ready: str) -> Proc:
        proc = Proc(name, argv, env=env, cwd=self.work, log=self.work / f"{name}.log", pidfile=self.pidfile)
        self.procs.append(proc.start())
        proc.wait_http(ready)
        return proc

    def pg_url(self) -> str:
        return f"postgresql://{self.a.pguser}@{self.a.pghost}/{self.pg_db}"

    def run(self) -> int:
        done = False
        try:
            code = self._run()
            done = True
            return code
        finally:
            for proc in reversed(self.procs):
                proc.stop()
            if self.pg_created:
                subprocess.run(
                    ["dropdb", "-h", self.a.pghost, "-U", self.a.pguser, "--if-exists", "--force", self.pg_db],
                    check=False,
                    capture_output=True,
                )
            if done:
                shutil.rmtree(self.work, ignore_errors=True)
            else:
                log(f"yardstick: stopped early; the processes' logs stay in {self.work}")

    def _start_all(self) -> None:
        ports = ",".join(map(str, self.good))
        self.start(
            "partner",
            [
                *(sys.executable, "-m", "bench.partner", "--ports", ports),
                *("--instant-ports", ",".join(map(str, self.instant)), "--hang-ports", str(self.hang)),
                *("--latency-ms", f"{self.a.latency_ms:g}", "--vehicles", str(self.a.vehicles), "--record-holds"),
            ],
            self.env(),
            f"http://127.0.0.1:{self.good[0]}/healthz",
        )
        made = subprocess.run(
            ["createdb", "-h", self.a.pghost, "-U", self.a.pguser, self.pg_db],
            capture_output=True,
            text=True,
            check=False,
        )
        if made.returncode != 0:
            raise RuntimeError(f"createdb {self.pg_db} failed: {made.stderr.strip()}")
        self.pg_created = True
        urls = {"SQLite": f"sqlite:///{self.work / 'yardstick.sqlite3'}", "PostgreSQL": self.pg_url()}
        for target, url in urls.items():
            subprocess.run(
                [str(BIN / "transfers"), "db", "upgrade"],
                env=self.env(url),
                cwd=self.work,
                check=True,
                capture_output=True,
            )
            key = asyncio.run(seed_service(url, self.good, self.instant, self.hang))
            port = self.api_ports[len(self.targets)]
            base = f"http://127.0.0.1:{port}"
            proc = self.start(
                f"service-{target}",
                [str(BIN / "transfers"), "serve", "--workers", "1", "--port", str(port), *self.a.serve_args],
                self.env(url),
                base + "/healthz",
            )
            self.targets[target] = (proc, base, self.requests(target, SEARCH, key))
        partners = {
            TEN: [f"http://127.0.0.1:{p}" for p in self.good],
            HANG: [f"http://127.0.0.1:{p}" for p in [*self.instant, self.hang]],
        }
        port = self.api_ports[2]
        base = f"http://127.0.0.1:{port}"
        env = self.env() | {"BENCH_FANOUT_PARTNERS": json.dumps(partners)}
        proc = self.start(
            "fan-out",
            [
                *(str(BIN / "uvicorn"), "--factory", "bench.fanout:create_app", "--port", str(port)),
                *("--loop", "uvloop", "--http", "httptools", "--workers", "1"),
                *("--no-access-log", "--log-level", "warning"),
            ],
            env,
            base + "/healthz",
        )
        self.targets["fan-out"] = (proc, base, self.requests("fan-out", "/search", ""))
        for target, (_, base, files) in self.targets.items():
            self.check(target, base, files)

    def requests(self, target: str, path: str, key: str) -> dict[str, Path]:
        return {
            case: write_requests(self.work / f"{target}-{case}.requests", [Request("POST", path, key, body(iata))])
            for case, iata in (("10 partners", TEN), ("hanging", HANG))
        }

    def check(self, target: str, base: str, files: dict[str, Path]) -> None:
        """One search of each case answers 200 with every offer the partners make (30, then 27)."""
        for case, path in files.items():
            method, url_path, key, text = path.read_text().rstrip("\n").split("\t")
            headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {key}"} if key else {})
            request = urllib.request.Request(base + url_path, data=text.encode(), headers=headers, method=method)
            with urllib.request.urlopen(request, timeout=10) as answer:
                vehicles = len(json.loads(answer.read())["vehicles"])
            expected = (GOOD if case == "10 partners" else INSTANT) * self.a.vehicles
            if vehicles != expected:
                raise RuntimeError(f"{target} {case}: {vehicles} offers, expected {expected}")

    # --- measuring -------------------------------------------------------------------------------

    def holds(self) -> dict[str, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.good[0]}/bench/holds", timeout=5) as answer:
            return dict(json.loads(answer.read()))

    def window(self, target: str, case: str, *, warmup: float) -> Window:
        proc, base, files = self.targets[target]
        path, floor = files[case], self.a.latency_ms if case == "10 partners" else 1000.0
        if warmup:
            wrk(base, path, threads=2, connections=self.a.connections, duration=warmup)
        self.holds()  # forget the warm-up's
        pid = proc.api_pids()[0]
        before = cpu_seconds(pid)
        result = wrk(base, path, threads=2, connections=self.a.connections, duration=self.a.duration, count=True)
        spent = cpu_seconds(pid) - before
        held = self.holds()
        if result.errors or not result.requests:
            raise RuntimeError(
                f"{target} {case}: {result.errors} errors ({result.raw.get('s4xx')} 4xx, {result.raw.get('s5xx')} 5xx;"
                f" its log: {proc.log}): {result.raw}"
            )
        figure = Window(
            target,
            case,
            result.p50_ms,
            result.p99_ms,
            result.p50_ms - floor,
            result.p99_ms - floor,
            result.requests,
            spent * 1000 / result.requests,
            held.get("p50_ms") if case == "10 partners" else None,
            held.get("p99_ms") if case == "10 partners" else None,
            load_average(),
        )
        hold = f", partners' hold {figure.hold_p50:.1f} / {figure.hold_p99:.1f} ms" if figure.hold_p50 else ""
        log(
            f"  {target} {case}: overhead p50 {figure.overhead_p50:.1f}, p99 {figure.overhead_p99:.1f} ms, "
            f"{figure.searches} searches, CPU {figure.cpu_ms:.2f} ms/search{hold}, load {figure.load}"
        )
        return figure

    def one_run(self) -> list[Window]:
        order = ["SQLite", "fan-out", "PostgreSQL", "fan-out"]
        windows = [self.window(target, "10 partners", warmup=self.a.warmup) for target in order]
        if not self.a.no_hanging:
            windows += [self.window(t, "hanging", warmup=self.a.hanging_warmup) for t in (*SERVICE_TARGETS, "fan-out")]
        return windows

    def _run(self) -> int:
        log(f"yardstick: work directory {self.work}, load {load_average()}")
        self._start_all()
        runs: list[list[Window]] = []
        for number in range(self.a.runs):
            log(f" run {number + 1}/{self.a.runs}, load {load_average()}")
            runs.append(self.one_run())
        print(report(runs, self.a), flush=True)
        if self.a.json:
            self.a.json.write_text(json.dumps([[asdict(w) for w in run] for run in runs], indent=1))
        return 0


# --- the report ----------------------------------------------------------------------------------


def pairs(run: list[Window]) -> dict[str, tuple[Window, Window]]:
    """Each database's 10-partner window with the fan-out window loaded right after it."""
    ten = [w for w in run if w.case == "10 partners"]
    return {ten[i].target: (ten[i], ten[i + 1]) for i in (0, 2)}


def report(runs: list[list[Window]], a: argparse.Namespace) -> str:
    med = statistics.median
    n = len(runs)
    title = f"median of {n} runs" if n > 1 else "one run"
    setup = f", {a.vehicles} vehicles" + (", serve --no-worker" if a.serve_args else "")
    lines = [
        f"yardstick {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {title}, wrk -t2 -c{a.connections} "
        f"{a.duration:g} s after {a.warmup:g} s, L = {a.latency_ms:g} ms{setup}, load {load_average()}",
        "",
        "| 10 partners | SQLite | PostgreSQL |",
        "|---|---|---|",
    ]

    def cell(target: str, pick: str) -> str:
        per_run = [pairs(run)[target] for run in runs]
        svc = [p[0] for p in per_run]
        fan = [p[1] for p in per_run]
        if pick == "service":
            return f"{med(w.overhead_p50 for w in svc):.1f} / {med(w.overhead_p99 for w in svc):.1f} ms"
        if pick == "fan-out":
            return f"{med(w.overhead_p50 for w in fan):.1f} / {med(w.overhead_p99 for w in fan):.1f} ms"
        if pick == "ratio":
            r50 = [s.overhead_p50 / f.overhead_p50 for s, f in zip(svc, fan, strict=True)]
            r99 = [s.overhead_p99 / f.overhead_p99 for s, f in zip(svc, fan, strict=True)]
            spread = f" (runs {', '.join(f'{x:.2f}' for x in r50)})" if n > 1 else ""
            return f"{med(r50):.2f}x / {med(r99):.2f}x{spread}"
        if pick == "cpu":
            return f"{med(w.cpu_ms for w in svc):.2f} / {med(w.cpu_ms for w in fan):.2f} ms"
        if pick == "hold":
            held = [w for w in (*svc, *fan) if w.hold_p50 is not None and w.hold_p99 is not None]
            if not held:
                return "-"
            return f"{med(w.hold_p50 for w in held if w.hold_p50):.1f} / {max(w.hold_p99 or 0 for w in held):.1f} ms"
        return f"{med(w.searches for w in svc):.0f} / {med(w.searches for w in fan):.0f}"

    for label, pick in (
        ("the service's overhead p50 / p99", "service"),
        ("the fan-out's overhead p50 / p99 (window after it)", "fan-out"),
        ("ratio service / fan-out, p50 / p99", "ratio"),
        ("CPU per search, service / fan-out", "cpu"),
        ("partners' hold p50 / worst p99", "hold"),
        ("searches in the window, service / fan-out", "searches"),
    ):
        lines.append(f"| {label} | {cell('SQLite', pick)} | {cell('PostgreSQL', pick)} |")
    hanging = [w for run in runs for w in run if w.case == "hanging"]
    if hanging:
        lines += ["", "| 9 instant + 1 hanging: latency - 1,000 ms, p50 / p99 | |", "|---|---|"]
        for target in (*SERVICE_TARGETS, "fan-out"):
            ws = [w for w in hanging if w.target == target]
            name = f"the service, {target}" if target in SERVICE_TARGETS else "the fan-out"
            lines.append(
                f"| {name} | {med(w.overhead_p50 for w in ws):+.1f} / {med(w.overhead_p99 for w in ws):+.1f} ms |"
            )
    loads = sorted({w.load.split()[0] for run in runs for w in run})
    lines += ["", f"load average (1 min) seen during the windows: {loads[0]}-{loads[-1]}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs; the figures are their medians")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured window")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of wrk before each 10-partner window")
    parser.add_argument("--hanging-warmup", type=float, default=2.0, help="the same before each hanging window")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=200.0, help="the ten partners' L")
    parser.add_argument("--no-hanging", action="store_true", help="skip the hanging-partner case")
    parser.add_argument("--pghost", default=os.environ.get("BENCH_PGHOST", "127.0.0.1"))
    parser.add_argument("--pguser", default=os.environ.get("BENCH_PGUSER", "postgres"))
    # bench.search's setup, to compare the two (docs/operations/performance.md#two-probes)
    parser.add_argument("--vehicles", type=int, choices=(2, 3), default=3, help="vehicles in a partner's answer")
    parser.add_argument("--no-worker", dest="serve_args", action="store_const", const=["--no-worker"], default=[])
    parser.add_argument("--json", type=Path, default=None, help="also write every window here")
    parser.add_argument("--pidfile", type=Path, default=None, help="append the PIDs started (bench/run.sh's trap)")
    parser.add_argument("--quick", action="store_true", help="one run of 3 s windows (checks the probe works)")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every module
    if args.quick:
        args.runs, args.duration, args.warmup, args.hanging_warmup = 1, 3.0, 1.0, 0.0
    if args.runs < 1 or args.duration <= 0:
        parser.error("--runs must be >= 1 and --duration > 0")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed: apt-get install wrk (bench/run.sh does)")
    started = time.monotonic()
    # SIGTERM ends the run like Ctrl-C: through ``run``'s ``finally``, which stops what it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    code = Yardstick(args).run()
    log(f"yardstick done in {time.monotonic() - started:.0f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
