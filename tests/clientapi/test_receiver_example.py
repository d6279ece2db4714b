"""The docs' receiver example (examples/webhook_receiver.py, quoted verbatim in docs/integrators/webhooks.md) run
as its own process against real deliveries: it verifies, dedupes and applies by sequence."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import httpx
from sqlalchemy import select

from tests.clientapi.test_webhook_delivery import book, drain
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.servers import LiveServer, free_port
from transfers.db.engine import Database
from transfers.db.tables import bookings, client_events
from transfers.deliveries import webhook_dispatcher
from transfers.partners.signing import signature_headers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "webhook_receiver.py"


def test_the_webhooks_page_quotes_the_example_verbatim() -> None:
    page = ROOT / "docs" / "integrators" / "webhooks.md"
    assert EXAMPLE.read_text(encoding="utf-8").strip() in page.read_text(encoding="utf-8")


async def test_the_example_receiver_verifies_dedupes_and_orders(
    http: httpx.AsyncClient,
    db: Database,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("FLR",), create_status="PENDING")
    port = free_port()
    endpoint = (
        await http.post(
            "/api/v1/booking-api/webhook-endpoints",
            headers=bearer(key),
            json={"url": f"http://127.0.0.1:{port}/hooks", "events": ["*"]},
        )
    ).json()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLE),
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PORT": str(port), "WEBHOOK_SECRETS": endpoint["secret"]},
    )
    dispatcher = webhook_dispatcher(service.app.state.services)
    # One delivery per endpoint at a time, so they arrive in sequence order here (concurrent ones may
    # not, and the example then rightly drops an older event that arrives after a newer one).
    dispatcher.per_endpoint = 1
    try:
        async with httpx.AsyncClient() as raw:
            for _ in range(100):  # until it listens
                try:
                    forged = await raw.post(
                        f"http://127.0.0.1:{port}/hooks",
                        content=b"{}",
                        headers=signature_headers("whsec_" + "A" * 44, b"{}"),
                    )
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            assert forged.status_code == 400
            booking = await book(http, key)
            await drain(dispatcher)
            assert process.stdout is not None
            lines = [json.loads(await asyncio.wait_for(process.stdout.readline(), 10)) for _ in range(2)]
            assert [(x["type"], x["sequence"], x["status"]) for x in lines] == [
                ("booking.created", 1, "PENDING"),
                ("booking.status_changed", 2, "PENDING_APPROVAL"),
            ]
            assert {x["reservation_no"] for x in lines} == {booking["reservation_no"]}
            # The same delivery again (what a retry after a lost answer looks like): accepted, not applied twice.
            async with db.read() as conn:
                event_id, body = (
                    await conn.execute(
                        select(client_events.c.event_id, client_events.c.body)
                        .join(bookings, bookings.c.id == client_events.c.booking_id)
                        .where(bookings.c.reservation_no == booking["reservation_no"], client_events.c.sequence == 1)
                    )
                ).one()
            again = await raw.post(
                f"http://127.0.0.1:{port}/hooks",
                content=body.encode(),
                headers=signature_headers(endpoint["secret"], body.encode(), event_id),
            )
            assert again.status_code == 204
            ping = await http.post(f"/api/v1/booking-api/webhook-endpoints/{endpoint['id']}/test", headers=bearer(key))
            await drain(dispatcher)
            assert ping.status_code == 202
            log = (
                await http.get(
                    f"/api/v1/booking-api/webhook-endpoints/{endpoint['id']}/deliveries", headers=bearer(key)
                )
            ).json()["data"]
            assert {d["status"] for d in log} == {"delivered"} and len(log) == 3
    finally:
        await dispatcher.aclose()
        process.kill()
        await process.wait()
    rest = (await process.stdout.read()).decode() if process.stdout else ""
    assert rest == ""  # the ping printed nothing, nothing was applied twice
