"""The search-side partner snapshot (``partners/directory.py``): read once per TTL, shared by
concurrent searches, and a partner change reaches searches within the TTL, never later."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, ShiftedClock, bearer, make_settings
from tests.helpers import search_body
from tests.servers import LiveServer
from transfers.app import create_app
from transfers.db.engine import Database
from transfers.partners import repository as partners_repo
from transfers.partners.directory import PartnerDirectory
from transfers.partners.secrets_box import SecretBox, resolve_secret_key

SEARCH = "/api/v1/booking-api/search"
TTL = 0.6


def body_for(iata: str) -> dict[str, object]:
    return search_body(pickup_location={"type": "AIRPORT", "iata_code": iata})


async def _set_status(db: Database, partner_id: int, status: str) -> None:
    async with db.write() as conn:
        await partners_repo.set_status(conn, partner_id, status)


@pytest.fixture
def box(database_url: str, workdir: Path) -> SecretBox:
    return SecretBox(resolve_secret_key(make_settings(database_url, workdir)))


async def test_one_read_per_ttl_shared_by_concurrent_callers(
    db: Database, box: SecretBox, make_partner: PartnerFactory
) -> None:
    _, partner_id, _ = await make_partner(airports=("HEL",), name="Helsinki Cabs")
    directory = PartnerDirectory(db, box, TTL)
    first = await asyncio.gather(*(directory.snapshot() for _ in range(20)))
    assert all(s is first[0] for s in first)  # one read for all twenty
    assert [r.name for r, _ in first[0].serving("HEL")] == ["Helsinki Cabs"]
    assert {"SEDAN", "MINIVAN"} <= first[0].vehicle_types
    ((record, endpoint),) = first[0].serving("HEL")
    assert endpoint.signing_secret.startswith("whsec_") and endpoint.partner_id == partner_id == record.partner_id

    await _set_status(db, partner_id, "disabled")
    assert await directory.snapshot() is first[0]  # within the TTL: the snapshot as read
    await asyncio.sleep(TTL + 0.05)
    later = await directory.snapshot()
    assert later is not first[0] and later.serving("HEL") == []


async def test_ttl_zero_reads_every_time(db: Database, box: SecretBox, make_partner: PartnerFactory) -> None:
    _, partner_id, _ = await make_partner(airports=("RIX",))
    directory = PartnerDirectory(db, box, 0)
    first = await directory.snapshot()
    assert len(first.serving("RIX")) == 1
    await _set_status(db, partner_id, "disabled")
    assert (await directory.snapshot()).serving("RIX") == []


async def test_a_failed_read_is_not_cached(db: Database, box: SecretBox, make_partner: PartnerFactory) -> None:
    """A database that cannot be reached fails that search (503 upstream); the next one reads again
    rather than living on an error or an empty list for the TTL."""
    await make_partner(airports=("TLL",))
    unreachable = Database("postgresql+asyncpg://nobody@127.0.0.1:1/none", pool_size=1, pool_timeout=0.5)
    directory = PartnerDirectory(unreachable, box, 60)
    try:
        with pytest.raises(OSError, match=r"(?i)connect"):
            await directory.snapshot()
    finally:
        await unreachable.dispose()
    directory._db = db  # the same directory, now with a reachable database
    assert len((await directory.snapshot()).serving("TLL")) == 1


@pytest.fixture
async def cached_app(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[httpx.AsyncClient]:
    settings = make_settings(database_url, workdir, partner_cache_seconds=TTL)
    server = await LiveServer(create_app(settings, clock=clock, configure_logs=False)).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            yield http
    finally:
        await server.stop(graceful=True)


async def test_searches_stop_asking_a_disabled_partner_within_the_ttl(
    cached_app: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    partner, partner_id, _ = await make_partner(airports=("VNO",), name="Vilnius Vans")
    first = await cached_app.post(SEARCH, json=body_for("VNO"), headers=bearer(key))
    assert {v["company"] for v in first.json()["vehicles"]} == {"Vilnius Vans"}
    await _set_status(db, partner_id, "disabled")
    disabled_at = time.monotonic()
    asked_after: list[float] = []
    while True:
        answer = await cached_app.post(SEARCH, json=body_for("VNO"), headers=bearer(key))
        assert answer.status_code == 200
        if not answer.json()["vehicles"]:
            break
        asked_after.append(time.monotonic() - disabled_at)
        assert asked_after[-1] <= TTL + 0.2, "a disabled partner was still asked after the TTL"
        await asyncio.sleep(0.05)
    calls = len(partner.calls("/booking/search"))
    await cached_app.post(SEARCH, json=body_for("VNO"), headers=bearer(key))
    assert len(partner.calls("/booking/search")) == calls  # and never again


async def test_an_enabled_partner_is_asked_within_the_ttl(
    cached_app: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    partner, partner_id, _ = await make_partner(airports=("KUN",), name="Kaunas Cars")
    await _set_status(db, partner_id, "disabled")
    assert (await cached_app.post(SEARCH, json=body_for("KUN"), headers=bearer(key))).json()["vehicles"] == []
    await _set_status(db, partner_id, "enabled")
    enabled_at = time.monotonic()
    while not (await cached_app.post(SEARCH, json=body_for("KUN"), headers=bearer(key))).json()["vehicles"]:
        assert time.monotonic() - enabled_at <= TTL + 0.2, "an enabled partner was not asked within the TTL"
        await asyncio.sleep(0.05)
    assert partner.calls("/booking/search")
