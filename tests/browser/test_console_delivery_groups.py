"""The Deliveries page groups failing deliveries by partner and by client webhook
endpoint (one dead endpoint is one line with its count, not a row per delivery), says what went wrong
in words ("could not connect", not ``ClientConnectorError``), names clients, and lets an admin
disable a client's endpoint there: CSRF-checked, audited, its pending deliveries stopped; support
sees no such button and is refused the post."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from playwright.async_api import expect
from sqlalchemy import select

from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer, free_port
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, clients, webhook_deliveries, webhook_endpoints
from transfers.deliveries import webhook_dispatcher
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
BOOKINGS = 3


@pytest.fixture
async def dispatcher(service: LiveServer) -> AsyncIterator[WebhookDispatcher]:
    svc: Services = service.app.state.services
    made = webhook_dispatcher(svc)
    yield made
    await made.aclose()


async def test_a_dead_endpoint_is_one_line_in_words_and_an_admin_disables_it(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    dispatcher: WebhookDispatcher,
    db: Database,
) -> None:
    client_id, key = await make_client()
    await make_partner(airports=("PSA",))
    dead = f"http://127.0.0.1:{free_port()}/hooks"  # nothing listens: connection refused
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        created = await http.post(ENDPOINTS, json={"url": dead, "events": ["*"]}, headers=bearer(key))
        assert created.status_code == 201, created.text
        endpoint_id = created.json()["id"]
        for _ in range(BOOKINGS):
            found = await http.post(
                "/api/v1/booking-api/search",
                headers=bearer(key),
                json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "PSA"}),
            )
            booked = await http.post(
                "/api/v1/booking-api/booking", json=booking_body(found.json()["search_id"]), headers=bearer(key)
            )
            assert booked.status_code == 200, booked.text
    await dispatcher.run_once()
    async with db.read() as conn:
        name = (await conn.execute(select(clients.c.name).where(clients.c.id == client_id))).scalar_one()
        pending = (
            await conn.execute(
                select(webhook_deliveries.c.id)
                .join(webhook_endpoints, webhook_endpoints.c.id == webhook_deliveries.c.endpoint_id)
                .where(webhook_endpoints.c.public_id == endpoint_id, webhook_deliveries.c.status == "pending")
            )
        ).all()
    assert len(pending) >= BOOKINGS  # booking.created and the partner's answer, per booking

    support = await console_as("support")
    # the dashboard: client webhook failures have their own table, and no row reads "0 of 0"
    hooks = support.page.locator("#webhook-errors + table").get_by_role("row").filter(has_text=name)
    await expect(hooks).to_contain_text(dead)
    await expect(hooks.locator("td.num").nth(1)).to_have_text(str(len(pending)))  # being retried
    assert "0 of 0" not in await support.page.locator("main").inner_text()
    await support.page.goto(f"{console_url}/deliveries")
    line = support.page.locator("#h-by-endpoint + table").get_by_role("row").filter(has_text=endpoint_id)
    await expect(line).to_have_count(1)
    await expect(line).to_contain_text(name)
    await expect(line).to_contain_text("could not connect")
    await expect(line.get_by_role("button", name="Disable")).to_have_count(0)
    refused = await support.page.request.post(
        f"{console_url}/deliveries/endpoints/{endpoint_id}/disable", form={"csrf_token": "x"}
    )
    assert refused.status == 403

    admin = await console_as("admin")
    page = admin.page
    await page.goto(f"{console_url}/deliveries")
    body = await page.locator("main").inner_text()
    assert "ClientConnectorError" not in body and "ConnectError" not in body
    line = page.locator("#h-by-endpoint + table").get_by_role("row").filter(has_text=endpoint_id)
    await expect(line.locator("td.num").nth(1)).to_have_text(str(len(pending)))  # pending, counted once
    hook_rows = page.locator("#h-hooks-pending + table").get_by_role("row").filter(has_text=name)
    await expect(hook_rows.first).to_contain_text(name)  # clients by name in the per-delivery rows too
    forged = await page.request.post(f"{console_url}/deliveries/endpoints/{endpoint_id}/disable", form={})
    assert forged.status == 403  # no CSRF token: nothing done
    page.once("dialog", lambda dialog: dialog.accept())
    await line.get_by_role("button", name="Disable").click()
    await expect(page.get_by_role("status")).to_contain_text(
        f"Endpoint {endpoint_id} is disabled; {len(pending)} pending deliveries to it were stopped."
    )
    async with db.read() as conn:
        state = (
            await conn.execute(
                select(webhook_endpoints.c.status, webhook_endpoints.c.disabled_reason).where(
                    webhook_endpoints.c.public_id == endpoint_id
                )
            )
        ).one()
        statuses = (
            await conn.execute(
                select(webhook_deliveries.c.status)
                .join(webhook_endpoints, webhook_endpoints.c.id == webhook_deliveries.c.endpoint_id)
                .where(webhook_endpoints.c.public_id == endpoint_id)
            )
        ).scalars()
        audit = (
            await conn.execute(
                select(admin_audit.c.actor, admin_audit.c.subject, admin_audit.c.details).where(
                    admin_audit.c.action == "webhook_endpoint.disable"
                )
            )
        ).all()
    assert state.status == "disabled" and state.disabled_reason == f"disabled by operator:{admin.operator.email}"
    assert set(statuses) == {"failed"}
    assert [(a.actor, a.subject, a.details["endpoint_id"]) for a in audit if a.subject == f"client:{client_id}"] == [
        (f"operator:{admin.operator.email}", f"client:{client_id}", endpoint_id)
    ]
    again = await page.locator("#h-by-endpoint + table").get_by_role("row").filter(has_text=endpoint_id).all()
    for row in again:  # still listed (its failed deliveries), no longer with a Disable button
        await expect(row.get_by_role("button", name="Disable")).to_have_count(0)
