"""Driver positions ingested (docs/rules/ride.md#positions): positions per second one API
process records through ``POST /api/v1/reverse/booking/positions``, on PostgreSQL, in batches of 10
and of 1.

    .venv/bin/python -m bench.ride_positions --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 200] [--quick]

Seeds ``--bookings`` APPROVED bookings of one partner through the use cases (search, create, the
reverse API's approval, the driver's ``DRIVER_DEPARTED_TO_PICKUP``), with their pickup moved to 30
minutes from now (positions are accepted from 2 h before pickup), starts ``transfers serve
--no-worker`` (one process, uvicorn) and runs wrk (2 threads, 32 connections) over batches for the
bookings at random, each batch's positions with their own times (about half the batches carry a
position newer than the booking's shown one, which is then replaced). No client endpoint names
``booking.driver_position`` (the usual case: no push is written). Target: >= 1,000 positions/s in
batches of 10. Prints positions/s, requests/s, p50/p99 and the load average at the start and end of
each run (the machine is shared: the figure is this machine's under that load, not the code's bound).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import update

from bench.procs import Proc
from bench.tracking_page import COMPANY, SECRET, free_port
from bench.tracking_page import seed as seed_tracking
from bench.wrkrun import Request, write_requests, wrk
from transfers import features
from transfers.bookings.ride_field import RideEventType
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.db.tables import bookings as bookings_table
from transfers.db.tables import partners as partners_table
from transfers.ride import service as riding
from transfers.ride.rules import EventReport
from transfers.services import Services

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]
TARGET_POSITIONS = 1000
REQUESTS_PER_FILE = 4000


async def prepare(database_url: str, count: int) -> tuple[list[str], str]:
    """The seeded bookings' numbers and their partner's API key: approved bookings of a hosted
    partner (the tracking page bench's seed), picked up in 30 minutes, the driver on the way."""
    from sqlalchemy import select

    from transfers.auth.keys import issue_key
    from transfers.clients import repository as clients_repo

    await seed_tracking(database_url, count)
    settings = Settings(database_url=database_url, secret_key=SECRET, sandbox_partner=False, embedded_worker=False)
    svc = Services.build(settings)
    features.register()  # the feature packages' handlers, as create_app and the CLI register them
    try:
        now = svc.clock.now()
        issued = issue_key("pk")
        async with svc.db.write() as conn:
            partner_id = int(
                (await conn.execute(select(partners_table.c.id).where(partners_table.c.name == COMPANY))).scalar_one()
            )
            await clients_repo.insert_api_key(conn, issued, now, partner_id=partner_id)
            numbers = [
                str(r[0])
                for r in await conn.execute(
                    select(bookings_table.c.reservation_no).where(bookings_table.c.partner_id == partner_id)
                )
            ]
            # The bench's own shortcut: the ride starts now (a seeded booking's pickup is days ahead).
            await conn.execute(
                update(bookings_table)
                .where(bookings_table.c.partner_id == partner_id)
                .values(pickup_at=now + timedelta(minutes=30))
            )
        for no in numbers:
            report = EventReport(no, RideEventType.DRIVER_DEPARTED_TO_PICKUP, now, 55.87, -4.43)
            await riding.record_event(svc, partner_id, report)
        return numbers, issued.key
    finally:
        await svc.db.dispose()


def batches(numbers: list[str], key: str, size: int) -> list[Request]:
    start = datetime.now(UTC) - timedelta(minutes=1)
    lines = []
    for i in range(REQUESTS_PER_FILE):
        no = random.choice(numbers)
        positions = [
            {
                "lat": round(55.87 + random.uniform(-0.05, 0.05), 6),
                "lng": round(-4.43 + random.uniform(-0.05, 0.05), 6),
                "at": (start + timedelta(milliseconds=i * size + j)).isoformat(),
                "heading": random.randint(0, 359),
                "speed_kmh": round(random.uniform(0, 90), 1),
            }
            for j in range(size)
        ]
        body = orjson.dumps({"reservation_no": no, "positions": positions}).decode()
        lines.append(Request("POST", "/api/v1/reverse/booking/positions", key, body))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--bookings", type=int, default=200)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--quick", action="store_true")
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.duration = min(args.bookings, 30), 3.0
    url = Settings(database_url=args.dsn).resolved_database_url
    upgrade(url)
    numbers, key = asyncio.run(prepare(url, args.bookings))
    work = Path(tempfile.mkdtemp(prefix="bench-positions-"))
    pidfile = args.pidfile or work / "pids"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
    env.update(
        {
            "TRANSFERS_DATABASE_URL": args.dsn,
            "TRANSFERS_SECRET_KEY": SECRET,
            "TRANSFERS_SANDBOX_PARTNER": "0",
            "TRANSFERS_LOG_LEVEL": "WARNING",
            "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
            "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
            "PYTHONPATH": str(ROOT),
        }
    )
    argv = [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port), "--workers", "1"]
    proc = Proc("api", argv, env=env, cwd=work, log=work / "api.log", pidfile=pidfile).start()
    results: dict[str, Any] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        proc.wait_http(base + "/healthz")
        for size in (10, 1):
            path = write_requests(work / f"batch{size}.requests", batches(numbers, key, size))
            wrk(base, path, duration=1.0, count=True)  # warm-up
            load_before = os.getloadavg()[0]
            result = wrk(base, path, duration=args.duration, count=True)
            results[f"batch_{size}"] = {
                "positions_per_s": round(result.rps * size, 1),
                "rps": round(result.rps, 1),
                "p50_ms": round(result.p50_ms, 2),
                "p99_ms": round(result.p99_ms, 2),
                "errors": result.errors,
                "non_2xx": int(result.raw.get("s4xx", 0)) + int(result.raw.get("s5xx", 0)),
                "load_avg_1m": [round(load_before, 1), round(os.getloadavg()[0], 1)],
            }
    finally:
        proc.stop()
    print("\n== driver positions ingested, one API process (uvicorn, 1 worker), PostgreSQL, wrk 2 x 32 connections")
    for size in (10, 1):
        r = results[f"batch_{size}"]
        print(
            f"batches of {size:2d}: {r['positions_per_s']:8.1f} positions/s ({r['rps']:.1f} req/s)  "
            f"p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  errors {r['errors']}  non-2xx {r['non_2xx']}  "
            f"load avg (1 min) {r['load_avg_1m'][0]} -> {r['load_avg_1m'][1]}"
        )
    verdict = "meets" if results["batch_10"]["positions_per_s"] >= TARGET_POSITIONS else "BELOW"
    print(
        f"target >= {TARGET_POSITIONS} positions/s in batches of 10: {verdict} (measured on a shared, loaded machine)"
    )
    print("BENCHJSON " + json.dumps({"ride_positions": results}))


if __name__ == "__main__":
    main()
