"""Driver positions delivered to a client's endpoint (docs/rules/ride.md#client-events,
docs/architecture/deliveries.md "One sender for client endpoints"): pushes per second and CPU per push
through the webhook dispatcher, with the one kept-alive sender every client-endpoint delivery uses,
against a sender opened for each push and closed after it (how positions were sent before they moved
to the client-webhook path), in the same run and process.

    .venv/bin/python -m bench.position_pushes --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--pushes 2000]

Seeds a client with one endpoint naming ``booking.driver_position`` at a local receiver (a bare
asyncio server answering 204 with keep-alive, counting requests and connections), writes ``--pushes``
pending pushes as ``client_events/positions_repository.push`` writes them (rows of the
``client.driver_position`` kind, each with its own webhook-id and body), and drains them with
``WebhookDispatcher.run_once`` (claim, signed POST, record): once with the shared sender, once with
a sender per push; the modes alternate over ``--rounds``. Prints pushes/s (wall), CPU ms per push
(this process: the dispatcher and the receiver) and the receiver's TCP connections per mode.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from datetime import timedelta
from decimal import Decimal
from typing import cast

import orjson
from sqlalchemy import insert

from bench.webhooks import free_port
from transfers.client_events.positions_repository import DRIVER_POSITION_KIND, POSITION_EVENT
from transfers.clients import service as clients
from transfers.clients.models import NewClient
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.db.tables import webhook_deliveries, webhook_endpoints
from transfers.deliveries import webhook_sender
from transfers.delivery.kinds import DeliveryKind, Registry
from transfers.delivery.transport import CallResult, Receiver
from transfers.logging import configure_logging
from transfers.partners.signing import new_signing_secret
from transfers.services import Services
from transfers.webhooks import positions
from transfers.webhooks.delivery import WebhookDispatcher
from transfers.webhooks.kind import client_webhook_kind, record_fast
from transfers.webhooks.models import WebhookDelivery

SECRET = "bench-position-pushes-key"
NO_CONTENT = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n"


class Endpoint(asyncio.Protocol):
    """Answers every request 204 at once (keep-alive); counts requests and connections."""

    requests = 0
    connections = 0

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        Endpoint.connections += 1

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = bytes(self.buffer[:end]).lower()
            at = head.find(b"\r\ncontent-length:")
            length = int(head[at + 17 : head.find(b"\r\n", at + 2) % (len(head) + 1)].strip()) if at >= 0 else 0
            if len(self.buffer) < end + 4 + length:
                return
            del self.buffer[: end + 4 + length]
            Endpoint.requests += 1
            if self.transport is not None:
                self.transport.write(NO_CONTENT)


class SessionPerPush:
    """The sender as positions had it before: a ``WebhookSender`` (an aiohttp session) opened for each
    push and closed after it."""

    def __init__(self, svc: Services) -> None:
        self.svc = svc

    async def send(self, kind: str, message: WebhookDelivery, *, timeout: float, target: object) -> CallResult:
        sender = webhook_sender(self.svc)
        try:
            return await sender.send(kind, message, timeout=timeout, target=target)
        finally:
            await sender.aclose()


def per_push_dispatcher(svc: Services) -> WebhookDispatcher:
    """The webhook dispatcher with the positions' kind sending through a sender per push."""
    sender = webhook_sender(svc)
    receiver: Receiver[WebhookDelivery] = Receiver(SessionPerPush(svc))

    async def route(message: WebhookDelivery, hint: object) -> Receiver[WebhookDelivery]:
        return receiver

    kind = DeliveryKind(
        DRIVER_POSITION_KIND, route, positions.judge, once=True, fast_finish=record_fast(svc.db, once=True)
    )
    return WebhookDispatcher(svc, Registry((client_webhook_kind(svc.db, sender), kind)), sender)


