"""The agency portal's ``Bookings`` page for an agency with 100 000 bookings, on PostgreSQL: how
long the server takes to answer it (target under 300 ms).

    .venv/bin/python -m bench.agency --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 100000]

Needs an empty, throwaway PostgreSQL database (``make bench`` makes one): migrates it, bulk-inserts
``--bookings`` bookings for each of three agencies (the measured one and two others, so the table
is three times as big as the agency's share) with ``INSERT ... SELECT ... FROM generate_series``
(50 000 a statement; 8 statuses, 50 000 surnames, 1 000 flights), VACUUMs and ANALYZEs, creates an
agency user and signs in through the form, then requests each page ``--rounds`` times through the
whole app (middleware, session and CSRF checks, queries, Jinja rendering) in-process over ASGI, so
the time measured is the server's own. Prints p50/p95/max per page, whether p95 is under the
target, and the service's own CPU per page (p50; PostgreSQL's is not in it), which a busy machine
inflates far less than the wall-clock figures. The load average is printed first: on the shared
development machine the figures are a loaded machine's, not the code's.
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

from transfers.agency.users import create_user
from transfers.app import create_app
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.logging import configure_logging
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner

TARGET_MS = 300.0
CHUNK = 50_000
PASSWORD = "bench password 123"
EMAIL = "desk@bench-agency.example"

# Bookings lo..hi of one client (created_at = now - g seconds, so the highest g is the oldest).
SEED = """
INSERT INTO bookings (reservation_no, client_id, partner_id, status, pay_type, airport_iata, pickup_at,
    pickup_location, dropoff_location, flight_number, adult, children, infant, passenger_name,
    passenger_surname, passenger_email, passenger_phone, suitcase, small_bags, vehicle_make, vehicle_model,
    vehicle_type, partner_vehicle_id, total, net_total, currency, booking_type, extras, partner_reference,
    created_at, updated_at)
SELECT 'TB-A' || CAST(:tag AS text) || lpad(g::text, 8, '0'),
       CAST(:client AS bigint),
       CAST(:partner AS bigint),
       (ARRAY['PENDING','PENDING_APPROVAL','APPROVED','APPROVED','COMPLETED','COMPLETED','CANCELLED',
              'DECLINED'])[1 + g % 8],
       'wallet', 'LHR', now() - g * interval '1 second' + interval '10 days',
       '{"type": "AIRPORT", "iata_code": "LHR"}'::json,
       '{"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"}'::json,
       'BA' || (g % 1000), 2, 0, 0, 'Ada', 'Surname' || (g % 50000), 'p' || g || '@example.com',
       '+447911123456', 1, 1, 'Toyota', 'Corolla', 'SEDAN', 'car-1', 40.00, 36.00, 'EUR', 'ONEWAY', '[]'::json,
       'P-' || CAST(:tag AS text) || g, now() - g * interval '1 second', now() - g * interval '1 second'
FROM generate_series(CAST(:lo AS integer), CAST(:hi AS integer)) AS g
"""


async def seed(url: str, count: int) -> None:
    db = Database(url, pool_size=2, application_name="bench-agency")
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
        partner = (
            await register_partner(
                db,
                clock,
                SecretBox("bench-agency"),
                name="Bench partner",
                base_url="http://127.0.0.1:9",
                airports=("LHR",),
                markup_percent=Decimal(0),
                allow_private=True,
                actor="bench",
            )
        ).partner_id
        started = time.perf_counter()
        for tag, client in enumerate(clients):
            for lo in range(1, count + 1, CHUNK):  # chunks: each statement well inside the command timeout
                async with db.write() as conn:
                    await conn.execute(
                        text(SEED),
                        {
                            "lo": lo,
                            "hi": min(count, lo + CHUNK - 1),
                            "client": client,
                            "partner": partner,
                            "tag": str(tag),
                        },
                    )
        async with db.engine.connect() as conn:
            await (await conn.execution_options(isolation_level="AUTOCOMMIT")).execute(text("VACUUM (ANALYZE)"))
        print(f"seeded {count:,} bookings for each of 3 agencies in {time.perf_counter() - started:.1f} s")
        await create_user(db, clock, client_id=clients[0], email=EMAIL, role="agent", password=PASSWORD, actor="bench")
    finally:
        await db.dispose()


async def measure(url: str, rounds: int) -> bool:
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=url,
        environment="sandbox",
        sandbox_partner=False,
        embedded_worker=False,
        secret_key="bench-agency",
        log_level="WARNING",
    )
    configure_logging("WARNING", "agency")  # no access log line per request in the figures
    app = create_app(settings, configure_logs=False)
    transport = httpx.ASGITransport(app=app)
    ok = True
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        login = await client.get("/agency/login")
        token = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
        assert token is not None
        signed = await client.post(
            "/agency/login", data={"csrf_token": token.group(1), "email": EMAIL, "password": PASSWORD}
        )
        assert signed.status_code == 303, signed.text
        first = await client.get("/agency/bookings")
        following = _next(first.text)
        deep = following
        for _ in range(19):
            deep = _next((await client.get(deep)).text)
        pages = {
            "bookings, first page of 25": "/agency/bookings",
            "bookings, page 2 (cursor)": following,
            "bookings, page 21 (cursor)": deep,
            "status: declined": "/agency/bookings?status=DECLINED",
            "pickup dates (one day)": "/agency/bookings?pickup_from=2100-01-01&pickup_to=2100-01-01",
            "search: surname prefix": "/agency/bookings?q=surname4242",
            "search: reservation no": "/agency/bookings?q=tb-a000050000",
            "search: flight": "/agency/bookings?q=BA%20777",
            "search: nothing matches": "/agency/bookings?q=nobody",
            "a booking's page": "/agency/bookings/TB-A000050000",
            "wallet": "/agency/wallet",
        }
        print(
            f"\nload average before measuring: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
            f"({os.cpu_count()} CPUs): figures from a loaded machine are not the code's"
        )
        print(
            f"\n{'agency portal page':30} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>7}  rows  "
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
            rows = answer.text.count('<td><a href="/agency/bookings/')
            times.sort()
            p50, p95 = statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)]
            good = p95 < TARGET_MS
            ok = ok and good
            print(
                f"{name:30} {p50:8.1f} {p95:8.1f} {times[-1]:8.1f} {statistics.median(cpu):7.1f}  {rows:4}  "
                f"{'ok' if good else 'SLOW'}"
            )
    await app.state.services.db.dispose()
    return ok


def _next(page: str) -> str:
    found = re.search(r'<a href="(/agency/bookings\?[^"]*cursor=[^"]+)" rel="next"', page)
    assert found is not None
    return found.group(1).replace("&amp;", "&")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", required=True, help="an empty, throwaway PostgreSQL database")
    parser.add_argument("--bookings", type=int, default=100_000, help="bookings of each of the 3 agencies")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="30 000 bookings an agency, 10 rounds")
    parser.add_argument(
        "--measure-only", action="store_true", help="the database was seeded by an earlier run: measure again only"
    )
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.rounds = 30_000, 10
    url = Settings(database_url=args.dsn).resolved_database_url
    upgrade(url)
    if not args.measure_only:
        await seed(url, args.bookings)
    ok = await measure(url, args.rounds)
    print("\nevery page's p95 under the target" if ok else "\nSOME PAGE IS OVER THE TARGET")


if __name__ == "__main__":
    asyncio.run(main())
