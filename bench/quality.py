"""Partner scorecards (docs/rules/quality.md#computing): the time to compute every partner's
scorecards (as a whole and per airport) over N bookings, as the daily job does, on PostgreSQL; then
the console's ``Quality`` page for those 100 partners (docs/rules/quality.md#console) over a full
400-day history, its CSV and one count's bookings, served in-process through the whole app.

    .venv/bin/python -m bench.quality --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 1000000]

Seeding, in SQL (``INSERT ... SELECT generate_series``): 100 partners (registered through the service),
one client, N bookings spread over the partners, two airports and the 90-day window, with a mix of
outcomes (5 % declined, 5 % cancelled by the partner after approving, 5 % withdrawn by the client,
85 % completed rides with their four driver events, one in 97 with an incident against the partner).
The computation is ``quality.service.compute`` in this process (the counts' SQL and the Python on-time
rule); each size is timed ``--rounds`` times and the best is printed with the per-booking cost.

The page: the computed scorecards are stored as today's, and copies of them (rates moved a little
day by day) for each of the 399 days before, as the daily job leaves the table after 400 days (one
row per partner and airport and day: 100 x 3 x 400 = 120,000). An operator signs in through the
login form; each page is requested ``--page-rounds`` times over ASGI (middleware, session, queries,
Jinja, the 300 inline SVG charts) and p50/p95/max wall time and the process's CPU per page are printed
(target: the page <= 300 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import asyncpg

from bench import quality_pages
from transfers.clients.models import NewClient
from transfers.clients.service import create_client
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.service import register_partner
from transfers.quality import service as quality

SECRET = "bench-quality-secret-key-0123456789abcdef"
PARTNERS = 100
BATCH = 100_000

_BOOKINGS = """
INSERT INTO bookings (
  reservation_no, client_id, partner_id, status, pay_type, airport_iata, pickup_at, pickup_location,
  dropoff_location, flight_number, adult, children, infant, passenger_name, passenger_surname,
  passenger_email, passenger_phone, suitcase, small_bags, vehicle_make, vehicle_model, vehicle_type,
  partner_vehicle_id, total, net_total, currency, booking_type, extras, cancelled_by, created_at, updated_at)
SELECT
  'TB-Q' || lpad(g::text, 9, '0'), $3::bigint, ($4::bigint[])[1 + (g % $5)::int],
  CASE WHEN g % 20 = 0 THEN 'DECLINED' WHEN g % 20 IN (1, 2) THEN 'CANCELLED' ELSE 'COMPLETED' END,
  'wallet', CASE WHEN g % 3 = 0 THEN 'LGW' ELSE 'LHR' END,
  $6::timestamptz - make_interval(secs => (g * 7919 % 7776000)::int),
  '{"type": "AIRPORT", "iata_code": "LHR"}'::json, '{"type": "POINT", "lat": 51.5, "lng": -0.12}'::json,
  'BA117', 2, 0, 0, 'Ada', 'Lovelace', 'ada@example.com', '+447911123456', 1, 1, 'Toyota', 'Corolla',
  'SEDAN', 'car-1', 52.50, 52.50, 'EUR', 'ONEWAY', '[]'::json,
  CASE WHEN g % 20 = 1 THEN 'partner' WHEN g % 20 = 2 THEN 'client' END,
  now(), now()
FROM generate_series($1::bigint, $2::bigint) AS g
"""
_APPROVED = """
INSERT INTO booking_transitions (booking_id, from_status, to_status, actor, created_at)
SELECT id, 'PENDING', 'APPROVED', 'bench', now() FROM bookings
WHERE status = 'COMPLETED' OR cancelled_by = 'partner'
"""
_EVENTS = """
INSERT INTO ride_events (booking_id, type, occurred_at, received_at, actor)
SELECT b.id, e.type, b.pickup_at + e.offs * interval '1 minute'
         + CASE WHEN e.type = 'DRIVER_ARRIVED_AT_PICKUP' THEN (b.id % 9) * interval '1 minute' ELSE interval '0' END,
       b.pickup_at + e.offs * interval '1 minute' + (b.id % 23) * interval '1 minute', 'bench'
FROM bookings b
CROSS JOIN (VALUES ('DRIVER_DEPARTED_TO_PICKUP', -30), ('DRIVER_ARRIVED_AT_PICKUP', 0),
                   ('DRIVER_DEPARTED_TO_DROPOFF', 10), ('DRIVER_ARRIVED_AT_DROPOFF', 60)) AS e(type, offs)
