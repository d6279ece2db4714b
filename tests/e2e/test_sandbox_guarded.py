"""The sandbox as it ships: both SSRF guards on (docs/rules/partners.md#partner-urls). The built-in partner
lives on the service's own loopback address and is trusted by that URL, not by the guard being off: the
README's calls (search, book, approval by itself, cancel told to the partner) all work, while a partner
registered on another loopback port is never called."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.e2e.conftest import APPROVE_AFTER
from tests.e2e.test_sandbox_lifecycle import poll
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer, free_port
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import outbox
from transfers.partners import repository as partners_repo

BOOKING = "/api/v1/booking-api/booking"


@pytest.fixture
async def guarded_sandbox(
    database_url: str, workdir: Path, clock: ShiftedClock, db: Database
) -> AsyncIterator[LiveServer]:
    port = free_port()
    settings = make_settings(
        database_url,
        workdir,
        sandbox_partner=True,
        embedded_worker=True,
        sandbox_approve_after_seconds=APPROVE_AFTER,
        outbox_poll_seconds=0.1,
        public_base_url=f"http://127.0.0.1:{port}",
        allow_private_partner_urls=False,
        allow_private_webhook_urls=False,
    )
    assert not settings.private_partner_urls_allowed and not settings.private_webhook_urls_allowed
    server = await LiveServer(create_app(settings, clock=clock, configure_logs=False), port=port).start()
    yield server
    await server.stop(graceful=True)
    async with db.write() as conn:  # the sandbox partner serves every airport: out of later tests' searches
        for partner in await partners_repo.list_partners(conn):
            if partner.is_sandbox:
                await partners_repo.set_status(conn, partner.partner_id, "disabled")


async def test_the_built_in_partner_works_with_the_guards_on(
    guarded_sandbox: LiveServer, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    loopback, _, _ = await make_partner(name="loopback-beside-the-sandbox")
    _, key = await make_client(balance="300.00")
    async with httpx.AsyncClient(base_url=guarded_sandbox.url, timeout=30) as http:
        found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(key))).json()
        assert found["vehicles"], found
        assert {v["company"] for v in found["vehicles"]} == {"Sandbox Transfers Ltd"}  # not the loopback one
        assert loopback.requests == []
        vehicle = found["vehicles"][0]
        created = await http.post(
            BOOKING, json=booking_body(found["search_id"], vehicle["vehicle_id"]), headers=bearer(key)
        )
        booking = created.json()["booking"]
        assert booking["status"] == "PENDING_APPROVAL", created.text
        approved = await poll(http, key, booking["reservation_no"], "APPROVED")
        assert approved["driver"]["name"]
        cancel = await http.delete(
            BOOKING, params={"reservation_no": booking["reservation_no"], "cancellation_id": 2}, headers=bearer(key)
        )
        assert cancel.json()["status"] == "Success", cancel.text
    kinds: set[tuple[str, str]] = set()
    for _ in range(100):  # the embedded worker tells the partner through the outbox
        async with db.read() as conn:
            rows = await conn.execute(
                select(outbox.c.kind, outbox.c.status).where(
                    outbox.c.payload["reservation_no"].as_string() == booking["reservation_no"]
                )
            )
            kinds = {(str(kind), str(status)) for kind, status in rows}
        if ("booking.update", "delivered") in kinds:
            break
        await asyncio.sleep(0.05)
    assert ("booking.create", "delivered") in kinds and ("booking.update", "delivered") in kinds, kinds
