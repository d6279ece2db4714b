"""The traveller's page ``/t/{token}`` and ``/t/{token}.json`` (docs/rules/ride.md#tracking-page) over real
HTTP, on the session's database (SQLite or PostgreSQL): what it shows, what it never shows, its windows
(the driver's phone from 2 h before pickup, 410 from 7 days after it) by moving the injected clock, and
the 404s of unknown and malformed tokens."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import httpx
import pytest

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import (
    DRIVER,
    MEETING_POINT,
    PARTNER_REFERENCE,
    PASSENGER,
    Ride,
    accept,
    book_hosted,
    services_of,
)
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.tracking.rules import looks_like_token


@pytest.fixture
async def ride(http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database) -> Ride:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Clydeside Cars")
    return await book_hosted(http, key, "Clydeside Cars", db, partner_id)


def forbidden(ride: Ride) -> list[str]:
    """What neither form of the page may ever contain (docs/rules/ride.md#tracking-page)."""
    return [
        PASSENGER["email"],
        PASSENGER["phone"],
        ride.booking["price"]["total"],
        ride.client_name,
        PARTNER_REFERENCE,
        "Campbell",  # the driver's surname: the page names the driver by first name only
    ]


async def test_a_new_booking_has_a_128_bit_token_of_its_own(ride: Ride) -> None:
    assert looks_like_token(ride.token) and len(ride.token) >= 22  # 16 random bytes, URL-safe base64


async def test_the_page_of_an_accepted_booking_shows_the_facts_and_nothing_forbidden(
    http: httpx.AsyncClient, ride: Ride, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    clock.offset = ride.pickup_at - timedelta(minutes=90) - clock.now() + clock.offset  # inside the phone window
    page = await http.get(f"/t/{ride.token}")
    assert page.status_code == 200
    html = page.text
    for shown in (
        "Morag",
        "SK21 ABC",
        MEETING_POINT.replace(",", ","),
        "George Square, Glasgow",
        "Glasgow",
        "BA",  # the flight number the test booking carries starts with its airline
        "14:30",
        "Europe/London",
        f"tel:{DRIVER.phone}",
        "Your driver has not set off yet",
        "Confirmed",
    ):
        assert shown in html, shown
    assert re.search(r"14:30 <small>(GMT|BST)</small>", html)
    for secret in forbidden(ride):
        assert secret not in html, secret
    assert page.headers["x-robots-tag"] == "noindex, nofollow"
    assert '<meta name="robots" content="noindex, nofollow">' in html
    assert '<meta http-equiv="refresh" content="30">' in html
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "http" not in csp
    assert "<script" not in html  # the traveller's page needs no script at all
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from another host

    answer = await http.get(f"/t/{ride.token}.json")
    assert answer.status_code == 200
    facts = answer.json()
    assert facts["status"] == "APPROVED" and facts["stage"] == "NOT_STARTED"
    assert facts["driver"] == {"first_name": "Morag", "plate": "SK21 ABC", "phone": DRIVER.phone}
    assert facts["meeting_point"] == MEETING_POINT
    assert facts["pickup"]["name"] and facts["dropoff"]["name"] == "George Square, Glasgow"
    assert facts["pickup"]["time_zone"] == "Europe/London"
    assert facts["pickup"]["local_time"].endswith(("+00:00", "+01:00")) and "T14:30" in facts["pickup"]["local_time"]
    assert facts["vehicle"]["make"] and facts["flight"]["number"]
    assert facts["position"] is None and facts["refresh_seconds"] == 30
    text = json.dumps(facts, ensure_ascii=False)
    for secret in forbidden(ride):
        assert secret not in text, secret
    for key in ("price", "passenger", "client", "partner_reference", "email", "total"):
        assert key not in facts
    assert answer.headers["x-robots-tag"] == "noindex, nofollow"


async def test_the_drivers_phone_only_from_two_hours_before_pickup_until_the_ride_ends(
    http: httpx.AsyncClient, ride: Ride, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)

    def at(moment_from_pickup: timedelta) -> None:
        clock.offset += ride.pickup_at + moment_from_pickup - clock.now()

    at(-timedelta(hours=2, minutes=1))
    facts = (await http.get(f"/t/{ride.token}.json")).json()
    assert facts["driver"]["phone"] is None and facts["driver"]["first_name"] == "Morag"
    html = (await http.get(f"/t/{ride.token}")).text
    assert DRIVER.phone not in html and "appears here from" in html
    at(-timedelta(hours=2) + timedelta(seconds=30))
    assert (await http.get(f"/t/{ride.token}.json")).json()["driver"]["phone"] == DRIVER.phone
    assert f"tel:{DRIVER.phone}" in (await http.get(f"/t/{ride.token}")).text
    at(timedelta(hours=3))  # still APPROVED: the ride has not ended
    assert (await http.get(f"/t/{ride.token}.json")).json()["driver"]["phone"] == DRIVER.phone


async def test_a_booking_waiting_for_its_partner_shows_no_driver(http: httpx.AsyncClient, ride: Ride) -> None:
    facts = (await http.get(f"/t/{ride.token}.json")).json()
    assert facts["status"] == "PENDING_APPROVAL" and facts["driver"] is None and facts["meeting_point"] is None
    assert facts["stage"] is None
    html = (await http.get(f"/t/{ride.token}")).text
    assert "waiting for the transport company to confirm" in html


async def test_usable_until_seven_days_after_pickup_then_410(
    http: httpx.AsyncClient, ride: Ride, clock: ShiftedClock
) -> None:
    clock.offset += ride.pickup_at + timedelta(days=7) - timedelta(seconds=30) - clock.now()
    assert (await http.get(f"/t/{ride.token}")).status_code == 200
    clock.offset += timedelta(minutes=1)
    page = await http.get(f"/t/{ride.token}")
    assert page.status_code == 410 and "closed" in page.text
    assert PASSENGER["email"] not in page.text and page.headers["x-robots-tag"] == "noindex, nofollow"
    answer = await http.get(f"/t/{ride.token}.json")
    assert answer.status_code == 410 and answer.json()["status"] == "Error"


@pytest.mark.parametrize(
    "token",
    [
        "AAAAAAAAAAAAAAAAAAAAAA",  # well formed, unknown
        "short",
        "x" * 33,
        "x" * 5000,
        "ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ",
        "%00%00%00%00%00%00%00%00%00%00%00",
        "a'%20OR%20'1'='1'--aaaaaa",
    ],
)
async def test_unknown_and_malformed_tokens_are_404(http: httpx.AsyncClient, token: str) -> None:
    page = await http.get(f"/t/{token}")
    assert page.status_code == 404 and "Transfer not found" in page.text
    answer = await http.get(f"/t/{token}.json")
    assert answer.status_code == 404 and answer.json()["status"] == "Error"


async def test_a_token_is_its_own_booking_only(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Two Rides Ltd")
    first = await book_hosted(http, key, "Two Rides Ltd", db, partner_id)
    second = await book_hosted(http, key, "Two Rides Ltd", db, partner_id)
    assert first.token != second.token
    assert (await http.get(f"/t/{first.token}.json")).json()["reservation_no"] == first.reservation_no
    assert (await http.get(f"/t/{second.token}.json")).json()["reservation_no"] == second.reservation_no
    # Case matters: a token differing in one letter's case is another (unknown) token.
    assert (await http.get(f"/t/{first.token.swapcase()}.json")).status_code == 404