WHERE b.status = 'COMPLETED' AND (e.type <> 'DRIVER_DEPARTED_TO_PICKUP' OR b.id % 11 <> 0)
"""
_INCIDENTS = """
INSERT INTO incidents (public_id, booking_id, type, status, reported_by, description, created_at,
                       responsible, refund, note, resolved_at, resolved_by)
SELECT 'inc_bench' || id, id, 'DRIVER_LATE', 'RESOLVED', 'client', 'late', now(), 'partner', 0, 'bench', now(), 'bench'
FROM bookings WHERE status = 'COMPLETED' AND id % 97 = 0
"""


async def seed(dsn: str, count: int, as_of: datetime) -> None:
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    await asyncio.to_thread(upgrade, url)
    db = Database(url, pool_size=2, application_name="bench-quality")
    try:
        box = SecretBox(resolve_secret_key(Settings(database_url=dsn, secret_key=SECRET)))
        partner_ids = []
        for i in range(PARTNERS):
            made = await register_partner(
                db,
                SystemClock(),
                box,
                name=f"bench-quality-{i:03d}",
                base_url="http://127.0.0.1:9",
                airports=("LGW", "LHR"),
                markup_percent=Decimal(0),
                allow_private=True,
                actor="bench",
            )
            partner_ids.append(made.partner_id)
        client = await create_client(
            db,
            SystemClock(),
            NewClient(name="bench: quality", pay_type="wallet", currency="EUR", opening_balance=Decimal(0)),
            actor="bench",
        )
    finally:
        await db.dispose()
    conn = await asyncpg.connect(dsn)
    try:
        started = time.monotonic()
        window_end = as_of - timedelta(hours=12, seconds=1)
        for lo in range(1, count + 1, BATCH):
            hi = min(lo + BATCH - 1, count)
            await conn.execute(_BOOKINGS, lo, hi, client.client_id, partner_ids, PARTNERS, window_end)
        for statement in (_APPROVED, _EVENTS, _INCIDENTS):
            await conn.execute(statement)
        for table in ("bookings", "booking_transitions", "ride_events", "incidents"):
            await conn.execute(f"VACUUM ANALYZE {table}")
        print(f"  seeded {count:,} bookings in {time.monotonic() - started:.1f} s")
    finally:
        await conn.close()


async def measure(dsn: str, as_of: datetime, rounds: int) -> tuple[float, quality.Result]:
    db = Database(dsn.replace("postgresql://", "postgresql+asyncpg://", 1), pool_size=2, application_name="bench")
    try:
        best = float("inf")
        for _ in range(rounds):
            started = time.monotonic()
            result = await quality.compute(db, as_of)
            best = min(best, time.monotonic() - started)
        rides = sum(c["counts"]["rides"] for c in result.cards)
        print(f"  {len(result.cards)} partners, {rides:,} rides counted")
        return best, result
    finally:
        await db.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="an EMPTY PostgreSQL database (it is filled)")
    parser.add_argument("--bookings", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--history-days", type=int, default=400, help="days of stored scorecards behind the page")
    parser.add_argument("--page-rounds", type=int, default=30, help="requests of each page")
    parser.add_argument("--pages-only", action="store_true", help="time the pages again on a database filled before")
    parser.add_argument("--quick", action="store_true", help="20,000 bookings, one round: checks the bench works")
    parser.add_argument("--pidfile", default=None, help="bench/run.sh's (this bench starts no process)")
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.rounds, args.history_days, args.page_rounds = 20_000, 1, 190, 5
    if args.pages_only:  # a database this bench filled before: the pages again, nothing seeded or stored
        await quality_pages.measure_pages(args.dsn, await quality_pages.stored_result(args.dsn), args.page_rounds)
        return
    as_of = datetime.now(UTC).replace(microsecond=0)
    await seed(args.dsn, args.bookings, as_of)
    seconds, result = await measure(args.dsn, as_of, args.rounds)
    print(
        f"scores for {PARTNERS} partners over {args.bookings:,} bookings: {seconds:.2f} s "
        f"({seconds / args.bookings * 1e6:.1f} us a booking; target <= 60 s for 1,000,000)"
    )
    await quality_pages.store_history(args.dsn, result, days=args.history_days)
    await quality_pages.measure_pages(args.dsn, result, args.page_rounds)


if __name__ == "__main__":
    asyncio.run(main())
