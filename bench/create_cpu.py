"""CPU and instructions per create (``POST /booking`` on PostgreSQL), in-process.

    .venv/bin/python -m bench.create_cpu --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--src DIR]
        [--warmup 600] [--creates 1000] [--flights 500] [--concurrency 4] [--callgrind]

Why in-process: on a machine shared by several test suites the served figures (``bench.suite``'s CPU
per request) move by 10-20 % between runs, more than the changes they should judge. Here the whole
ASGI app (``transfers.app.create_app``, the same settings as ``make bench``'s API process: no embedded
worker, the flight check at creation on, logs at INFO into a file) is driven by ``app(scope, receive,
send)``, ``--concurrency`` creates at a time on uvloop, against the bench partner (``bench/partner.py``,
one loopback port, a separate process, so its CPU is not counted) and PostgreSQL (likewise). Only
sockets to those two are real; no uvicorn, no HTTP parsing of the requests.

One wallet client, one search (booked from again and again, as ``make bench``'s wallets do); each create
names flight ``BA{1000 + i % flights}`` as ``make bench`` does (``bench.suite.CREATE_FLIGHTS``), so a
create meets a new flight's watch on its first round of flights and an existing one after. The flight
provider's budget is 1 call a minute (``--flight-budget``): ``make bench`` keeps the default 60, which its
creates (hundreds a second on new flights) spend within its first second, so nearly all its checks at
creation find the budget spent; with 60 here the count of real checks per create would follow the run's
wall time (a callgrind run is ~50 times slower: 10-20 times more checks per create than at full speed). The warm-up
(``--warmup`` creates, which with the defaults also makes every flight's watch) is not measured. Then
``--creates`` creates, and the figures per create:

* ``process_time`` (user + system CPU of this process: the app, its partner call, its background flight
  checks, which are waited for before the clock stops);
* with ``--profile FILE``: a ``cProfile`` of the measured creates (``python -m pstats FILE``; its own
  overhead doubles the CPU figure, so read it for where, not how much);
* with ``--callgrind`` (run under ``valgrind --tool=callgrind --instr-atstart=no``): instrumentation is
  switched on for the measured creates only (``CALLGRIND_START_INSTRUMENTATION`` from a tiny C library
  compiled on the fly, ``gcc`` and valgrind's headers), and the instruction count per create is
  ``callgrind``'s total divided by ``--creates`` (``callgrind_annotate`` on the output file gives it
  per C function). Example:

    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/create.cg \\
        .venv/bin/python -m bench.create_cpu --dsn ... --callgrind

``--src DIR``: run another tree's ``src`` (``git archive 5371b7d src | tar -x -C DIR``): it is put first
on ``sys.path`` before anything of ``transfers`` is imported; that tree's migrations make the database.
Every answer is checked (201/200 with a reservation number): a failed create stops the run.

``--gets N``: the same, but every create is warm-up and the measured requests are N ``GET /booking`` of
the bookings just made (4 at a time, round-robin), each answer checked (200 with its reservation number).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import ctypes
import gc
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from bench.asgi import Asgi
from bench.procs import Proc

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-create-cpu-secret"
SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
POINT = {"type": "POINT", "lat": 51.5079, "lng": -0.1281, "name": "Trafalgar Square"}

_CALLGRIND_C = r"""
#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
"""


def callgrind_library(work: Path) -> Any:
    """The three client requests as C functions (they are inline machine code: Python cannot issue them)."""
    source, library = work / "cg.c", work / "cg.so"
    source.write_text(_CALLGRIND_C)
    subprocess.run(["gcc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return ctypes.CDLL(str(library))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def create_body(search_id: str, flight: str) -> bytes:
    return orjson.dumps(
        {
            "search_id": search_id,
            "vehicle_id": 1,
            "suitcase": 1,
            "small_bags": 1,
            "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
            "travel_details": {"flight_number": flight, "extra_requests": None},
        }
    )


async def seed(url: str, port: int, currency: str = "EUR") -> str:
    """One partner (LHR) on the bench partner's port and one wallet client, its wallet in ``currency``
    (the bench partner quotes in EUR: another currency converts every search and create); its API key."""
    from transfers.clients.models import NewClient
    from transfers.clients.service import create_client
    from transfers.clock import SystemClock
    from transfers.db.engine import Database
    from transfers.partners.secrets_box import SecretBox
    from transfers.partners.service import register_partner

    db = Database(url.replace("postgresql://", "postgresql+asyncpg://", 1), pool_size=2)
    try:
        await register_partner(
            db,
            SystemClock(),
            SecretBox(SECRET),
            name="bench-partner",
            base_url=f"http://127.0.0.1:{port}",
            airports=("LHR",),
            markup_percent=Decimal("0"),
            allow_private=True,
            actor="bench",
        )
        client = await create_client(
            db,
            SystemClock(),
            NewClient(name="creates", pay_type="wallet", currency=currency, opening_balance=Decimal("1000000000")),
            actor="bench",
        )
    finally:
        await db.dispose()
    return str(client.api_key)


async def run(args: argparse.Namespace, port: int, cg: Any) -> dict[str, float]:
    from transfers.app import create_app
    from transfers.db.migrate import upgrade

    await asyncio.to_thread(upgrade, args.dsn.replace("postgresql://", "postgresql+asyncpg://", 1))
    key = await seed(args.dsn, port, args.currency)
    app = create_app()
    svc = app.state.services
    client = Asgi(app, key)
    async with app.router.lifespan_context(app):
        pickup = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%dT10:00")
        search = {
            "pickup_datetime": pickup,
            "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
            "dropoff_location": POINT,
            "travelers": {"adult": 2, "children": 0, "infant": 0},
        }
        status, answer = await client.post(SEARCH, orjson.dumps(search))
        if status != 200:
            raise RuntimeError(f"search: {status} {answer[:300]!r}")
        search_id = orjson.loads(answer)["search_id"]
        counter = iter(range(args.warmup + args.creates))
        made: list[str] = []

        async def creates(count: int) -> None:
            async def worker() -> None:
                for _ in range(count // args.concurrency):
                    i = next(counter)
                    status, answer = await client.post(BOOKING, create_body(search_id, f"BA{1000 + i % args.flights}"))
                    if status not in (200, 201) or b'"reservation_no"' not in answer:
                        raise RuntimeError(f"create {i}: {status} {answer[:300]!r}")
                    found = re.search(rb'"reservation_no":"([^"]+)"', answer)
                    if found is not None:
                        made.append(found.group(1).decode())

            await asyncio.gather(*(worker() for _ in range(args.concurrency)))
            await drain(svc)

        async def gets(count: int) -> None:
            turn = iter(range(count))

            async def worker() -> None:
                for i in turn:
                    number = made[i % len(made)]
                    status, answer = await client.get(BOOKING, f"reservation_no={number}".encode())
                    if status != 200 or number.encode() not in answer:
                        raise RuntimeError(f"GET {number}: {status} {answer[:300]!r}")

            await asyncio.gather(*(worker() for _ in range(args.concurrency)))

        await creates(args.warmup)
        if args.gets:
            await creates(args.creates)
            await gets(args.gets // 4)
        gc.collect()
        load = load_average()
        if cg is not None:
            cg.cg_zero()
            cg.cg_start()
        profile = cProfile.Profile() if args.profile else None
        if profile is not None:
            profile.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        await (gets(args.gets) if args.gets else creates(args.creates))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if profile is not None:
            profile.disable()
            profile.dump_stats(args.profile)
        if cg is not None:
            cg.cg_stop()
    return {"cpu_ms": cpu * 1000 / (args.gets or args.creates), "wall_s": wall, "load": float(load.split()[0])}


async def drain(svc: Any) -> None:
    """Wait for the background work the creates started (the flight checks at creation; none at ``5371b7d``)."""
    background = getattr(svc, "background", None)
    if background is not None:
        await background.drain()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="an EMPTY PostgreSQL database (postgresql://...)")
    parser.add_argument("--src", type=Path, help="another tree's src directory (e.g. 5371b7d's)")
    parser.add_argument("--warmup", type=int, default=600)
    parser.add_argument("--creates", type=int, default=1000)
    parser.add_argument("--flights", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--flight-budget", type=int, default=1, help="flight provider calls per minute (the module docstring)"
    )
    parser.add_argument("--gets", type=int, default=0, help="measure this many GET /booking instead of the creates")
    parser.add_argument("--callgrind", action="store_true", help="instrument the measured creates only")
    parser.add_argument(
        "--currency", default="EUR", help="the client's wallet (GBP: every create and GET is of a converted booking)"
    )
    parser.add_argument("--profile", type=Path, help="cProfile the measured creates into this file (pstats)")
    args = parser.parse_args()
    if args.src is not None:
        sys.path.insert(0, str(args.src.resolve()))
    work = Path(tempfile.mkdtemp(prefix="transfers-create-cpu-"))
    cg = callgrind_library(work) if args.callgrind else None
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
    partner = Proc(
        "partner",
        [sys.executable, "-m", "bench.partner", "--ports", str(port), "--latency-ms", "1"],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        log=work / "partner.log",
        pidfile=work / "pids",
    ).start()
    os.environ.update(
        {
            "TRANSFERS_DATABASE_URL": args.dsn,
            "TRANSFERS_SECRET_KEY": SECRET,
            "TRANSFERS_ENVIRONMENT": "sandbox",
            "TRANSFERS_SANDBOX_PARTNER": "0",
            "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
            "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
            "TRANSFERS_PARTNER_TIMEOUT_SECONDS": "30" if args.callgrind else "5",
            "TRANSFERS_PARTNER_CREATE_BUDGET_SECONDS": "30" if args.callgrind else "2",
            "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
            "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
            "TRANSFERS_LOG_LEVEL": "INFO",
            "TRANSFERS_EMBEDDED_WORKER": "0",
            "TRANSFERS_FLIGHT_PROVIDER_MAX_CALLS_PER_MINUTE": str(args.flight_budget),
        }
    )
    real_stdout = sys.stdout
    sys.stdout = (work / "api.log").open("w")  # the access log and the app's lines, as the served process writes them
    try:
        time.sleep(0.5)  # the partner binds its port
        import uvloop

        figures = uvloop.run(run(args, port, cg))
    finally:
        sys.stdout.close()
        sys.stdout = real_stdout
        partner.stop()
    tree = str(args.src) if args.src else "this tree"
    measured = (
        f"{args.gets} GETs after {args.warmup + args.creates} creates"
        if args.gets
        else (f"{args.creates} creates after {args.warmup}")
    )
    print(
        f"{tree}: {measured} in {args.currency} ({args.flights} flights, {args.concurrency} at a time): "
        f"CPU {figures['cpu_ms']:.3f} ms/request, wall {figures['wall_s']:.1f} s, load {figures['load']:.2f}"
        + (" (callgrind: instructions in its output file / creates)" if cg is not None else ""),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
