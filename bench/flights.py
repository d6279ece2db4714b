"""One flight-watch pass over 10,000 watched bookings (docs/rules/flights.md#watching), on PostgreSQL.

    .venv/bin/python -m bench.flights --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--bookings 10000]
        [--flights 1000] [--quick]

Seeds ``--bookings`` PENDING_APPROVAL bookings picked up at Heathrow three days ahead, spread over
``--flights`` distinct flights (bulk INSERTs: the seeding is not what is measured). ``--late-percent`` of
the flights (15 by default) are late by 10 to 159 minutes (the sandbox's ``ZZ1mmm``), the others on time
(``BAnnnn``). All watches are due. Then one ``watch_pass`` with the sandbox provider, its per-minute budget
out of the way, and prints: the wall time of the pass (target <= 5 s), the provider calls (must equal the
distinct flights), the CPU time of this process and the SQL statements it sent, bookings checked,
pickups moved (each with its partner notice and client event written in the same transaction) and the
load average at the start and end (the machine is shared: the figure is this
machine's under that load).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import time
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import event, insert, select

from transfers import features
from transfers.clients import service as client_service
from transfers.clients.models import NewClient
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.db.tables import bookings, flight_watches
from transfers.flights import watch as flight_watch
from transfers.flights.sandbox import SandboxProvider
from transfers.partners.service import register_partner
from transfers.services import Services

SECRET = "bench-flights-secret-key"
TARGET_SECONDS = 5.0
LHR = {"type": "AIRPORT", "iata_code": "LHR", "name": "London Heathrow Airport", "lat": 51.4706, "lng": -0.46194}
CITY = {"type": "POINT", "name": "Trafalgar Square, London", "lat": 51.508, "lng": -0.128}


def flight_numbers(count: int, late_percent: int) -> list[str]:
    late = count * late_percent // 100
    return [f"ZZ1{10 + i % 150:03d}" if i < late else f"BA{i:04d}" for i in range(count)]


def booking_values(
    client_id: int, partner_id: int, pickup: datetime, number: str, i: int, now: datetime
) -> dict[str, Any]:
    values: dict[str, Any] = {
        "reservation_no": f"TB-FL{os.getpid() % 1000:03d}{i:07d}",
        "client_id": client_id,
        "partner_id": partner_id,
        "status": "PENDING_APPROVAL",
        "pay_type": "reverse_api",
        "airport_iata": "LHR",
        "pickup_at": pickup,
        "original_pickup_at": pickup,
        "pickup_location": LHR,
        "dropoff_location": CITY,
        "flight_number": number,
        "adult": 2,
        "children": 0,
        "infant": 0,
        "passenger_name": "Ada",
        "passenger_surname": "Lovelace",
        "passenger_email": "ada@example.com",
        "passenger_phone": "+447911123456",
        "suitcase": 1,
        "small_bags": 0,
        "vehicle_make": "Toyota",
        "vehicle_model": "Corolla",
        "vehicle_type": "SEDAN",
        "partner_vehicle_id": "sedan",
        "total": Decimal("50.00"),
        "net_total": Decimal("45.00"),
        "currency": "EUR",
        "distance_km": 24,
        "booking_type": "ONEWAY",
        "extras": [],
        "created_at": now,
        "updated_at": now,
        "event_sequence": 1,
    }
    if "tracking_token" in bookings.c:  # the traveller's page's token, unique per booking
        values["tracking_token"] = secrets.token_urlsafe(16)
    return values


async def seed(svc: Services, count: int, flights: int, late_percent: int) -> int:
    """The bookings and their due watches; returns the number of distinct flights."""
    now = svc.clock.now()
    partner = await register_partner(
        svc.db,
        svc.clock,
        svc.box,
        name=f"Bench Flights {os.getpid()}",
        base_url="http://127.0.0.1:9",
        airports=("LHR",),
        markup_percent=Decimal(0),
        allow_private=True,
        actor="bench",
    )
    client = await client_service.create_client(
        svc.db,
        svc.clock,
        NewClient(name="bench-flights", pay_type="reverse_api", currency="EUR", opening_balance=Decimal(0)),
        actor="bench",
    )
    client_id = client.client_id
    day = (now + timedelta(days=3)).replace(hour=13, minute=0, second=0, microsecond=0)
    numbers = flight_numbers(flights, late_percent)
    async with svc.db.write() as conn:
        watch_ids: list[int] = []
        for start in range(0, len(numbers), 1000):
            rows = [
                {
                    "number": n,
                    "airport_iata": "LHR",
                    "local_date": day.date().isoformat(),
                    "scheduled_arrival": day,
                    "next_check_at": now,
                    "failures": 0,
                }
                for n in numbers[start : start + 1000]
            ]
            result = await conn.execute(insert(flight_watches).returning(flight_watches.c.id), rows)
            watch_ids += [int(r[0]) for r in result]
        rows = []
        for i in range(count):
            f = i % len(numbers)
            row = booking_values(client_id, partner.partner_id, day + timedelta(minutes=i % 7 * 5), numbers[f], i, now)
            row["flight_watch_id"] = watch_ids[f]
            rows.append(row)
        for start in range(0, len(rows), 1000):
            await conn.execute(insert(bookings), rows[start : start + 1000])
    return len(numbers)


async def run(url: str, count: int, flights: int, late_percent: int) -> dict[str, Any]:
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=url,
        secret_key=SECRET,
        sandbox_partner=False,
        embedded_worker=False,
        flight_provider_max_calls_per_minute=100_000,
    )
    svc = Services.build(settings)
    features.register()  # the feature packages' handlers, as create_app and the CLI register them
    try:
        distinct = await seed(svc, count, flights, late_percent)
        provider = SandboxProvider(svc.clock)
        load_before = os.getloadavg()[0]
        statements: list[int] = [0]

        def counted(*_: Any) -> None:
            statements[0] += 1

        event.listen(svc.db.engine.sync_engine, "before_cursor_execute", counted)
        started, cpu = time.perf_counter(), time.process_time()
        done = await flight_watch.watch_pass(svc.db, provider, svc.clock, settings, limit=distinct)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        event.remove(svc.db.engine.sync_engine, "before_cursor_execute", counted)
        load_after = os.getloadavg()[0]
        async with svc.db.read() as conn:
            due = (
                await conn.execute(select(flight_watches.c.id).where(flight_watches.c.next_check_at <= svc.clock.now()))
            ).all()
        return {
            "bookings": done.bookings,
            "distinct_flights": distinct,
            "provider_calls": provider.calls,
            "moved": done.shifted,
            "disrupted": done.disrupted,
            "seconds": round(seconds, 2),
            "cpu": round(cpu, 2),
            "statements": statements[0],
            "still_due": len(due),
            "load": (round(load_before, 1), round(load_after, 1)),
        }
    finally:
        await svc.db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--bookings", type=int, default=10_000)
    parser.add_argument("--flights", type=int, default=1_000)
    parser.add_argument("--late-percent", type=int, default=15, help="flights late enough to move the pickup")
    parser.add_argument("--quick", action="store_true")
    args, _ = parser.parse_known_args()
    if args.quick:
        args.bookings, args.flights = min(args.bookings, 1_000), min(args.flights, 100)
    url = Settings(database_url=args.dsn).resolved_database_url
    upgrade(url)
    result = asyncio.run(run(url, args.bookings, args.flights, args.late_percent))
    verdict = (
        "PASS"
        if result["seconds"] <= TARGET_SECONDS and result["provider_calls"] == result["distinct_flights"]
        else "MISS"
    )
    print(f"\nflight watch: one pass over {result['bookings']} watched bookings (PostgreSQL, sandbox provider)")
    print(f"  wall time            {result['seconds']:.2f} s   (target <= {TARGET_SECONDS:.0f} s)  {verdict}")
    print(f"  CPU of this process  {result['cpu']:.2f} s   (the load disturbs it less than the wall time)")
    print(f"  SQL statements       {result['statements']}   (an executemany counts once)")
    print(f"  provider calls       {result['provider_calls']}   (distinct flights: {result['distinct_flights']})")
    print(f"  pickups moved        {result['moved']}   (each with its partner notice and client event)")
    print(f"  disrupted            {result['disrupted']}")
    print(f"  watches still due    {result['still_due']}")
    print(
        f"  load average         {result['load'][0]} -> {result['load'][1]}   (shared machine: figures under that load)"
    )


if __name__ == "__main__":
    main()