async def seed(svc: Services, url: str) -> int:
    """A client with one endpoint naming the positions; answers the endpoint's id."""
    made = await clients.create_client(
        svc.db,
        svc.clock,
        NewClient(name="bench: positions", pay_type="wallet", currency="EUR", opening_balance=Decimal("0")),
        actor="bench",
    )
    now = svc.clock.now()
    async with svc.db.write() as conn:
        return int(
            (
                await conn.execute(
                    insert(webhook_endpoints)
                    .values(
                        public_id=f"we_{uuid.uuid4().hex[:20]}",
                        client_id=made.client_id,
                        url=f"{url}/hook",
                        events=[POSITION_EVENT],
                        status="enabled",
                        secret_enc=svc.box.seal(new_signing_secret()),
                        created_at=now,
                        updated_at=now,
                    )
                    .returning(webhook_endpoints.c.id)
                )
            ).scalar_one()
        )


async def write_pushes(svc: Services, endpoint_id: int, count: int) -> None:
    """``count`` due pushes, as ``client_events/positions_repository.push`` writes them."""
    now = svc.clock.now()
    rows = []
    for n in range(count):
        webhook_id = f"msg_{uuid.uuid4().hex}"
        data = {"reservation_no": f"TB-BENCH{n:05d}", "position": {"lat": 51.47, "lng": -0.45, "at": now.isoformat()}}
        body = orjson.dumps({"id": webhook_id, "type": POSITION_EVENT, "created_at": now.isoformat(), "data": data})
        rows.append(
            {
                "endpoint_id": endpoint_id,
                "kind": DRIVER_POSITION_KIND,
                "webhook_id": webhook_id,
                "body": body.decode(),
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "deadline_at": now + timedelta(minutes=10),  # a bench drains slower than 15 s at its worst
                "created_at": now,
            }
        )
    async with svc.db.write() as conn:
        for start in range(0, len(rows), 500):
            await conn.execute(insert(webhook_deliveries), rows[start : start + 500])


async def drain(dispatcher: WebhookDispatcher, count: int) -> tuple[float, float, int]:
    """Deliver until ``count`` pushes arrived: wall seconds, CPU seconds, connections opened."""
    Endpoint.requests = Endpoint.connections = 0
    dispatcher.sender.start()
    wall, cpu = time.perf_counter(), time.process_time()
    while Endpoint.requests < count:
        if not await dispatcher.run_once():
            await asyncio.sleep(0.01)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await dispatcher.aclose()
    return wall, cpu, Endpoint.connections


async def main_async(args: argparse.Namespace) -> int:
    dsn = (
        args.dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
        if args.dsn.startswith("postgresql://")
        else args.dsn
    )
    configure_logging("WARNING", "console")
    await asyncio.to_thread(upgrade, dsn)
    port = free_port()
    server = await asyncio.get_running_loop().create_server(Endpoint, "127.0.0.1", port, backlog=1024)
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=args.dsn,
        secret_key=SECRET,
        sandbox_partner=False,
        log_level="WARNING",
        environment="sandbox",
    )
    svc = Services.build(settings, clock=SystemClock())
    results: dict[str, list[tuple[float, float, int]]] = {"one kept-alive sender": [], "a session per push": []}
    try:
        endpoint_id = await seed(svc, f"http://127.0.0.1:{port}")
        for _ in range(args.rounds):
            for mode, build in (("one kept-alive sender", None), ("a session per push", per_push_dispatcher)):
                await write_pushes(svc, endpoint_id, args.pushes)
                if build is None:
                    sender = webhook_sender(svc)
                    dispatcher = WebhookDispatcher(
                        svc,
                        Registry((client_webhook_kind(svc.db, sender), positions.driver_position_kind(svc.db, sender))),
                        sender,
                    )
                else:
                    dispatcher = build(svc)
                results[mode].append(await drain(dispatcher, args.pushes))
        for mode, runs in results.items():
            rate = statistics.median(args.pushes / wall for wall, _, _ in runs)
            cpu_ms = statistics.median(1000 * cpu / args.pushes for _, cpu, _ in runs)
            connections = statistics.median(c for _, _, c in runs)
            print(
                f"{mode:22s} {rate:8.0f} pushes/s  {cpu_ms:6.3f} ms CPU per push  {connections:6.0f} connections"
                f"  ({args.pushes} pushes, median of {len(runs)} rounds)"
            )
    finally:
        server.close()
        await svc.partner_client.aclose()
        await svc.db.dispose()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dsn", required=True)
    parser.add_argument("--pushes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
