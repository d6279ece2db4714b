"""Client webhooks (docs/rules/webhooks.md): what subscribed endpoints cost a create, and how fast
one worker delivers.

    .venv/bin/python -m bench.webhooks --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--creates 400] [--events 3000]

1. **Create with 3 subscribed endpoints vs none**: the create use case (``bookings.service.create_booking``:
   search row read, the one-statement insert with its debit, event and partner message, the partner's
   answer within the request) timed in-process, interleaved between a client without endpoints and a
   client with 3 endpoints subscribed to every event; medians compared (target: within 5 %). A create
   writes one event row whatever the endpoints (the worker fans it out later), so the figure checks
   that nothing on the request path grew with them.
2. **Delivery throughput**: ``--events`` booking events (unfanned, with a real booking snapshot) for one
   endpoint at a fast local receiver (a bare asyncio server answering 204), delivered by one
   ``transfers worker`` process (fan-out included); events per second between the first and the last
   delivery, from the deliveries' own timestamps (target: >= 300/s).

Partner: ``bench/partner.py`` on a loopback port (10 ms search latency). Prints the figures.
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
from typing import Any, cast

from sqlalchemy import func, select

from bench.procs import Proc
from transfers import features
from transfers.auth.service import Authenticator
from transfers.bookings import service as bookings
from transfers.bookings.resource import booking_resource
from transfers.client_events import events
from transfers.client_events import repository as events_repo
from transfers.clients import service as clients
from transfers.clients.models import ClientPrincipal, NewClient
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.db.tables import client_events, webhook_deliveries
from transfers.deliveries import Dispatcher
from transfers.logging import configure_logging
from transfers.partners.service import register_partner
from transfers.search import service as searching
from transfers.services import Services
from transfers.webhooks import endpoints

SECRET = "bench-webhooks-secret-key"
NO_CONTENT = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"


class Receiver(asyncio.Protocol):
    """Answers every request 204 at once (keep-alive); counts them."""

    count = 0

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(self.buffer[:end]).lower()
            length = 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17 : stop if stop >= 0 else len(head)].strip())
            if len(self.buffer) < end + 4 + length:
                return
            del self.buffer[: end + 4 + length]
            Receiver.count += 1
            if self.transport is not None:
                self.transport.write(NO_CONTENT)


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def booking_request(search_id: str) -> dict[str, Any]:
    return {
        "search_id": search_id,
        "vehicle_id": 1,
        "suitcase": 1,
        "small_bags": 1,
        "passenger": {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"},
        "travel_details": {"flight_number": "BA117", "extra_requests": None},
    }


async def principal(svc: Services, key: str) -> ClientPrincipal:
    return await Authenticator(svc.db, 0).client(f"Bearer {key}")


async def new_client(svc: Services, name: str) -> ClientPrincipal:
    made = await clients.create_client(
        svc.db,
        svc.clock,
        NewClient(name=name, pay_type="wallet", currency="EUR", opening_balance=Decimal("1000000.00")),
        actor="bench",
    )
    return await principal(svc, made.api_key)


async def search_id(svc: Services, client: ClientPrincipal) -> str:
    from datetime import UTC, datetime, timedelta

    when = (datetime.now(UTC) + timedelta(days=10)).strftime("%Y-%m-%d 14:30")
    found = await searching.search(
        svc,
        client,
        {
            "pickup_datetime": when,
            "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
            "dropoff_location": {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square"},
            "travelers": {"adult": 2, "children": 0, "infant": 0},
        },
    )
    return str(found["search_id"])


async def create_latency(svc: Services, receiver_url: str, creates: int) -> tuple[list[float], list[float]]:
    plain, subscribed = await new_client(svc, "bench: no endpoints"), await new_client(svc, "bench: 3 endpoints")
    for n in range(3):
        await endpoints.create(svc, subscribed, {"url": f"{receiver_url}/hook/{n}", "events": ["*"]})
    searches = {plain.client_id: await search_id(svc, plain), subscribed.client_id: await search_id(svc, subscribed)}
    times: dict[int, list[float]] = {plain.client_id: [], subscribed.client_id: []}
    for i in range(creates + 20):  # the first 20 rounds warm the caches and are not counted
        for client in (plain, subscribed) if i % 2 else (subscribed, plain):
            started = time.perf_counter()
            await bookings.create_booking(svc, client, booking_request(searches[client.client_id]), None)
            if i >= 20:
                times[client.client_id].append((time.perf_counter() - started) * 1000)
    return times[plain.client_id], times[subscribed.client_id]


async def seed_events(svc: Services, receiver_url: str, count: int) -> ClientPrincipal:
    client = await new_client(svc, "bench: throughput")
    await endpoints.create(svc, client, {"url": f"{receiver_url}/hook", "events": ["*"]})
    found = await search_id(svc, client)
    booked = await bookings.create_booking(svc, client, booking_request(found), None)
    snapshot = booking_resource(booked, svc.clock.now())
    now = svc.clock.now()
    async with svc.db.write() as conn:
        await events_repo.insert_events(
            conn,
            [
                {
                    "event_id": events.new_event_id(),
                    "client_id": client.client_id,
                    "type": "booking.created",
                    "sequence": 1,
                    "status": "PENDING",
                    "booking": snapshot,
                    "created_at": now,
                }
                for _ in range(count)
            ],
        )
    return client


async def delivered_rate(svc: Services) -> tuple[int, float]:
    d = webhook_deliveries.c
    async with svc.db.read() as conn:
        done, first, last = (
            await conn.execute(
                select(func.count(), func.min(d.finished_at), func.max(d.finished_at)).where(d.status == "delivered")
            )
        ).one()
    if not done or first is None or last is None or last <= first:
        return int(done or 0), 0.0
    return int(done), (done - 1) / (last - first).total_seconds()


async def pending(svc: Services) -> int:
    async with svc.db.read() as conn:
        unfanned = (await conn.execute(select(func.count()).where(client_events.c.fanned_out_at.is_(None)))).scalar()
        waiting = (await conn.execute(select(func.count()).where(webhook_deliveries.c.status == "pending"))).scalar()
    return int(unfanned or 0) + int(waiting or 0)


async def main_async(args: argparse.Namespace) -> int:
    dsn = (
        args.dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
        if args.dsn.startswith("postgresql://")
        else args.dsn
    )
    configure_logging("WARNING", "console")
    await asyncio.to_thread(upgrade, dsn)
    loop = asyncio.get_running_loop()
    receiver_port = free_port()
    server = await loop.create_server(Receiver, "127.0.0.1", receiver_port, backlog=1024)
    receiver_url = f"http://127.0.0.1:{receiver_port}"
    work = Path(tempfile.mkdtemp(prefix="bench-webhooks-"))
    partner_port = free_port()
    pidfile = Path(args.pidfile) if args.pidfile else work / "pids"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")},
        "TRANSFERS_DATABASE_URL": args.dsn,
        "TRANSFERS_SECRET_KEY": SECRET,
        "TRANSFERS_SANDBOX_PARTNER": "0",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "TRANSFERS_OUTBOX_POLL_SECONDS": "0.2",
    }
    partner = Proc(
        "partner",
        [sys.executable, "-m", "bench.partner", "--ports", str(partner_port), "--latency-ms", "10"],
        env=env,
        cwd=Path.cwd(),
        log=work / "partner.log",
        pidfile=pidfile,
    ).start()
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=args.dsn,
        secret_key=SECRET,
        sandbox_partner=False,
        log_level="WARNING",
        environment="sandbox",
        partner_cache_seconds=0,
    )
    svc = Services.build(settings, clock=SystemClock())
    features.register()  # the feature packages' handlers, as create_app and the CLI register them
    svc.dispatcher = Dispatcher(svc)
    worker: Proc | None = None
    try:
        await asyncio.sleep(0.5)
        await register_partner(
            svc.db,
            svc.clock,
            svc.box,
            name="bench partner",
            base_url=f"http://127.0.0.1:{partner_port}",
            airports=("LHR",),
            markup_percent=Decimal(0),
            allow_private=True,
            actor="bench",
        )
        plain, subscribed = await create_latency(svc, receiver_url, args.creates)
        p50_plain, p50_subscribed = statistics.median(plain), statistics.median(subscribed)
        ratio = p50_subscribed / p50_plain
        p95 = statistics.quantiles(plain, n=20)[18], statistics.quantiles(subscribed, n=20)[18]
        print(f"create, no endpoints:        p50 {p50_plain:7.2f} ms  p95 {p95[0]:7.2f} ms  ({len(plain)} creates)")
        print(
            f"create, 3 endpoints (all):   p50 {p50_subscribed:7.2f} ms  p95 {p95[1]:7.2f} ms  -> "
            f"{100 * (ratio - 1):+.1f} % ({'within' if ratio <= 1.05 else 'OVER'} +5 %)"
        )
        # The create phase's own events (2 per create x 3 endpoints) are delivered first, unmeasured.
        worker = Proc(
            "worker",
            [str(Path(sys.executable).parent / "transfers"), "worker"],
            env=env,
            cwd=work,
            log=work / "worker.log",
            pidfile=pidfile,
        ).start()
        deadline = time.monotonic() + 300
        while await pending(svc) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        async with svc.db.write() as conn:  # only the throughput run's deliveries count
            await conn.execute(webhook_deliveries.delete())
        Receiver.count = 0
        await seed_events(svc, receiver_url, args.events)
        while await pending(svc) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        done, rate = await delivered_rate(svc)
        print(
            f"delivery, one worker:        {done} events to one endpoint at {rate:7.1f} events/s "
            f"({'>=' if rate >= 300 else 'BELOW'} 300/s); receiver saw {Receiver.count} requests"
        )
        return 0
    finally:
        if worker is not None:
            worker.stop()
        partner.stop()
        server.close()
        await svc.partner_client.aclose()
        await svc.db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of an empty database (or sqlite:///...)")
    parser.add_argument("--creates", type=int, default=400)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--pidfile", default="", help="append the PIDs of started processes here (run.sh stops them)")
    parser.add_argument("--quick", action="store_true", help="fewer creates and events")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every bench
    if args.quick:
        args.creates, args.events = 100, 1000
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
