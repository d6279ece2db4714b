"""Capability tokens stay secret (docs/operations/security.md): the access log and every other log line
keep at most a token's first 4 characters, and a driver page takes at most one position per link every
3 s (more: 429), on the injected clock, over real HTTP on the session's database."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
import structlog

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import Ride, accept, book_hosted, services_of
from tests.ride_pages.test_driver_link import booking_id
from tests.servers import LiveServer
from transfers import logging as transfers_logging
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.logging import configure_logging, redact_path, redact_url
from transfers.tracking import repository as links

TOKEN = "AbCdEfGhIjKlMnOpQrStUv"


@pytest.mark.parametrize(
    ("given", "logged"),
    [
        (f"/t/{TOKEN}", "/t/AbCd…"),
        (f"/t/{TOKEN}.json", "/t/AbCd…"),
        (f"/d/{TOKEN}/positions", "/d/AbCd…/positions"),
        (f"/m/{TOKEN}", "/m/AbCd…"),
        (f"/r/{TOKEN}/", "/r/AbCd…/"),
        ("/t/abc", "/t/abc"),  # nothing to hide beyond 4 characters
        ("/api/v1/booking-api/booking", "/api/v1/booking-api/booking"),
        ("/console/t/x", "/console/t/x"),
    ],
)
def test_a_path_keeps_four_characters_of_a_token(given: str, logged: str) -> None:
    assert redact_path(given) == logged
    assert redact_url(f"https://transfers.example{given}") == f"https://transfers.example{logged}"


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The service's logs (the access line and the rest) written as JSON to a buffer; restored after."""
    saved = structlog.get_config()
    buffer, real = io.StringIO(), sys.stdout
    sys.stdout = buffer
    try:
        configure_logging("INFO", "json")
    finally:
        sys.stdout = real
    try:
        yield buffer
    finally:
        structlog.configure(**saved)
        transfers_logging._access = None


@pytest.fixture
async def ride(http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database) -> Ride:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Token Cars")
    return await book_hosted(http, key, "Token Cars", db, partner_id)


async def driver_page(db: Database, ride: Ride, clock: ShiftedClock) -> tuple[str, str]:
    async with db.write() as conn:
        link = await links.issue_driver_link(conn, await booking_id(db, ride), actor="tests", now=clock.now())
    return link.token, f"/d/{link.token}"


async def test_no_log_line_holds_a_whole_token(
    http: httpx.AsyncClient, ride: Ride, db: Database, service: LiveServer, clock: ShiftedClock, log_lines: io.StringIO
) -> None:
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=30) - clock.now()
    token, page = await driver_page(db, ride, clock)
    answers = [
        await http.get(f"/t/{ride.token}"),
        await http.get(f"/t/{ride.token}.json"),
        await http.get(page),
        await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_PICKUP"}),
        await http.post(f"{page}/positions", json={"lat": 55.89, "lng": -4.39}),
        await http.get(f"/t/{TOKEN}"),
    ]
    assert [a.status_code for a in answers] == [200, 200, 200, 303, 200, 404]
    text = log_lines.getvalue()
    assert text.count('"event":"request"') >= len(answers)
    for secret in (ride.token, token, TOKEN):
        assert secret not in text
    assert f'"path":"/d/{token[:4]}…/positions"' in text and f'"path":"/t/{ride.token[:4]}…"' in text


async def test_a_driver_link_takes_one_position_every_three_seconds(
    http: httpx.AsyncClient, ride: Ride, db: Database, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    clock.offset += ride.pickup_at - timedelta(minutes=30) - clock.now()
    _, page = await driver_page(db, ride, clock)
    assert (await http.post(f"{page}/events", data={"type": "DRIVER_DEPARTED_TO_PICKUP"})).status_code == 303
    position = {"lat": 55.89, "lng": -4.39}

    first = await http.post(f"{page}/positions", json=position)
    assert first.status_code == 200 and first.json()["accepted"] == 1
    again = await http.post(f"{page}/positions", json=position)
    assert again.status_code == 429 and again.headers["retry-after"] == "3"
    assert "One position every 3 s" in again.json()["message"]
    # The session's clock runs on from real time too: 2 s on is still inside the 3 s (a slow machine has
    # a second to spare), and a refused post moves nothing, so 3 s after the first one is accepted.
    clock.offset += timedelta(seconds=2)
    assert (await http.post(f"{page}/positions", json=position)).status_code == 429
    clock.offset += timedelta(seconds=1)
    assert (await http.post(f"{page}/positions", json=position)).status_code == 200
