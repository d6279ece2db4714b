"""Operators see client webhook deliveries beside partner deliveries in ``transfers outbox list``
(``w<id>``, ``webhook:<type>``) and retry a failed one with ``transfers outbox retry w<id>``."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import httpx

from tests.browser.test_console_webhooks import run_cli
from tests.clientapi.test_webhook_delivery import Receivers, receivers, subscribe  # noqa: F401 (fixture)
from tests.conftest import ClientFactory, bearer
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.deliveries import webhook_dispatcher

ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"


async def test_outbox_list_and_retry_cover_client_webhook_deliveries(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    receivers: Receivers,  # noqa: F811
    clock: ShiftedClock,
    plain_database_url: str,
) -> None:
    client_id, key = await make_client()
    receiver = await receivers(status=500)
    endpoint = await subscribe(http, key, receiver)
    event_id = (await http.post(f"{ENDPOINTS}/{endpoint}/test", headers=bearer(key))).json()["event_id"]
    dispatcher = webhook_dispatcher(service.app.state.services)
    try:
        for _ in range(12):  # every retry fails, until 24 h after the event: failed
            await dispatcher.run_once()
            clock.advance(timedelta(hours=3))
    finally:
        await dispatcher.aclose()
    listed = await asyncio.to_thread(
        run_cli, plain_database_url, "outbox", "list", "--failed", "--json", "--limit", "1000"
    )
    assert listed.exit_code == 0, listed.output
    [row] = [r for r in json.loads(listed.output) if r.get("event_id") == event_id]
    assert row["id"].startswith("w") and row["kind"] == "webhook:ping" and row["status"] == "failed"
    assert row["client_id"] == client_id and row["last_http_status"] == 500 and row["source"] == "webhook"
    assert row["attempts"] >= 5 and "gave up 24 h after the event" in row["last_error"]
    table = await asyncio.to_thread(run_cli, plain_database_url, "outbox", "list", "--limit", "1000")
    [line] = [ln for ln in table.output.splitlines() if ln.lstrip().startswith(row["id"] + " ")]
    assert "webhook:ping" in line and f"client {client_id}" in line and " failed " in line

    receiver.status = 200
    retried = await asyncio.to_thread(run_cli, plain_database_url, "outbox", "retry", row["id"])
    assert retried.exit_code == 0, retried.output
    assert json.loads(retried.output)["event_id"] == event_id
    again = await asyncio.to_thread(run_cli, plain_database_url, "outbox", "retry", row["id"])
    assert again.exit_code == 1 and "still pending" in again.output
    bad = await asyncio.to_thread(run_cli, plain_database_url, "outbox", "retry", "wx")
    assert bad.exit_code == 2
    clock.offset = timedelta()
    dispatcher = webhook_dispatcher(service.app.state.services)
    try:
        await dispatcher.run_once()
    finally:
        await dispatcher.aclose()
    assert receiver.received[-1].headers["webhook-id"] == event_id
    log = (await http.get(f"{ENDPOINTS}/{endpoint}/deliveries", headers=bearer(key))).json()["data"]
    assert log[0]["status"] == "delivered"
