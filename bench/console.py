"""The operator console with a million bookings: how long the server takes to render its pages.

    .venv/bin/python -m bench.console --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 1000000]

Needs an empty, throwaway PostgreSQL database (``make bench`` makes one): migrates it, bulk-inserts
the bookings with ``INSERT ... SELECT ... FROM generate_series`` (50 000 a statement) (created one per second going
back from now, 8 statuses, 50 000 surnames, 3 clients, 3 partners), VACUUMs and ANALYZEs, creates an operator
and signs in, then requests each page ``--rounds`` times through the whole app (middleware, session
and CSRF checks, queries, Jinja rendering) in-process over ASGI, so the time measured is the
server's own. Prints p50/p95/max per page, whether p95 is under the 50 ms target (docs/rules/console.md), and the
service's own CPU per page (p50; PostgreSQL's is not in it), which a busy machine inflates far less
than the wall-clock figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from decimal import Decimal

import httpx
from sqlalchemy import text

from transfers.app import create_app
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.logging import configure_logging
from transfers.operators import service as operators
from transfers.operators.models import Role
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner

TARGET_MS = 50.0
CHUNK = 50_000
PASSWORD = "bench password 123"
STATUSES = ("PENDING", "PENDING_APPROVAL", "APPROVED", "APPROVED", "COMPLETED", "COMPLETED", "CANCELLED", "DECLINED")

# Bookings lo..hi (created_at = now - g seconds, so the highest g is the oldest).
SEED = """
INSERT INTO bookings (reservation_no, client_id, partner_id, status, pay_type, airport_iata, pickup_at,
    pickup_location, dropoff_location, flight_number, adult, children, infant, passenger_name,
    passenger_surname, passenger_email, passenger_phone, suitcase, small_bags, vehicle_make, vehicle_model,
    vehicle_type, partner_vehicle_id, total, net_total, currency, booking_type, extras, partner_reference,
    created_at, updated_at)
SELECT 'TB-B' || lpad(g::text, 9, '0'),
       (ARRAY[CAST(:c1 AS bigint), CAST(:c2 AS bigint), CAST(:c3 AS bigint)])[1 + g % 3],
       (ARRAY[CAST(:p1 AS bigint), CAST(:p2 AS bigint), CAST(:p3 AS bigint)])[1 + (g / 7) % 3],
       (ARRAY['PENDING','PENDING_APPROVAL','APPROVED','APPROVED','COMPLETED','COMPLETED','CANCELLED',
              'DECLINED'])[1 + g % 8],
       'wallet', 'LHR', now() - g * interval '1 second' + interval '10 days',
       '{"type": "AIRPORT", "iata_code": "LHR"}'::json,
       '{"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"}'::json,
       'BA117', 2, 0, 0, 'Ada', 'Surname' || (g % 50000), 'p' || g || '@example.com', '+447911123456', 1, 1,
       'Toyota', 'Corolla', 'SEDAN', 'car-1', 40.00, 36.00, 'EUR', 'ONEWAY', '[]'::json, 'P-' || g,
       now() - g * interval '1 second', now() - g * interval '1 second'
