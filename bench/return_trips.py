"""Return trips (docs/rules/return-trips.md): what a return costs against the one-way call.

* a return search (``return_datetime``: both directions in one fan-out) against a one-way search with
  the same 10 partners: CPU of the API process per search (target <= 2x);
* creating a pair (``return_vehicle_id``: two bookings in one transaction, two partner creates)
  against one create: CPU per call (target <= 1.6x). On PostgreSQL one create is the frozen
  one-statement fast path (``bookings/fast_paths.py``) and the pair that same statement once per
  leg in one transaction (since 2026-11-26; before, the general path); the same two calls are also
  measured on SQLite, where both take the general path (for reference: what the pair costs against
  one create written the same way).

Part of ``make bench``; alone, in ~2 minutes:

    .venv/bin/python -m bench.return_trips --dsn postgresql://postgres@127.0.0.1/throwaway [--rounds 3]

One bench partner process (``bench/partner.py``, 10 ports answering after L = 50 ms), one API process
on PostgreSQL and one on a SQLite file (``transfers serve --no-worker``). Calls are sent by wrk, 4 at
a time; the cases are interleaved per round so the machine's load drift hits them alike, and each figure is the median
over the rounds. CPU is the API process's (``/proc/<pid>/stat``) per call; the load average is printed
beside each round (the machine is shared: read the ratios, not the absolute figures).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson

from bench.procs import Proc, cpu_seconds
from bench.search import POINT, load_average, seed_db
from bench.suite import BIN, SEARCH, free_port, log
from bench.wrkrun import Request, write_requests, wrk

PARTNERS = 10
BOOKING = "/api/v1/booking-api/booking"
CASES = (
    "one-way search",
    "return search",
    "one create",
    "pair create",
    "one create, SQLite",
    "pair create, SQLite",
)
TARGETS = {"return search": ("one-way search", 2.0), "pair create": ("one create", 1.6)}
# Not targets: the pair against one create when both take the general path (SQLite has no fast path).
REFERENCES = {"pair create, SQLite": "one create, SQLite"}


def search_body(*, back: bool) -> dict[str, object]:
    lat, lng, name = POINT
    day = datetime.now(UTC) + timedelta(days=3)
    body: dict[str, object] = {
        "pickup_datetime": day.strftime("%Y-%m-%dT10:00"),
        "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
        "dropoff_location": {"type": "POINT", "lat": lat, "lng": lng, "name": name},
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }
    if back:
        body["return_datetime"] = (day + timedelta(days=7)).strftime("%Y-%m-%dT18:00")
    return body


FLIGHTS = 2000  # distinct flight numbers the creates cycle through (see ``_api``)


def create_body(search_id: str, return_vehicle_id: str | None, flight: str = "BA117") -> dict[str, object]:
    body: dict[str, object] = {
        "search_id": search_id,
        "vehicle_id": 1,
        "suitcase": 1,
        "small_bags": 0,
        "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
        "travel_details": {"flight_number": flight, "extra_requests": None},
    }
    if return_vehicle_id is not None:
        body["return_vehicle_id"] = int(return_vehicle_id)
    return body


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        from bench.search import Bench as SearchBench

        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="transfers-return-bench-"))
        self.pidfile: Path = args.pidfile or self.work / "pids"
        self.procs: list[Proc] = []
        self.ports = [free_port() for _ in range(PARTNERS)]
        self.hang_port = free_port()
        self._env = SearchBench.env  # the search bench's environment for the API process (same settings)

    def env(self, url: str) -> dict[str, str]:
        """``--before``: every process of this run on that src/ tree (run before and after alternately)."""
        return self._env(self, url, str(self.a.before) if self.a.before else None)  # type: ignore[arg-type]

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
        log(f"return-trip bench: work directory {self.work}")
        url = self.a.dsn
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
            self.env(url),
            f"http://127.0.0.1:{self.ports[0]}/healthz",
        )
        apis: dict[str, tuple[Proc, str]] = {}
        files: dict[str, Path] = {}
        for db, db_url in (("", url), (", SQLite", f"sqlite:///{self.work / 'return.sqlite3'}")):
            api, api_url, db_files = self._api(db_url, db)
            for case, path in db_files.items():
                apis[case] = (api, api_url)
                files[case] = path
        for case, path in files.items():
            wrk(apis[case][1], path, connections=self.a.connections, duration=self.a.warmup)
        cpu: dict[str, list[float]] = {case: [] for case in CASES}
        p50: dict[str, list[float]] = {case: [] for case in CASES}
        loads: list[str] = []
        for round_no in range(self.a.rounds):
            loads.append(load_average())
            log(f" round {round_no + 1}/{self.a.rounds}, load {loads[-1]}")
            for case in CASES:
                api, api_url = apis[case]
                pid = api.api_pids()[0]
                before = cpu_seconds(pid)
                result = wrk(api_url, files[case], connections=self.a.connections, duration=self.a.duration)
                if result.errors:
                    raise RuntimeError(f"{case}: {result.errors} errors: {result.raw}")
                spent = (cpu_seconds(pid) - before) * 1000 / result.requests
                cpu[case].append(spent)
                p50[case].append(result.p50_ms)
                log(f"  {case}: CPU {spent:.2f} ms/call, p50 {result.p50_ms:.1f} ms ({result.requests} calls)")
        self.report(cpu, p50, loads)
        return 0

    def _api(self, url: str, suffix: str) -> tuple[Proc, str, dict[str, Path]]:
        """An API process on ``url``, seeded, and the request files of its cases (those named with ``suffix``)."""
        subprocess.run(
            [str(BIN / "transfers"), "db", "upgrade"], env=self.env(url), cwd=self.work, check=True, capture_output=True
        )
        key = asyncio.run(seed_db(url, self.ports, self.hang_port))
        port = free_port()
        api_url = f"http://127.0.0.1:{port}"
        api = self.start(
            "api" + suffix.replace(", ", "-"),
            [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port)],
            self.env(url),
            api_url + "/healthz",
        )
        # One search of each kind to book from (a search may be booked from many times until it expires).
        headers = {"Authorization": f"Bearer {key}"}
        one_way = httpx.post(api_url + SEARCH, json=search_body(back=False), headers=headers, timeout=30).json()
        both = httpx.post(api_url + SEARCH, json=search_body(back=True), headers=headers, timeout=30).json()
        back_id = both["return_vehicles"][0]["vehicle_id"]
        bodies = {
            "one-way search": (SEARCH, search_body(back=False)),
            "return search": (SEARCH, search_body(back=True)),
            "one create": (BOOKING, create_body(one_way["search_id"], None)),
            "pair create": (BOOKING, create_body(both["search_id"], back_id)),
        }
        # Each create names one of FLIGHTS flights (a watched one: each booking takes its watch, due now):
        # with one flight for all, the watch's first check that every create starts in the background
        # (``flight_watch.check_new``) walks every booking made so far on it, a cost that grows through the
        # run and was 31 % of the process's CPU in a profile of the one-create case.
        files = {
            case + suffix: write_requests(
                self.work / f"{(case + suffix).replace(' ', '-').replace(',', '')}.requests",
                [
                    Request("POST", path, key, orjson.dumps(body).decode())
                    for body in (
                        [body]
                        if path == SEARCH
                        else [{**body, "travel_details": {"flight_number": f"BA{1000 + i}"}} for i in range(FLIGHTS)]
                    )
                ],
            )
            for case, (path, body) in bodies.items()
            if case + suffix in CASES
        }
        return api, api_url, files

    def report(self, cpu: dict[str, list[float]], p50: dict[str, list[float]], loads: list[str]) -> None:
        median = {case: statistics.median(values) for case, values in cpu.items()}
        lines = [
            f"return-trip bench {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, PostgreSQL (and SQLite), {PARTNERS} partners, "
            f"L = {self.a.latency_ms:g} ms, {self.a.connections} calls at a time, {self.a.rounds} x "
            f"{self.a.duration:g} s (medians of the rounds), load {'; '.join(loads)}",
            "",
            "| case | CPU ms/call | p50 ms | ratio | target |",
            "|---|---:|---:|---:|---|",
        ]
        for case in CASES:
            ratio, target = "", ""
            if case in TARGETS:
                base, limit = TARGETS[case]
                value = median[case] / median[base]
                ratio = f"{value:.2f}x {base}"
                target = f"<= {limit:g}x: {'met' if value <= limit else 'NOT met'}"
            elif case in REFERENCES:
                ratio = f"{median[case] / median[REFERENCES[case]]:.2f}x {REFERENCES[case]}"
                target = "(reference: both on the general path)"
            lines.append(f"| {case} | {median[case]:.2f} | {statistics.median(p50[case]):.1f} | {ratio} | {target} |")
        print("\n".join(lines), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of a throwaway database")
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a src/ directory of an older tree (`git archive <commit> src | tar -x -C DIR`, then DIR/src): "
        "this whole run's processes run it (until 2026-11-26 this option was ignored here)",
    )
    parser.add_argument("--quick", action="store_true", help="one round of 3 s runs")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every module
    if args.quick:
        args.duration, args.warmup, args.rounds = 3.0, 1.0, 1
    sys.exit(Bench(args).run())


if __name__ == "__main__":
    main()
