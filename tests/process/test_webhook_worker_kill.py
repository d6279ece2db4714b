"""SIGKILL of ``transfers worker`` in the middle of client webhook deliveries (docs/rules/webhooks.md):
after a restart every event reaches the receiver at least once, with the same webhook-id and
the same signed bytes on every attempt, and every delivery ends ``delivered``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.conftest import make_settings
from tests.process.conftest import SECRET_KEY, FreshDatabase, Processes, eventually, report
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.auth.service import Authenticator
from transfers.db.tables import webhook_deliveries
from transfers.services import Services
from transfers.webhooks import endpoints

pytestmark = [pytest.mark.slow]
EVENTS = 150


async def test_kill_9_mid_delivery_loses_nothing(fresh_db: FreshDatabase, procs: Processes, tmp_path: Path) -> None:
    receiver = Receiver(delay=0.05)  # slow enough that deliveries are in flight when the worker dies
    server = await LiveServer(receiver.app()).start()
    receiver.url = server.url
    try:
        _, key = await fresh_db.make_client()
        settings = make_settings(fresh_db.db.url, tmp_path, secret_key=SECRET_KEY)
        svc = Services.build(settings, db=fresh_db.db)
        client = await Authenticator(fresh_db.db, 0).client(f"Bearer {key}")
        created = await endpoints.create(svc, client, {"url": receiver.hook_url, "events": ["*"]})
        receiver.secrets.append(created["secret"])
        sent = {(await endpoints.ping(svc, client, created["id"]))["event_id"] for _ in range(EVENTS)}

        env = procs.env(
            fresh_db.url,
            webhook_concurrency=8,
            webhook_per_endpoint=8,
            webhook_timeout_seconds=1,
            outbox_lease_seconds=3,
        )
        first = procs.start("worker-1", ["worker"], env)
        await eventually(lambda: len(receiver.received) >= 30, timeout=60, what="30 deliveries")
        await procs.kill(first)
        killed_at = len(receiver.received)
        second = procs.start("worker-2", ["worker"], env)
        got = lambda: {d.headers["webhook-id"] for d in receiver.received}  # noqa: E731
        await eventually(lambda: got() >= sent, timeout=90, what="every event delivered after the restart")

        async def all_delivered() -> bool:
            async with fresh_db.db.read() as conn:
                statuses = (await conn.execute(select(webhook_deliveries.c.status))).scalars().all()
            return len(statuses) == EVENTS and set(statuses) == {"delivered"}

        for _ in range(100):
            if await all_delivered():
                break
            await asyncio.sleep(0.2)
        assert await all_delivered()
        await procs.stop(second)
        by_id: dict[str, set[bytes]] = {}
        for delivery in receiver.received:
            by_id.setdefault(delivery.headers["webhook-id"], set()).add(delivery.raw)
            assert delivery.signed_by == receiver.secrets
        assert set(by_id) == sent and all(len(bodies) == 1 for bodies in by_id.values())
        repeats = len(receiver.received) - EVENTS
        report(
            f"webhook worker kill -9: killed after {killed_at} of {EVENTS} deliveries; all {EVENTS} delivered "
            f"after the restart ({repeats} sent twice: in flight when killed)"
        )
    finally:
        await server.stop()
