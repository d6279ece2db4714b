"""Several currencies (docs/rules/fx.md): what converting costs a search, a create and a GET booking.

* a 10-partner search in which every quote is converted (the client searches in GBP, the partners quote
  in EUR) against the same search as quoted (in EUR): CPU of the API process per search (target <= +5 %);
* a create from the converted search (a GBP booking of a EUR ride: the fx object stored, the partner told
  its own EUR price, the GBP wallet debited) against a create as quoted: CPU per create (target: within
  the bench's noise);
* GET booking of a converted booking (its price carries ``fx``) against one as quoted: CPU per GET
  (target: within noise).

Part of ``make bench``; alone, in ~3 minutes:

    .venv/bin/python -m bench.fx_costs --dsn postgresql://postgres@127.0.0.1/throwaway [--rounds 5]

One bench partner process (``bench/partner.py``, 10 ports answering after L = 50 ms, every vehicle in
EUR), one API process on PostgreSQL (``transfers serve --no-worker``, the search bench's settings:
``TRANSFERS_ENVIRONMENT=sandbox``, so the sandbox rates, EUR -> GBP 0.8563), and this tree's ``src``
first on its path. One wallet client holding EUR (its default) and GBP wallets. Calls are sent by wrk, 4
at a time; the cases are interleaved per round (each pair back to back) so the machine's load drift hits
them alike, and each figure is the median over the rounds. CPU is the API process's (``/proc/<pid>/stat``)
per call, read in 10 ms ticks: over a few thousand calls a round that is well under 1 % of a search's and
a create's CPU, and about ±1-2 % of a GET's. The noise between rounds is printed beside each pair (the
spread of the converted case's own rounds): a difference inside it is not a cost.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx
import orjson
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.procs import Proc, cpu_seconds
from bench.return_trips import FLIGHTS, create_body, search_body
from bench.search import load_average, seed_db
from bench.suite import BIN, ROOT, SEARCH, asyncpg_url, free_port, log
from bench.wrkrun import Request, write_requests, wrk

PARTNERS = 10
BOOKING = "/api/v1/booking-api/booking"
GETS = 400  # bookings of each currency the GET cases cycle through
# (as quoted, converted, target): the converted case's CPU against the one as quoted
PAIRS = (
    ("search, EUR as quoted", "search, in GBP (converted)", 5.0),
    ("create, EUR as quoted", "create, in GBP (converted)", None),
    ("GET booking, EUR", "GET booking, GBP (converted)", None),
)
CASES = tuple(case for pair in PAIRS for case in pair[:2])


def searched(currency: str | None) -> dict[str, object]:
    body = search_body(back=False)
    if currency is not None:
        body["currency"] = currency
    return body


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        from bench.search import Bench as SearchBench

        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="transfers-fx-bench-"))
        self.pidfile: Path = args.pidfile or self.work / "pids"
        self.procs: list[Proc] = []
        self.ports = [free_port() for _ in range(PARTNERS)]
        self.hang_port = free_port()
        self._env = SearchBench.env  # the search bench's environment for the API process (same settings)

    def env(self, url: str) -> dict[str, str]:
        """The search bench's settings, with this tree's ``src`` ahead of the venv's editable install."""
        return self._env(self, url, str(ROOT / "src"))  # type: ignore[arg-type]

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
        log(f"fx bench: work directory {self.work}")
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
        api, api_url, files = self._api(url)
        for case in CASES:
            wrk(api_url, files[case], connections=self.a.connections, duration=self.a.warmup)
        cpu: dict[str, list[float]] = {case: [] for case in CASES}
        loads: list[str] = []
        for round_no in range(self.a.rounds):
            loads.append(load_average())
            log(f" round {round_no + 1}/{self.a.rounds}, load {loads[-1]}")
            for case in CASES:
                pid = api.api_pids()[0]
                before = cpu_seconds(pid)
                mode = "cycle" if case.startswith("GET") else "random"
                result = wrk(api_url, files[case], mode=mode, connections=self.a.connections, duration=self.a.duration)
                if result.errors:
                    raise RuntimeError(f"{case}: {result.errors} errors: {result.raw}")
                spent = (cpu_seconds(pid) - before) * 1000 / result.requests
                cpu[case].append(spent)
                log(f"  {case}: CPU {spent:.3f} ms/call ({result.requests} calls)")
        self.report(cpu, loads)
        return 0

    def _api(self, url: str) -> tuple[Proc, str, dict[str, Path]]:
        """The API process, seeded (a GBP wallet topped up beside the EUR one), with the request files."""
        subprocess.run(
            [str(BIN / "transfers"), "db", "upgrade"], env=self.env(url), cwd=self.work, check=True, capture_output=True
        )
        key = asyncio.run(self._seed(url))
        port = free_port()
        api_url = f"http://127.0.0.1:{port}"
        api = self.start(
            "api",
            [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port)],
            self.env(url),
            api_url + "/healthz",
        )
        headers = {"Authorization": f"Bearer {key}"}
        files: dict[str, Path] = {}
        with httpx.Client(base_url=api_url, headers=headers, timeout=30) as http:
            runs: tuple[tuple[str | None, str, str, str], ...] = (
                (None, PAIRS[0][0], PAIRS[1][0], PAIRS[2][0]),
                ("GBP", PAIRS[0][1], PAIRS[1][1], PAIRS[2][1]),
            )
            for currency, search_case, create_case, get_case in runs:
                found = http.post(SEARCH, json=searched(currency)).json()
                first = found["vehicles"][0]
                if (first["fx"] is None) != (currency is None):
                    raise RuntimeError(f"{search_case}: the first vehicle's fx is {first['fx']!r}")
                numbers = []
                for i in range(GETS):
                    made = http.post(BOOKING, json=create_body(found["search_id"], None, f"LH{1000 + i}"))
                    if made.status_code != 200:
                        raise RuntimeError(f"{create_case}: {made.status_code} {made.text[:300]}")
                    numbers.append(made.json()["booking"]["reservation_no"])
                files[search_case] = self._file(
                    search_case, [Request("POST", SEARCH, key, self._json(searched(currency)))]
                )
                files[create_case] = self._file(
                    create_case,
                    [
                        Request(
                            "POST", BOOKING, key, self._json(create_body(found["search_id"], None, f"BA{1000 + i}"))
                        )
                        for i in range(FLIGHTS)
                    ],
                )
                files[get_case] = self._file(
                    get_case, [Request("GET", f"{BOOKING}?reservation_no={number}", key) for number in numbers]
                )
        return api, api_url, files

    async def _seed(self, url: str) -> str:
        from transfers.clients import service as clients
        from transfers.clock import SystemClock
        from transfers.db.engine import Database
        from transfers.wallet import repository as wallets

        key = await seed_db(url, self.ports, self.hang_port)
        db = Database(asyncpg_url(url), pool_size=2)
        try:
            async with db.read() as conn:
                client_id = await wallets_client(conn)
            await clients.top_up(db, SystemClock(), client_id, Decimal("1000000000"), actor="bench", currency="GBP")
            async with db.read() as conn:
                held = {w.currency for w in await wallets.wallets_of_client(conn, client_id)}
            if held != {"EUR", "GBP"}:
                raise RuntimeError(f"the bench client holds {held}")
        finally:
            await db.dispose()
        return key

    def _file(self, case: str, requests: list[Request]) -> Path:
        name = case.replace(" ", "-").replace(",", "").replace("(", "").replace(")", "")
        return write_requests(self.work / f"{name}.requests", requests)

    @staticmethod
    def _json(body: dict[str, object]) -> str:
        return orjson.dumps(body).decode()

    def report(self, cpu: dict[str, list[float]], loads: list[str]) -> None:
        median = {case: statistics.median(values) for case, values in cpu.items()}
        lines = [
            f"fx bench {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, PostgreSQL, {PARTNERS} partners quoting in EUR, "
            f"L = {self.a.latency_ms:g} ms, {self.a.connections} calls at a time, {self.a.rounds} x "
            f"{self.a.duration:g} s (medians of the rounds), load {'; '.join(loads)}",
            "",
            "| case | CPU ms/call | converted against as quoted | noise (spread of the rounds) | target |",
            "|---|---:|---:|---:|---|",
        ]
        for plain, converted, limit in PAIRS:
            change = (median[converted] / median[plain] - 1) * 100
            values = cpu[converted] + cpu[plain]
            # half the spread of both cases' rounds around their median: what a round moves by itself
            noise = (max(values) - min(values)) / statistics.median(values) * 50 if len(cpu[plain]) > 1 else 0.0
            if limit is not None:
                target = f"<= +{limit:g} %: {'met' if change <= limit else 'NOT met'}"
            else:
                target = f"within noise: {'met' if abs(change) <= max(noise, 2.0) else 'NOT met'}"
            lines.append(f"| {plain} | {median[plain]:.3f} | | | |")
            lines.append(f"| {converted} | {median[converted]:.3f} | {change:+.1f} % | ±{noise:.1f} % | {target} |")
        print("\n".join(lines), flush=True)


async def wallets_client(conn: AsyncConnection) -> int:
    """The bench's one wallet client (``seed_db`` makes it): the one holding a GBP wallet."""
    from transfers.db.tables import wallets

    found = (await conn.execute(select(wallets.c.client_id).where(wallets.c.currency == "GBP"))).scalars().all()
    if len(found) != 1:
        raise RuntimeError(f"expected one client with a GBP wallet, found {len(found)}")
    return int(found[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of a throwaway database")
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true", help="two rounds of 3 s runs")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every module
    if args.quick:
        args.duration, args.warmup, args.rounds = 3.0, 1.0, 2
    args.before = None  # the search bench's env() reads it
    sys.exit(Bench(args).run())


if __name__ == "__main__":
    main()
