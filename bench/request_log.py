"""The request log's cost (docs/rules/agency-portal.md#request-log): GET booking throughput with
the request log on and off (target: it costs less than 5 %).

    .venv/bin/python -m bench.request_log --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--rounds 5] [--duration 8]
        [--control] [--before DIR]

Two ``transfers serve`` processes (one worker each) on the same PostgreSQL database, identical but for
``TRANSFERS_REQUEST_LOG`` (on / off), answer GET booking for 2 000 bookings of one client (random
reservation numbers, 32 connections, wrk). The machine is shared, so the two are run **interleaved**
(on, off, off, on, ...: each round alternates which goes first) for ``--rounds`` rounds; the figure
is the ratio of the medians, and every round's pair is printed with its own ratio so the noise is
visible beside it. The CPU the serving process spent per request (from ``/proc``) is given too: it is
less sensitive to the machine's load than req/s. The "on" process writes its log to the same
database during its rounds (its batches are part of the cost measured); the rows written are counted
at the end (every request of the "on" rounds should be there, none dropped), with the mean batch the
"on" process wrote (from its ``/metrics``). ``--before DIR`` adds a third process, log on, that runs
``DIR/src`` (an earlier checkout, e.g. ``git worktree add /tmp/before <commit>``), in the same rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import asyncpg

from bench import seed
from bench.procs import Proc, cpu_seconds
from bench.wrkrun import Request, WrkResult, write_requests, wrk
from transfers.clients.models import NewClient
from transfers.clients.service import create_client
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.service import register_partner
from transfers.requestlog import repository
from transfers.requestlog.buffer import RequestLogBuffer

SECRET = "bench-request-log-secret-key"
METRICS_TOKEN = "bench-metrics-token"
BOOKING = "/api/v1/booking-api/booking"
BOOKINGS = 2_000


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def seed_data(dsn: str) -> tuple[str, int]:
    """One client with ``BOOKINGS`` bookings; its key and id."""
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    await asyncio.to_thread(upgrade, url)
    db = Database(url, pool_size=2, application_name="bench-request-log")
    try:
        box = SecretBox(resolve_secret_key(Settings(database_url=dsn, secret_key=SECRET)))
        partner = await register_partner(
            db,
            SystemClock(),
            box,
            name="bench partner (never called)",
            base_url=f"http://127.0.0.1:{free_port()}",
            airports=("LHR",),
            markup_percent=Decimal(0),
            allow_private=True,
            actor="bench",
        )
        made = await create_client(
            db,
            SystemClock(),
            NewClient(name="bench: request log", pay_type="wallet", currency="EUR", opening_balance=Decimal("1000000")),
            actor="bench",
        )
    finally:
        await db.dispose()
    await seed.seed_bookings_pg(
        dsn,
        first=1,
        count=BOOKINGS,
        scale_client=made.client_id,
        other_client=made.client_id,
        partner_id=partner.partner_id,
        targets=False,
        label="bookings",
    )
    return made.api_key, made.client_id


async def component_costs(dsn: str) -> tuple[float, float, float]:
    """The two parts measured alone, steadier than any req/s on a loaded machine: ``record`` (the
    middleware's share of one request) and writing a batch of 500 (the API process's CPU, and the
    wall time including PostgreSQL's work), each per request."""
    buffer = RequestLogBuffer(SystemClock(), capacity=10**6, batch=10**6)
    count = 100_000
    started = time.process_time()
    for _ in range(count):
        buffer.record(1, "GET", BOOKING, 200, "0123456789abcdef0123456789abcdef", None, 0.0012)
    record_us = (time.process_time() - started) / count * 1e6
    entries = buffer.take(count)
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    db = Database(url, pool_size=1, application_name="bench-request-log")
    try:
        rows = 20_000
        cpu, wall = time.process_time(), time.perf_counter()
        for at in range(0, rows, 500):
            await repository.insert_entries(db, entries[at : at + 500])
        write_cpu_us = (time.process_time() - cpu) / rows * 1e6
        write_wall_us = (time.perf_counter() - wall) / rows * 1e6
    finally:
        await db.dispose()
    return record_us, write_cpu_us, write_wall_us


async def logged_rows(dsn: str, client_id: int) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM api_requests WHERE client_id = $1", client_id))
    finally:
        await conn.close()


def batches_written(url: str) -> tuple[float, float]:
    """(batches, requests) the process has written so far, from its ``/metrics``: their ratio is the
    mean batch (the first writer's cost was a writer that wrote ~25 requests per transaction, not 500)."""
    import urllib.request

    found = {"request_log_batches_total": 0.0, "request_log_written_total": 0.0}
    scrape = urllib.request.Request(f"{url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    with urllib.request.urlopen(scrape, timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            name, _, value = line.partition(" ")
            if name in found:
                found[name] = float(value)
    return found["request_log_batches_total"], found["request_log_written_total"]


def run_round(url: str, pid: int, requests_file: Path, duration: float) -> tuple[WrkResult, float]:
    """One wrk run; (its result, the serving process's CPU microseconds per request)."""
    before = cpu_seconds(pid)
    result = wrk(url, requests_file, connections=32, duration=duration)
    used = cpu_seconds(pid) - before
    return result, (used / result.requests * 1e6 if result.requests else float("nan"))


def main_sync(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-request-log-"))
    pidfile = Path(args.pidfile) if args.pidfile else work / "pids"
    key, client_id = asyncio.run(seed_data(args.dsn))
    requests_file = write_requests(
        work / "gets.txt",
        [Request("GET", f"{BOOKING}?reservation_no={seed.reservation_no(n)}", key) for n in range(1, BOOKINGS + 1)],
    )
    base_env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")},
        "TRANSFERS_DATABASE_URL": args.dsn,
        "TRANSFERS_SECRET_KEY": SECRET,
        "TRANSFERS_METRICS_TOKEN": METRICS_TOKEN,  # /metrics as a deployment serves it (docs/operations/security.md)
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_SANDBOX_PARTNER": "0",
        "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
        "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(Path.cwd()),
    }
    servers: dict[str, tuple[Proc, str]] = {}
    variants = [("on", "true", ""), ("off", "true" if args.control else "false", "")]
    if args.before is not None:  # that tree's src/ ahead of this one's (the editable install is a path entry)
        variants.append(("before", "true", f"{args.before.resolve() / 'src'}:"))
    try:
        for name, flag, path_first in variants:
            port = free_port()
            proc = Proc(
                f"request-log-{name}",
                [str(Path(sys.executable).parent / "transfers"), "serve", "--no-worker", "--port", str(port)],
                env={**base_env, "TRANSFERS_REQUEST_LOG": flag, "PYTHONPATH": path_first + base_env["PYTHONPATH"]},
                cwd=work,
                log=work / f"{name}.log",
                pidfile=pidfile,
            ).start()
            url = f"http://127.0.0.1:{port}"
            proc.wait_http(f"{url}/readyz")
            servers[name] = (proc, url)
        for _proc, url in servers.values():  # warm: caches, the pool, the JIT-less interpreter's first runs
            wrk(url, requests_file, connections=32, duration=2)
        names = list(servers)
        results: dict[str, list[tuple[WrkResult, float]]] = {name: [] for name in names}
        load = [os.getloadavg()[0]]
        for round_no in range(args.rounds):
            turn = round_no % len(names)  # who goes first moves every round; every other round reversed
            order = names[turn:] + names[:turn]
            for name in order if round_no % 2 == 0 else order[::-1]:
                proc, url = servers[name]
                results[name].append(run_round(url, proc.pid, requests_file, args.duration))
            on, off = results["on"][-1], results["off"][-1]
            load.append(os.getloadavg()[0])
            before = ""
            if "before" in results:
                then = results["before"][-1]
                before = f"before {then[0].rps:8.1f} req/s ({then[1]:6.1f} µs CPU/req, {then[0].errors} errors)  "
            print(
                f"round {round_no + 1}: on {on[0].rps:8.1f} req/s ({on[1]:6.1f} µs CPU/req, {on[0].errors} errors)  "
                f"off {off[0].rps:8.1f} req/s ({off[1]:6.1f} µs CPU/req, {off[0].errors} errors)  {before}"
                f"on/off {on[0].rps / off[0].rps:6.1%}  load {load[-1]:.1f}",
                flush=True,
            )
        time.sleep(3)  # the "on" process's last batch (written every second)
        batches, written = batches_written(servers["on"][1])
        rows = asyncio.run(logged_rows(args.dsn, client_id))
        on_rps = statistics.median(r.rps for r, _ in results["on"])
        off_rps = statistics.median(r.rps for r, _ in results["off"])
        on_cpu = statistics.median(c for _, c in results["on"])
        off_cpu = statistics.median(c for _, c in results["off"])
        ratios = [a[0].rps / b[0].rps for a, b in zip(results["on"], results["off"], strict=True)]
        cost = 1 - on_rps / off_rps
        print(
            f"GET booking, request log on:  median {on_rps:8.1f} req/s, {on_cpu:6.1f} µs CPU/req "
            f"({args.rounds} rounds of {args.duration:g} s, 32 connections)"
        )
        print(f"GET booking, request log off: median {off_rps:8.1f} req/s, {off_cpu:6.1f} µs CPU/req")
        print(
            f"request log cost: {cost:+.1%} of req/s ({'within' if cost < 0.05 else 'OVER'} 5 %), "
            f"{on_cpu / off_cpu - 1:+.1%} CPU/req; per-round on/off from {min(ratios):.1%} to {max(ratios):.1%} "
            f"(the noise); load average {min(load):.1f}..{max(load):.1f}"
        )
        if "before" in results:
            then_rps = statistics.median(r.rps for r, _ in results["before"])
            then_cpu = statistics.median(c for _, c in results["before"])
            print(
                f"GET booking, request log on as in {args.before}: median {then_rps:8.1f} req/s, {then_cpu:6.1f} µs "
                f"CPU/req: cost {1 - then_rps / off_rps:+.1%} of req/s, {then_cpu / off_cpu - 1:+.1%} CPU/req"
            )
        served_on = sum(r.requests for name in ("on", "before") for r, _ in results.get(name, []))
        print(f"rows logged for the client: {rows} (requests sent with the log on, warm-up included: >= {served_on})")
        print(
            f"the 'on' process wrote {written:.0f} requests in {batches:.0f} batches: "
            f"{written / batches if batches else float('nan'):.0f} per batch (at most 500)"
        )
        if args.control:
            print("(A/A control: the log was on in both processes; every difference above is the machine's noise)")
        record_us, write_cpu_us, write_wall_us = asyncio.run(component_costs(args.dsn))
        print(
            f"alone: record {record_us:.1f} µs CPU/request; a batch of 500 written by COPY {write_cpu_us:.1f} µs "
            f"of the API's CPU and {write_wall_us:.1f} µs wall (PostgreSQL's work included) per request; "
            f"together {(record_us + write_cpu_us) / off_cpu:.1%} of a GET booking's CPU here"
        )
        return 0
    finally:
        for proc, _ in servers.values():
            proc.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of an empty database")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per wrk run")
    parser.add_argument("--pidfile", default="", help="append the PIDs of started processes here (run.sh stops them)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 3 s")
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="a checkout of an earlier version: a third process, log on, runs its src/ (interleaved with on and off)",
    )
    parser.add_argument(
        "--control", action="store_true", help="A/A control: the log on in both processes (shows the noise alone)"
    )
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every bench
    if args.quick:
        args.rounds, args.duration = 2, 3.0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main_sync(args))


if __name__ == "__main__":
    main()
