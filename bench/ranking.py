"""A 10-partner search with the quality ranking and without it (docs/rules/quality.md#ranking): the API
process's CPU per search, on PostgreSQL. Target: the ranking costs at most 3 % more.

    .venv/bin/python -m bench.ranking --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--rounds 5]

Ten bench partners (``bench/partner.py``, one process, answering after L = 20 ms with the same
vehicles at the same prices, so every price is a tie the scores break) serve LHR; each partner has a
stored scorecard (scores 70..96, one ``AT_RISK``, three ``PREFERRED``), so the ranking really
reorders. Two API processes (``transfers serve --no-worker``) on the same database:

* ``with ranking``: the service as shipped (the scores read once a minute, ``rank`` on the outbound
  and return offers, ``quality`` added to every vehicle item);
* ``without``: the same code started with the ranking step replaced by nothing (``rank`` and
  ``label`` answer their input, no score source), i.e. search as it was before the ranking.

Each process is driven by ``wrk`` at 4 searches at a time for ``--duration`` seconds, ``sort`` absent
(price) and ``sort=recommended`` for the ranked one; the rounds are interleaved so drift in the
machine's load hits every case alike; CPU per search is the API process's (``/proc/<pid>/stat``),
the median over the rounds. L is short (20 ms, not the search bench's 200) so each run holds ~1,000
searches rather than ~150: at 200 ms one round's CPU per search moved by +-20 %, more than the
3 % sought. The ranking step alone is also timed in-process (``step_microseconds``): the figure that
does not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import orjson

from bench import seed
from bench.procs import Proc, cpu_seconds
from bench.search import body
from bench.suite import BIN, ROOT, SEARCH, SECRET, asyncpg_url, free_port, log
from bench.wrkrun import Request, write_requests, wrk

PARTNERS = 10
TARGET_PERCENT = 3.0
SCORES = (96, 95, 94, 91, 90, 88, 85, 82, 79, 70)  # 96..94 PREFERRED, 70 AT_RISK
# The "without" process: the ranking step replaced by nothing before the CLI starts the server (one
# process: uvicorn serves in it), so the search runs exactly as it did before the ranking existed.
WITHOUT = (
    "import sys\n"
    "import transfers.search.ranking as ranking\n"
    "ranking.rank = lambda offers, qualities, sort: offers\n"
    "ranking.label = lambda vehicles, offers, qualities: vehicles\n"
    "ranking.register = lambda source: None\n"
    "from transfers.cli.main import main\n"
    "sys.argv[0] = 'transfers'\n"
    "sys.exit(main())\n"
)


async def seed_db(url: str, ports: list[int]) -> str:
    """Ten partners at LHR with their scorecards, one wallet client; its API key."""
    from transfers.clock import SystemClock
    from transfers.db.engine import Database
    from transfers.partners.secrets_box import SecretBox
    from transfers.partners.service import register_partner
    from transfers.quality import repository

    db = Database(asyncpg_url(url), pool_size=2)
    try:
        now = datetime.now(UTC).replace(microsecond=0)
        rows = []
        for i, (port, score) in enumerate(zip(ports, SCORES, strict=True)):
            made = await register_partner(
                db,
                SystemClock(),
                SecretBox(SECRET),
                name=f"bench-ranked-{i + 1:02d}",
                base_url=f"http://127.0.0.1:{port}",
                airports=("LHR",),
                markup_percent=Decimal("0"),
                allow_private=True,
                actor="bench",
            )
            tier = "PREFERRED" if score >= 94 else "AT_RISK" if score < 75 else "STANDARD"
            card = {"partner_id": made.partner_id, "score": score, "tier": tier}
            rows.append({"partner_id": made.partner_id, "airport_iata": "*", "card": card})
        async with db.write() as conn:
            await repository.replace_day(conn, now.date().isoformat(), now, rows, now=now)
        created = await seed.seed_clients(db, {"ranking": Decimal("1000000000")})
    finally:
        await db.dispose()
    return created["ranking"].api_key


def step_microseconds(vehicles_per_partner: int = 2, repeat: int = 20_000) -> float:
    """The ranking step alone, in this process: ``rank`` of the offers of ten partners (equal prices:
    every pair a tie the scores break) and ``label`` of their vehicle items, as one search runs it;
    CPU microseconds a search (the scores' read is a cached dictionary, a minute at a time)."""
    import time

    from transfers.search import ranking
    from transfers.search.offers import Offer

    qualities = {
        pid: ranking.PartnerQuality(score, score >= 94, score < 75) for pid, score in enumerate(SCORES, start=1)
    }
    offers = [
        Offer(n, pid, f"car-{v}", "Toyota", "Corolla", "SEDAN", 4, 2, 2, Decimal("36.00"), Decimal("40.00"), "EUR")
        for n, (pid, v) in enumerate(
            ((pid, v) for v in range(vehicles_per_partner) for pid in range(PARTNERS, 0, -1)), start=1
        )
    ]
    started = time.process_time()
    for _ in range(repeat):
        ranked = ranking.rank(offers, qualities, "price")
        ranking.label([{"vehicle_id": o.vehicle_no} for o in ranked], ranked, qualities)
    return (time.process_time() - started) / repeat * 1e6


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="transfers-ranking-bench-"))
        self.pidfile: Path = args.pidfile or self.work / "pids"
        self.procs: list[Proc] = []
        self.ports = [free_port() for _ in range(PARTNERS)]

    def env(self) -> dict[str, str]:
        """The search bench's settings (``bench/search.py``): no sandbox partner, loopback partners
        allowed, no rate limit in the way."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
        env.update(
            {
                "TRANSFERS_DATABASE_URL": self.a.dsn,
                "TRANSFERS_SECRET_KEY": SECRET,
                "TRANSFERS_ENVIRONMENT": "sandbox",
                "TRANSFERS_SANDBOX_PARTNER": "0",
                "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
                "TRANSFERS_PARTNER_TIMEOUT_SECONDS": f"{self.a.deadline:g}",
                "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
                "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
                "TRANSFERS_LOG_LEVEL": "WARNING",
                "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}",  # this tree's code, not the venv's editable install
            }
        )
        return env

    def start(self, name: str, argv: list[str], ready: str) -> Proc:
        proc = Proc(name, argv, env=self.env(), cwd=self.work, log=self.work / f"{name}.log", pidfile=self.pidfile)
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
        log(f"ranking bench: work directory {self.work}")
        partner_argv = [sys.executable, "-m", "bench.partner", "--ports", ",".join(map(str, self.ports))]
        partner_argv += ["--latency-ms", f"{self.a.latency_ms:g}"]
        self.start("partner", partner_argv, f"http://127.0.0.1:{self.ports[0]}/healthz")
        subprocess.run(
            [str(BIN / "transfers"), "db", "upgrade"], env=self.env(), cwd=self.work, check=True, capture_output=True
        )
        key = asyncio.run(seed_db(self.a.dsn, self.ports))
        price = write_requests(self.work / "price.requests", [Request("POST", SEARCH, key, body("LHR"))])
        recommended_body = orjson.dumps({**orjson.loads(body("LHR")), "sort": "recommended"}).decode()
        recommended = write_requests(
            self.work / "recommended.requests", [Request("POST", SEARCH, key, recommended_body)]
        )
        apis = {}
        for label, argv in (
            ("with ranking", [str(BIN / "transfers")]),
            ("without", [sys.executable, "-c", WITHOUT]),
        ):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            proc = self.start(
                label.replace(" ", "-"), [*argv, "serve", "--no-worker", "--port", str(port)], url + "/healthz"
            )
            apis[label] = (proc, url)
        cases = {
            "with ranking, sort=price": (apis["with ranking"], price),
            "with ranking, sort=recommended": (apis["with ranking"], recommended),
            "without ranking": (apis["without"], price),
        }
        first = self._answer(apis["with ranking"][1], key)
        assert all("quality" in v for v in first["vehicles"]), "the ranked process labels every vehicle"
        plain = self._answer(apis["without"][1], key)
        assert all("quality" not in v for v in plain["vehicles"]), "the other one runs without the ranking"
        for (_, url), path in cases.values():
            wrk(url, path, connections=self.a.connections, duration=self.a.warmup)
        cpu: dict[str, list[float]] = {case: [] for case in cases}
        for round_no in range(self.a.rounds):
            log(f" round {round_no + 1}/{self.a.rounds}, load {Path('/proc/loadavg').read_text().split()[0]}")
            for case, ((proc, url), path) in cases.items():
                pid = proc.api_pids()[0]
                before = cpu_seconds(pid)
                result = wrk(url, path, connections=self.a.connections, duration=self.a.duration)
                if result.errors:
                    raise RuntimeError(f"{result.errors} errors: {result.raw}")
                cpu[case].append((cpu_seconds(pid) - before) * 1000 / result.requests)
                log(f"  {case}: CPU {cpu[case][-1]:.3f} ms/search ({result.requests} searches)")
        base = statistics.median(cpu["without ranking"])
        lines = [
            f"ranking bench {datetime.now(UTC):%Y-%m-%d %H:%M} UTC: {PARTNERS} partners, {self.a.connections} searches "
            f"at a time, {self.a.rounds} x {self.a.duration:g} s (medians of the rounds; CPU of the API process)",
            "",
            "| case | CPU ms/search | vs without | rounds |",
            "|---|---:|---:|---|",
        ]
        for case, figures in cpu.items():
            median = statistics.median(figures)
            extra = f"{(median / base - 1) * 100:+.1f} %" if case != "without ranking" else ""
            lines.append(f"| {case} | {median:.3f} | {extra} | {', '.join(f'{f:.3f}' for f in figures)} |")
        ranked = statistics.median(cpu["with ranking, sort=price"])
        step = step_microseconds()
        lines.append(
            f"\nthe ranking step alone (rank + label, 10 partners x 2 vehicles, in-process): {step:.1f} us a search "
            f"= {step / 10 / ranked:.2f} % of a ranked search's CPU"
        )
        verdict = "within" if (ranked / base - 1) * 100 <= TARGET_PERCENT else "OVER"
        lines.append(f"\nthe ranking (sort=price) {verdict} the +{TARGET_PERCENT:g} % target")
        print("\n".join(lines), flush=True)
        return 0

    def _answer(self, url: str, key: str) -> dict[str, object]:
        import urllib.request

        request = urllib.request.Request(
            url + SEARCH,
            data=body("LHR").encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # loopback, the bench's own server
            found: dict[str, object] = orjson.loads(answer.read())
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of a throwaway database")
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--deadline", type=float, default=1.0)
    parser.add_argument("--quick", action="store_true", help="one round of 3 s runs")
    args, _ = parser.parse_known_args()
    if args.quick:
        args.rounds, args.duration, args.warmup = 1, 3.0, 1.0
    sys.exit(Bench(args).run())


if __name__ == "__main__":
    main()