FROM generate_series(CAST(:lo AS integer), CAST(:hi AS integer)) AS g
"""


async def seed(url: str, count: int) -> tuple[list[int], list[int]]:
    db = Database(url, pool_size=2, application_name="bench-console")
    clock = SystemClock()
    try:
        clients = [
            (
                await client_service.create_client(
                    db,
                    clock,
                    NewClient(
                        name=f"Bench agency {i}",
                        pay_type="wallet",
                        currency="EUR",
                        opening_balance=Decimal("100.00"),
                        can_create=True,
                        can_cancel=True,
                    ),
                    actor="bench",
                )
            ).client_id
            for i in range(3)
        ]
        box = SecretBox("bench-console")
        partners = [
            (
                await register_partner(
                    db,
                    clock,
                    box,
                    name=f"Bench partner {i}",
                    base_url="http://127.0.0.1:9",
                    airports=("LHR",),
                    markup_percent=Decimal(0),
                    allow_private=True,
                    actor="bench",
                )
            ).partner_id
            for i in range(3)
        ]
        started = time.perf_counter()
        for lo in range(1, count + 1, CHUNK):  # chunks: each statement well inside the 30 s command timeout
            async with db.write() as conn:
                await conn.execute(
                    text(SEED),
                    {
                        "lo": lo,
                        "hi": min(count, lo + CHUNK - 1),
                        "c1": clients[0],
                        "c2": clients[1],
                        "c3": clients[2],
                        "p1": partners[0],
                        "p2": partners[1],
                        "p3": partners[2],
                    },
                )
        async with db.engine.connect() as conn:
            # VACUUM as autovacuum would soon after such a load: statistics, and the visibility map
            # index-only scans (the dashboard's counts) rely on.
            await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("VACUUM (ANALYZE)"))
        print(f"seeded {count:,} bookings in {time.perf_counter() - started:.1f} s")
        await operators.create_operator(
            db, clock, email="bench@example.com", role=Role.ADMIN, password=PASSWORD, actor="bench"
        )
        return clients, partners
    finally:
        await db.dispose()


async def seeded_partners(url: str) -> list[int]:
    db = Database(url, pool_size=1, application_name="bench-console")
    try:
        async with db.read() as conn:
            rows = await conn.execute(text("SELECT id FROM partners WHERE name LIKE 'Bench partner %' ORDER BY id"))
            return [int(r[0]) for r in rows]
    finally:
        await db.dispose()


async def measure(url: str, rounds: int, partners: list[int], bookings: int) -> bool:
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=url,
        environment="sandbox",
        sandbox_partner=False,
        embedded_worker=False,
        secret_key="bench-console",
        log_level="WARNING",
    )
    configure_logging("WARNING", "console")  # no access log line per request in the figures
    app = create_app(settings, configure_logs=False)
    transport = httpx.ASGITransport(app=app)
    ok = True
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        login = await client.get("/console/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
        assert token is not None
        signed = await client.post(
            "/console/login", data={"csrf_token": token.group(1), "email": "bench@example.com", "password": PASSWORD}
        )
        assert signed.status_code == 303, signed.text
        first = await client.get("/console/bookings")
        cursor = re.search(r'href="/console/bookings\?cursor=([^"]+)"', first.text)
        assert cursor is not None
        deep = await _deep_cursor(client, cursor.group(1), pages=20)
        middle = f"TB-B{max(1, bookings // 2):09d}"  # a seeded booking whatever the count (--quick: 100 000)
        pages = {
            "bookings, first page of 50": "/console/bookings",
            "bookings, page 2 (cursor)": f"/console/bookings?cursor={cursor.group(1)}",
            "bookings, page 21 (cursor)": f"/console/bookings?cursor={deep}",
            "bookings, status=APPROVED": "/console/bookings?status=APPROVED",
            f"bookings, partner={partners[1]}": f"/console/bookings?partner={partners[1]}",
            "bookings, pickup dates": "/console/bookings?pickup_from=2000-01-01&pickup_to=2100-01-01",
            "search: surname prefix": "/console/bookings?q=surname4242",
            "search: e-mail": "/console/bookings?q=P777777%40EXAMPLE.COM",
            "search: reservation no": f"/console/bookings?q={middle.lower()}",
            "search: partner reference": "/console/bookings?q=P-123456",
            "a booking's page": f"/console/bookings/{middle}",
            "dashboard": "/console/",
            "audit log": "/console/audit",
        }
        print(
            f"\nload average before measuring: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
            f"({os.cpu_count()} CPUs): figures from a loaded machine are not the code's"
        )
        print(
            f"\n{'page':34} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>7}  rows  "
            f"(target p95 < {TARGET_MS:.0f} ms; cpu: the service's own CPU per page, p50)"
        )
        for name, path in pages.items():
            times, cpu = [], []
            answer = None
            for _ in range(rounds):
                started, cpu_started = time.perf_counter(), time.process_time()
                answer = await client.get(path)
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
            assert answer is not None and answer.status_code == 200, (path, answer.status_code if answer else None)
            rows = answer.text.count('<tr>\n      <td><a href="/console/bookings/')
            times.sort()
            p50, p95 = statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)]
            good = p95 < TARGET_MS
            ok = ok and good
            print(
                f"{name:34} {p50:8.1f} {p95:8.1f} {times[-1]:8.1f} {statistics.median(cpu):7.1f}  {rows:4}  "
                f"{'ok' if good else 'SLOW'}"
            )
    await app.state.services.db.dispose()
    return ok


async def _deep_cursor(client: httpx.AsyncClient, cursor: str, pages: int) -> str:
    for _ in range(pages - 1):
        page = await client.get(f"/console/bookings?cursor={cursor}")
        found = re.search(r'href="/console/bookings\?cursor=([^"]+)"', page.text)
        assert found is not None
        cursor = found.group(1)
    return cursor


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="an empty, throwaway PostgreSQL database")
    parser.add_argument("--bookings", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="100 000 bookings, 15 rounds")
    parser.add_argument(
        "--measure-only", action="store_true", help="the database was seeded by an earlier run: measure again only"
    )
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.rounds = 100_000, 15
    url = Settings(database_url=args.dsn).resolved_database_url
    upgrade(url)
    partners = await seeded_partners(url) if args.measure_only else (await seed(url, args.bookings))[1]
    ok = await measure(url, args.rounds, partners, args.bookings)
    print("\nevery page's p95 under the target" if ok else "\nSOME PAGE IS OVER THE TARGET")


if __name__ == "__main__":
    asyncio.run(main())
