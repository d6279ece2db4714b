"""The search-side partner snapshot (``partners/directory.py``): read once per TTL, shared by
concurrent searches, and a partner change reaches searches within the TTL, never later. Refreshed in
the background in the TTL's last fifth; not read again while its mark is unchanged."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import delete, insert

from tests.conftest import ClientFactory, PartnerFactory, ShiftedClock, bearer, make_settings
from tests.helpers import search_body
from tests.servers import LiveServer
from transfers.app import create_app
from transfers.db.engine import Database
from transfers.db.tables import vehicle_types
from transfers.hosted import service as hosted_service
from transfers.partners import repository as partners_repo
from transfers.partners.directory import REFRESH_AHEAD, PartnerDirectory, Snapshot
from transfers.partners.rotation import rotate_signing_secret
from transfers.partners.secrets_box import SecretBox, resolve_secret_key

SEARCH = "/api/v1/booking-api/search"
TTL = 0.6


def body_for(iata: str) -> dict[str, object]:
    return search_body(pickup_location={"type": "AIRPORT", "iata_code": iata})


async def _set_status(db: Database, partner_id: int, status: str) -> None:
    async with db.write() as conn:
        await partners_repo.set_status(conn, partner_id, status)


START = 1000.0


class Ticks:
    """The directory's monotonic clock, moved by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


class CountedReads:
    """Counts the directory's full reads (the mark checks are not counted)."""

    def __init__(self, directory: PartnerDirectory) -> None:
        self.count = 0
        original = directory._read

        async def counted() -> tuple[Snapshot, str | None]:
            self.count += 1
            return await original()

        directory._read = counted  # type: ignore[method-assign]


async def _background(directory: PartnerDirectory) -> asyncio.Task[Snapshot]:
    """The refresh under way, checked to be running (not finished)."""
    task = directory._loading
    assert task is not None and not task.done()
    return task


async def await_background(directory: PartnerDirectory) -> Snapshot:
    """The last refresh's outcome (it may have finished already)."""
    assert directory._loading is not None
    return await directory._loading


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


TEN = 10.0
AHEAD_AT = TEN * (1 - REFRESH_AHEAD)  # 8 s: from then on a search starts a refresh


async def test_in_the_ttl_s_last_fifth_the_snapshot_is_refreshed_in_the_background(
    db: Database, box: SecretBox, make_partner: PartnerFactory
) -> None:
    _, partner_id, _ = await make_partner(airports=("OUL",), name="Oulu Taxi")
    ticks = Ticks()
    directory = PartnerDirectory(db, box, TEN, monotonic=ticks)
    first = await directory.snapshot()
    loaded = directory._loading
    assert [r.name for r, _ in first.serving("OUL")] == ["Oulu Taxi"]
    await _set_status(db, partner_id, "disabled")

    ticks.now = START + AHEAD_AT - 0.01
    assert await directory.snapshot() is first
    assert directory._loading is loaded  # not yet in the TTL's last fifth: nothing started

    ticks.now = START + AHEAD_AT + 0.01
    assert await directory.snapshot() is first  # answered at once from the snapshot it has...
    refresh = await _background(directory)  # ...while the refresh runs
    fresh = await refresh
    assert fresh is not first and fresh.serving("OUL") == []
    assert await directory.snapshot() is fresh
    assert directory._loading is refresh  # fresh again: no second refresh


async def test_a_search_waits_once_the_snapshot_is_a_ttl_old(
    db: Database, box: SecretBox, make_partner: PartnerFactory
) -> None:
    """The hard bound: a snapshot whose read began a TTL ago is never answered, even while its
    refresh is slow; every search then waits for that one refresh."""
    _, partner_id, _ = await make_partner(airports=("TMP",))
    ticks = Ticks()
    directory = PartnerDirectory(db, box, TEN, monotonic=ticks)
    first = await directory.snapshot()
    await _set_status(db, partner_id, "disabled")
    gate = asyncio.Event()
    refresh = directory._refresh

    async def slow() -> Snapshot:
        await gate.wait()
        return await refresh()

    directory._refresh = slow  # type: ignore[method-assign]
    ticks.now = START + TEN - 0.01
    assert await directory.snapshot() is first  # the slow refresh started, the snapshot still good
    ticks.now = START + TEN
    waiting = [asyncio.ensure_future(directory.snapshot()) for _ in range(3)]
    for _ in range(5):
        await asyncio.sleep(0)
    assert not any(w.done() for w in waiting)
    gate.set()
    fresh = await asyncio.gather(*waiting)
    assert fresh[0] is fresh[1] is fresh[2] is not first and fresh[0].serving("TMP") == []


