"""Client webhook deliveries on the console's ``Deliveries`` page (docs/rules/console.md, docs/rules/webhooks.md): a
delivery that failed (its receiver answered 500 for 24 h) listed with its reservation number and
retried by a support operator through ``webhooks/retry.py``, the use case of ``transfers outbox
retry --webhook``; the CLI refuses what the page refuses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from playwright.async_api import expect
from sqlalchemy import select

from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.cli.main import cli
from transfers.clock import ShiftedClock
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, client_events, webhook_deliveries
from transfers.deliveries import webhook_dispatcher
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver(status=500)
    server = await LiveServer(made.app()).start()
    made.url = server.url
    yield made
    await server.stop()


@pytest.fixture
async def dispatcher(service: LiveServer) -> AsyncIterator[WebhookDispatcher]:
    svc: Services = service.app.state.services
    made = webhook_dispatcher(svc)
    yield made
    await made.aclose()


def run_cli(plain_database_url: str, *args: str) -> Result:
    env = {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": "test-secret-key-not-for-production",
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }
    get_settings.cache_clear()
    try:
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    finally:
        get_settings.cache_clear()


async def test_a_failed_client_webhook_delivery_is_retried_from_the_console(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    dispatcher: WebhookDispatcher,
    clock: ShiftedClock,
    db: Database,
    plain_database_url: str,
) -> None:
    client_id, key = await make_client()
    await make_partner(airports=("BLQ",))
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        created = await http.post(
            ENDPOINTS, json={"url": receiver.hook_url, "events": ["booking.created"]}, headers=bearer(key)
        )
        assert created.status_code == 201, created.text
        receiver.secrets.append(created.json()["secret"])
        found = await http.post(
            "/api/v1/booking-api/search",
            headers=bearer(key),
            json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "BLQ"}),
        )
        booked = await http.post(
            "/api/v1/booking-api/booking", json=booking_body(found.json()["search_id"]), headers=bearer(key)
        )
    reservation_no = booked.json()["booking"]["reservation_no"]
    await dispatcher.run_once()
    assert len(receiver.received) == 1
    clock.advance(timedelta(hours=25))  # past the 24 h delivery window: the next failure ends it
    await dispatcher.run_once()
    async with db.read() as conn:
        ((delivery_id, status),) = (
            await conn.execute(
                select(webhook_deliveries.c.id, webhook_deliveries.c.status)
                .join(client_events, client_events.c.id == webhook_deliveries.c.event_pk)
                .where(client_events.c.client_id == client_id)
            )
        ).all()
    assert status == "failed"

    # the CLI refuses an unknown delivery with one line
    unknown: Result = await asyncio.to_thread(run_cli, plain_database_url, "outbox", "retry", "--webhook", "987654321")
    assert unknown.exit_code == 1 and unknown.stderr == "error: no webhook delivery 987654321\n"

    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/deliveries")
    failed = page.locator("#h-hooks-failed + table")
    row = failed.get_by_role("row").filter(has_text=reservation_no)
    await expect(row).to_contain_text("booking.created")
    await expect(row).to_contain_text("HTTP 500")
    await expect(row.get_by_role("link", name=reservation_no)).to_have_attribute(
        "href", f"/console/bookings/{reservation_no}"
    )
    receiver.status = 200
    await row.get_by_role("button", name="Retry").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Webhook delivery {delivery_id} is pending again")
    await expect(
        page.locator("#h-hooks-pending + table").get_by_role("row").filter(has_text=reservation_no)
    ).to_contain_text("pending")
    await dispatcher.run_once()
    assert len(receiver.received) == 3  # two refused attempts, then the retried one
    assert len({d.headers["webhook-id"] for d in receiver.received}) == 1  # the same event every time
    async with db.read() as conn:
        status = (
            await conn.execute(select(webhook_deliveries.c.status).where(webhook_deliveries.c.id == delivery_id))
        ).scalar_one()
        audit: list[Any] = list(
            (
                await conn.execute(
                    select(admin_audit.c.actor, admin_audit.c.details).where(
                        admin_audit.c.action == "webhook.retry",
                        admin_audit.c.subject == f"webhook_delivery:{delivery_id}",
                    )
                )
            ).all()
        )
    assert status == "delivered"
    assert [(a.actor, a.details["reservation_no"], a.details["client_id"]) for a in audit] == [
        (f"operator:{console.operator.email}", reservation_no, client_id)
    ]
    # delivered now: the CLI and the page refuse a second retry, nothing changes
    again: Result = await asyncio.to_thread(
        run_cli, plain_database_url, "outbox", "retry", "--webhook", str(delivery_id)
    )
    assert again.exit_code == 1 and "was delivered" in again.stderr
    token = await page.locator("input[name=csrf_token]").first.input_value()
    answer = await page.request.post(
        f"{console_url}/deliveries/webhooks/{delivery_id}/retry", form={"csrf_token": token}
    )
    assert answer.status == 409 and "was delivered" in await answer.text()
    assert receiver.received[-1].body["type"] == "booking.created" and receiver.received[-1].signed_by
