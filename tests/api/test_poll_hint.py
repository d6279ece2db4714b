"""GET booking tells a poller when to ask again (``Retry-After``) while the booking
waits for its partner, and says nothing once it is settled; documented in the OpenAPI document."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.api.test_cancel_and_get import BOOKING, DRIVER, IATA, book, get
from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.servers import LiveServer, serving
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.config import Settings


async def test_pending_approval_carries_retry_after_and_approved_does_not(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    _, _, partner_key = await make_partner(airports=(IATA,), create_status="PENDING")
    waiting = await book(http, key)
    read = await get(http, key, reservation_no=waiting["reservation_no"])
    assert read.json()["status"] == "PENDING_APPROVAL"
    assert read.headers["retry-after"] == "2"  # sandbox: the built-in partner approves within seconds
    update = {"reservation_no": waiting["reservation_no"], "status": "APPROVED", "driver_info": DRIVER}
    approved = await http.put("/api/v1/reverse/booking/update", json=update, headers=bearer(partner_key))
    assert approved.status_code == 200, approved.text
    read = await get(http, key, reservation_no=waiting["reservation_no"])
    assert read.json()["status"] == "APPROVED" and "retry-after" not in read.headers


def test_the_hint_defaults_by_environment_and_can_be_set() -> None:
    assert Settings(environment="sandbox").approval_retry_after == 2
    assert Settings(environment="live", secret_key="k").approval_retry_after == 600
    assert Settings(environment="live", secret_key="k", approval_poll_seconds=45).approval_retry_after == 45


async def test_a_configured_hint_is_what_get_booking_sends(
    database_url: str,
    workdir: Path,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    app = create_app(make_settings(database_url, workdir, approval_poll_seconds=45), clock=clock, configure_logs=False)
    async with serving(app) as server, httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        _, key = await make_client()
        await make_partner(airports=(IATA,), create_status="PENDING")
        waiting = await book(http, key)
        read = await get(http, key, reservation_no=waiting["reservation_no"])
        assert read.headers["retry-after"] == "45"


async def test_the_openapi_document_describes_the_header(service: LiveServer, http: httpx.AsyncClient) -> None:
    document = (await http.get("/openapi.json")).json()
    answer = document["paths"][BOOKING]["get"]["responses"]["200"]
    assert "Retry-After" in answer["headers"] and "PENDING_APPROVAL" in answer["headers"]["Retry-After"]["description"]