async def test_a_failed_background_refresh_leaves_the_snapshot_to_its_bound(
    db: Database, box: SecretBox, make_partner: PartnerFactory
) -> None:
    await make_partner(airports=("KEM",))
    ticks = Ticks()
    directory = PartnerDirectory(db, box, TEN, monotonic=ticks)
    first = await directory.snapshot()

    async def failing() -> Snapshot:
        raise OSError("connection refused")

    directory._refresh = failing  # type: ignore[method-assign]
    ticks.now = START + AHEAD_AT
    assert await directory.snapshot() is first
    with pytest.raises(OSError, match="refused"):
        await await_background(directory)
    ticks.now = START + TEN - 0.01
    assert await directory.snapshot() is first  # a failed refresh does not shorten the bound
    ticks.now = START + TEN
    with pytest.raises(OSError, match="refused"):  # past it, the search waits for a read, and sees it fail
        await directory.snapshot()


async def test_unchanged_partners_are_not_read_again(
    db: Database, box: SecretBox, make_partner: PartnerFactory
) -> None:
    await make_partner(airports=("JOE",))
    ticks = Ticks()
    directory = PartnerDirectory(db, box, TEN, monotonic=ticks)
    reads = CountedReads(directory)
    first = await directory.snapshot()
    ticks.now = START + TEN - 0.01
    assert await directory.snapshot() is first
    again = await await_background(directory)
    assert again is first and reads.count == 1  # the mark alone was read
    ticks.now += TEN - 0.01  # the check counts as a read: a TTL from its start, not from the first read
    assert await directory.snapshot() is first
    await await_background(directory)
    assert reads.count == 1


async def test_every_kind_of_partner_change_is_seen_by_the_next_refresh(
    db: Database, box: SecretBox, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    """Whatever the write (a rotation, coverage, markup, a vehicle type, the hosted flag and a rate
    card), the refresh after it reads it: the mark changed with it."""
    _, partner_id, _ = await make_partner(airports=("KAJ",), markup="10")
    ticks = Ticks()
    directory = PartnerDirectory(db, box, TEN, monotonic=ticks)

    async def next_snapshot() -> Snapshot:
        ticks.now += TEN
        return await directory.snapshot()

    def mine(snapshot: Snapshot) -> tuple[object, ...]:
        return next((record, point) for record, point in snapshot.partners if record.partner_id == partner_id)

    (_, point) = mine(await directory.snapshot())
    rotated = await rotate_signing_secret(db, clock, box, partner_id, overlap=timedelta(hours=1), actor="tests")
    (_, point_after) = mine(await next_snapshot())
    assert point_after.signing_secret == rotated.signing_secret != point.signing_secret  # type: ignore[attr-defined]
    assert point_after.previous_signing_secret == point.signing_secret  # type: ignore[attr-defined]

    async with db.write() as conn:
        await partners_repo.update_partner(conn, partner_id, airports="KAJ,KOK", markup_percent="12.5")
    snapshot = await next_snapshot()
    assert [r.partner_id for r, _ in snapshot.serving("KOK")] == [partner_id]
    assert str(mine(snapshot)[0].markup_percent) == "12.500"  # type: ignore[attr-defined]

    async with db.write() as conn:
        await conn.execute(insert(vehicle_types).values(name="TEST_DIRECTORY_LIMO"))
    try:
        assert "TEST_DIRECTORY_LIMO" in (await next_snapshot()).vehicle_types
    finally:
        async with db.write() as conn:
            await conn.execute(delete(vehicle_types).where(vehicle_types.c.name == "TEST_DIRECTORY_LIMO"))
    assert "TEST_DIRECTORY_LIMO" not in (await next_snapshot()).vehicle_types

    async with db.write() as conn:
        await partners_repo.update_partner(conn, partner_id, hosted=True)
    snapshot = await next_snapshot()
    assert snapshot.serving("KAJ") == [] and snapshot.hosted_serving("KAJ") == []  # hosted, no card yet
    example = json.loads((Path(__file__).parents[2] / "examples" / "rate-card.json").read_text())
    await hosted_service.set_rate_card(db, clock, partner_id, example, actor="tests")
    snapshot = await next_snapshot()
    assert [r.partner_id for r, _ in snapshot.hosted_serving("KAJ")] == [partner_id]
    async with db.write() as conn:
        await partners_repo.update_partner(conn, partner_id, hosted=False)
