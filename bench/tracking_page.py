"""The traveller's page (docs/rules/ride.md#tracking-page): requests per second one API process
serves for ``GET /t/{token}`` (the HTML) and ``GET /t/{token}.json``, on PostgreSQL.

    .venv/bin/python -m bench.tracking_page --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 300] [--quick]

Seeds ``--bookings`` accepted bookings of a hosted partner through the use cases (search, create, the
portal's accept), starts ``transfers serve --no-worker`` (one process, uvicorn, the suite's settings),
and runs wrk (32 connections, 2 threads) over their tokens at random: the HTML page, then the JSON.
Target: >= 500 req/s for the page. Prints req/s, p50/p99, errors, and the load average at the start and
end of each run (the machine is shared: the figure is this machine's under that load, not the code's bound).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.procs import Proc, cpu_seconds
from bench.wrkrun import Request, write_requests, wrk
from transfers import features
from transfers.bookings import reverse
from transfers.bookings import service as bookings
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.db.tables import bookings as bookings_table
from transfers.hosted import service as hosted_service
from transfers.partners.wire import WireDriver
from transfers.search import service as searching
from transfers.services import Services

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CARD = json.loads((ROOT / "examples" / "rate-card.json").read_text())
SECRET = "bench-tracking-secret-key"
TARGET_RPS = 500
COMPANY = f"Bench Cars {os.getpid()}"  # its own partner on a reused database


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def seed(database_url: str, count: int) -> list[str]:
    settings = Settings(database_url=database_url, secret_key=SECRET, sandbox_partner=False, embedded_worker=False)
    svc = Services.build(settings)
    features.register()  # the feature packages' handlers, as create_app and the CLI register them
    try:
        partner = await hosted_service.register_hosted_partner(
            svc.db, svc.clock, svc.box, name=COMPANY, airports=("GLA",), markup_percent=Decimal(0), actor="bench"
        )
        # No daily capacity: every seeded booking is on the same day.
        card = {
            **CARD,
            "vehicles": [{k: v for k, v in car.items() if k != "daily_capacity"} for car in CARD["vehicles"]],
        }
        await hosted_service.set_rate_card(svc.db, svc.clock, partner.partner_id, card, actor="bench")
        made = await client_service.create_client(
            svc.db,
            svc.clock,
            NewClient(name="bench", pay_type="wallet", currency="EUR", opening_balance=Decimal("100000000.00")),
            actor="bench",
        )
        client = await svc.auth.client(f"Bearer {made.api_key}")
        when = (datetime.now(UTC) + timedelta(days=3)).strftime("%Y-%m-%d 14:30")
        found = await searching.search(
            svc,
            client,
            {
                "pickup_datetime": when,
                "pickup_location": {"type": "AIRPORT", "iata_code": "GLA"},
                "dropoff_location": {"type": "POINT", "lat": 55.8642, "lng": -4.2518, "name": "George Square"},
                "travelers": {"adult": 2, "children": 0, "infant": 0},
            },
        )
        vehicle = next(v for v in found["vehicles"] if v["company"] == COMPANY)
        numbers = []
        for _ in range(count):
            booking = await bookings.create_booking(
                svc,
                client,
                {
                    "search_id": found["search_id"],
                    "vehicle_id": vehicle["vehicle_id"],
                    "suitcase": 1,
                    "small_bags": 1,
                    "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "a@b.co"},
                    "travel_details": {"flight_number": "BA117", "extra_requests": None},
                },
                None,
            )
            numbers.append(booking.reservation_no)
        driver = WireDriver(name="Morag Campbell", phone="+447400900123", plate="SK21 ABC")
        for no in numbers:
            update = reverse.ReverseUpdate(
                reservation_no=no, status="APPROVED", driver_info=driver, meeting_point="Arrivals"
            )
            await reverse.apply_update(svc, partner.partner_id, update)
        async with svc.db.read() as conn:
            rows = await conn.execute(
                select(bookings_table.c.tracking_token).where(bookings_table.c.reservation_no.in_(numbers))
            )
            return [str(r[0]) for r in rows]
    finally:
        await svc.db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--pidfile", type=Path, default=None)
    parser.add_argument("--bookings", type=int, default=300)
    parser.add_argument("--duration", type=float, default=8.0)
    parser.add_argument("--quick", action="store_true")
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.duration = min(args.bookings, 50), 3.0
    url = Settings(database_url=args.dsn).resolved_database_url
    upgrade(url)
    tokens = asyncio.run(seed(url, args.bookings))
    work = Path(tempfile.mkdtemp(prefix="bench-tracking-"))
    pidfile = args.pidfile or work / "pids"
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")}
    env.update(
        {
            "TRANSFERS_DATABASE_URL": args.dsn,
            "TRANSFERS_SECRET_KEY": SECRET,
            "TRANSFERS_SANDBOX_PARTNER": "0",
            "TRANSFERS_LOG_LEVEL": "INFO",
            "PYTHONPATH": str(ROOT),
        }
    )
    argv = [str(BIN / "transfers"), "serve", "--no-worker", "--port", str(port), "--workers", "1"]
    proc = Proc("api", argv, env=env, cwd=work, log=work / "api.log", pidfile=pidfile).start()
    results: dict[str, Any] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        proc.wait_http(base + "/healthz")
        for tag, suffix in (("page", ""), ("json", ".json")):
            path = write_requests(work / f"{tag}.requests", [Request("GET", f"/t/{t}{suffix}") for t in tokens])
            wrk(base, path, duration=1.0, count=True)  # warm-up
            load_before = os.getloadavg()[0]
            pids = proc.api_pids()
            cpu_before = sum(cpu_seconds(pid) for pid in pids)
            result = wrk(base, path, duration=args.duration, count=True)
            cpu_ms = (sum(cpu_seconds(pid) for pid in pids) - cpu_before) * 1000 / max(1, result.requests)
            results[tag] = {
                "rps": round(result.rps, 1),
                "p50_ms": round(result.p50_ms, 2),
                "p99_ms": round(result.p99_ms, 2),
                "errors": result.errors,
                "non_2xx": int(result.raw.get("s4xx", 0)) + int(result.raw.get("s5xx", 0)),
                "load_avg_1m": [round(load_before, 1), round(os.getloadavg()[0], 1)],
                # The API process's own CPU per request: what the machine's load does not change.
                "cpu_ms_per_req": round(cpu_ms, 3),
            }
    finally:
        proc.stop()
    print("\n== the traveller's page, one API process (uvicorn, 1 worker), PostgreSQL, wrk 2 threads x 32 connections")
    for tag, label in (("page", "GET /t/{token}      (HTML)"), ("json", "GET /t/{token}.json (JSON)")):
        r = results[tag]
        print(
            f"{label}: {r['rps']:8.1f} req/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  "
            f"CPU {r['cpu_ms_per_req']:.2f} ms/req (API process)  errors {r['errors']}  non-2xx {r['non_2xx']}  "
            f"load avg (1 min) {r['load_avg_1m'][0]} -> {r['load_avg_1m'][1]}"
        )
    verdict = "meets" if results["page"]["rps"] >= TARGET_RPS else "BELOW"
    bound = 1000 / results["page"]["cpu_ms_per_req"] if results["page"]["cpu_ms_per_req"] else 0.0
    print(f"target >= {TARGET_RPS} req/s for the page: {verdict} (measured on a shared, loaded machine)")
    print(
        f"one core given to the API process alone would serve ~{bound:.0f} page req/s (1000 / its CPU ms per request)"
    )
    print("BENCHJSON " + json.dumps({"tracking_page": results}))


if __name__ == "__main__":
    main()
