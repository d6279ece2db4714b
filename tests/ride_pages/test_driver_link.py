"""The driver link ``/d/{token}`` (docs/rules/ride.md#driver-page) over real HTTP on the session's database:
issued once per booking even when two dispatchers press at once, open from 24 h before to 24 h after
pickup (moved with the injected clock), dead once revoked, replaced by a new token when issued again."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import Ride, accept, book_hosted, services_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings
from transfers.tracking import repository as repo
from transfers.tracking.rules import looks_like_token


@pytest.fixture
async def ride(http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database) -> Ride:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Driver Link Cars")
    return await book_hosted(http, key, "Driver Link Cars", db, partner_id)


async def booking_id(db: Database, ride: Ride) -> int:
    async with db.read() as conn:
        return int(
            (
                await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == ride.reservation_no))
            ).scalar_one()
        )


async def test_issued_once_even_when_pressed_twice_at_once(ride: Ride, database_url: str, clock: ShiftedClock) -> None:
    # Two pools: the two issues really run on two connections at the same time.
    first, second = Database(database_url, pool_size=2), Database(database_url, pool_size=2)
    try:
        key = await booking_id(first, ride)

        async def issue(db: Database, who: str) -> str:
            async with db.write() as conn:
                return (await repo.issue_driver_link(conn, key, actor=who, now=clock.now())).token

        tokens = await asyncio.gather(issue(first, "a"), issue(second, "b"))
        assert tokens[0] == tokens[1] and looks_like_token(tokens[0])
    finally:
        await first.dispose()
        await second.dispose()


async def test_the_window_and_revocation(
    http: httpx.AsyncClient, ride: Ride, db: Database, service: LiveServer, clock: ShiftedClock
) -> None:
    await accept(services_of(service), ride)
    key = await booking_id(db, ride)
    async with db.write() as conn:
        link = await repo.issue_driver_link(conn, key, actor="partner-user:1", now=clock.now())
    url = f"/d/{link.token}"

    def at(delta: timedelta) -> None:
        clock.offset += ride.pickup_at + delta - clock.now()

    at(-timedelta(hours=24, seconds=30))
    page = await http.get(url)
    assert page.status_code == 403 and "Not open yet" in page.text
    at(-timedelta(hours=24) + timedelta(seconds=30))
    page = await http.get(url)
    assert page.status_code == 200
    assert "I&#39;m leaving for the pickup" in page.text and ride.reservation_no in page.text
    assert page.headers["x-robots-tag"] == "noindex, nofollow" and page.headers["referrer-policy"] == "no-referrer"
    at(timedelta(hours=24) - timedelta(seconds=30))
    assert (await http.get(url)).status_code == 200
    at(timedelta(hours=24) + timedelta(seconds=30))
    assert (await http.get(url)).status_code == 410

    at(-timedelta(hours=1))
    async with db.write() as conn:
        assert await repo.revoke_driver_link(conn, key, now=clock.now())
        assert not await repo.revoke_driver_link(conn, key, now=clock.now())  # nothing left to revoke
    page = await http.get(url)
    assert page.status_code == 410 and "withdrew this link" in page.text
    async with db.write() as conn:
        again = await repo.issue_driver_link(conn, key, actor="partner-user:1", now=clock.now())
    assert again.token != link.token and again.active
    assert (await http.get(url)).status_code == 404  # the old URL stays dead: its token is gone
    assert (await http.get(f"/d/{again.token}")).status_code == 200


@pytest.mark.parametrize("token", ["AAAAAAAAAAAAAAAAAAAAAA", "nope", "x" * 4000, "ÄÖÜ" * 8])
async def test_unknown_links_are_404(http: httpx.AsyncClient, token: str) -> None:
    page = await http.get(f"/d/{token}")
    assert page.status_code == 404 and "Link not found" in page.text
