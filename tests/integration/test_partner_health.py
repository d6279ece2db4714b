"""Partner health from the database (docs/rules/console.md) on both databases: search calls counted
per partner and minute by outcome with a latency summary, added to by any process, kept across a
restart, summed over the last hour with the partner's deliveries, and pruned after 30 days."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.jobs import scheduled
from transfers.partners import health, health_repository
from transfers.partners.health import HealthBuffer, PartnerHealth, minute_of
from transfers.services import Services

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


async def search_at(http: httpx.AsyncClient, key: str, iata: str) -> dict[str, Any]:
    response = await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": iata}), headers=bearer(key)
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def flush_now(svc: Services) -> None:
    async def write(tallies: dict[health.Key, health.Tally]) -> None:
        await health_repository.add_tallies(svc.db, tallies)

    await health.flush(svc.health, write)


async def report_when(
    db: Database, clock: ShiftedClock, partner_ids: list[int], calls: int
) -> dict[int, PartnerHealth]:
    """The last-hour report once every partner shows ``calls`` search calls. The service's own
    flusher runs every few seconds beside the test's explicit flush, and may hold counts it took
    in a transaction not committed yet: wait (bounded) rather than race it."""
    report: dict[int, PartnerHealth] = {}
    for _ in range(100):
        async with db.read() as conn:
            report = {h.partner_id: h for h in await health_repository.last_hour(conn, clock.now(), partner_ids)}
        if all(report[p].search_calls >= calls for p in partner_ids):
            return report
        await asyncio.sleep(0.1)
    return report


async def test_search_calls_are_counted_per_partner_and_minute_by_outcome(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    _, good, _ = await make_partner(airports=("EDI",), name="Good Cars")
    _, broken, _ = await make_partner(airports=("EDI",), mode="status", status_code=500)
    _, html, _ = await make_partner(airports=("EDI",), mode="invalid_json")
    _, liar, _ = await make_partner(airports=("EDI",), mode="garbage", garbage={"vehicles": "none"})
    _, slow, _ = await make_partner(airports=("EDI",), mode="slow", delay=5.0)  # past the 1 s test deadline
    ids = [good, broken, html, liar, slow]
    for _ in range(3):
        answer = await search_at(http, key, "EDI")
        assert {v["company"] for v in answer["vehicles"]} == {"Good Cars"}
    await flush_now(svc_of(service))
    report = await report_when(db, clock, ids, 3)
    assert [report[p].search_calls for p in ids] == [3, 3, 3, 3, 3]
    assert [report[p].errors for p in ids] == [0, 3, 3, 3, 3]
    assert report[good].errors_by_outcome == {}
    assert report[broken].errors_by_outcome == {"http_error": 3}
    assert report[html].errors_by_outcome == {"invalid": 3}  # 200 with a body that is not JSON
    assert report[liar].errors_by_outcome == {"invalid": 3}  # JSON that breaks the wire contract
    assert report[slow].errors_by_outcome == {"timeout": 3}
    slow_p95 = report[slow].p95_latency_ms
    assert slow_p95 is not None and 1000 <= slow_p95 <= 1500  # the 1 s deadline, at bucket resolution
    good_p95 = report[good].p95_latency_ms
    assert good_p95 is not None and 0 <= good_p95 < 1000
    assert report[good].name == "Good Cars" and report[good].status == "enabled"
    assert report[good].deliveries_pending == 0 and report[good].deliveries_failed == 0
    async with db.read() as conn:
        rows = await health_repository.minute_rows(conn, slow)
    # aggregated: a row per minute (two if the searches straddled a minute boundary), never per call
    assert 1 <= len(rows) <= 2 and sum(r["calls"] for r in rows) == 3
    assert sum(r["outcome_timeout"] for r in rows) == 3
    assert max(r["latency_max_ms"] for r in rows) >= 1000
    assert sum(r["latency_sum_ms"] for r in rows) >= 3000
    assert all(r["minute"].second == 0 and r["minute"].microsecond == 0 for r in rows)


async def test_processes_add_to_the_same_rows_at_the_same_moment(
    database_url: str,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    """Eight "processes" (own engines, own buffers) flush the same minute rows at once, five times
    each: every call is counted once, the maximum is the maximum of all."""
    _, partner_a, _ = await make_partner(airports=("GOH",))
    _, partner_b, _ = await make_partner(airports=("GOH",))
    now = clock.now()
    processes = [Database(database_url, pool_size=1, application_name=f"health-{i}") for i in range(8)]

    async def one_process(index: int, database: Database) -> None:
        for round_no in range(5):
            buffer = HealthBuffer()
            for partner_id in (partner_a, partner_b):
                buffer.record(partner_id, "ok", 10 + index, now)
                buffer.record(partner_id, "timeout", 1000 + 100 * index + round_no, now)

            async def write(tallies: dict[health.Key, health.Tally], database: Database = database) -> None:
                await health_repository.add_tallies(database, tallies)

            await health.flush(buffer, write)

    try:
        await asyncio.gather(*(one_process(i, d) for i, d in enumerate(processes)))
    finally:
        await asyncio.gather(*(d.dispose() for d in processes))
    async with db.read() as conn:
        for partner_id in (partner_a, partner_b):
            (row,) = await health_repository.minute_rows(conn, partner_id)
            assert row["minute"] == minute_of(now)
            assert row["calls"] == 80 and row["outcome_ok"] == 40 and row["outcome_timeout"] == 40
            assert row["latency_max_ms"] == 1000 + 700 + 4
            assert row["latency_sum_ms"] == 5 * sum(10 + i for i in range(8)) + sum(
                1000 + 100 * i + r for i in range(8) for r in range(5)
            )
        report = await health_repository.last_hour(conn, now, [partner_a])
    assert report[0].search_calls == 80 and report[0].errors == 40
    # rank 76 of 80: 40 fast calls, then 1 at 1000 ms and 25 in 1001..1500 (66), the rest in 1501..2000,
    # whose bound is capped at the slowest call
    assert report[0].p95_latency_ms == 1704


async def test_counts_survive_a_restart_and_read_the_same_from_another_process(
    database_url: str,
    workdir: Any,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    """An API process flushes at shutdown (its periodic flush is set to an hour here, so only the
    shutdown flush can have written); a second process reads the same figures."""
    _, key = await make_client()
    _, partner_id, _ = await make_partner(airports=("INV",))
    settings = make_settings(database_url, workdir, partner_health_flush_seconds=300)
    first = await LiveServer(create_app(settings, clock=clock, configure_logs=False)).start()
    try:
        async with httpx.AsyncClient(base_url=first.url, timeout=30) as http:
            for _ in range(4):
                await search_at(http, key, "INV")
        async with db.read() as conn:
            assert await health_repository.minute_rows(conn, partner_id) == []  # still in the process
    finally:
        await first.stop(graceful=True)
    other = Database(database_url, pool_size=1, application_name="health-reader")
    try:
        async with other.read() as conn:
            (health_now,) = await health_repository.last_hour(conn, clock.now(), [partner_id])
    finally:
        await other.dispose()
    assert health_now.search_calls == 4 and health_now.errors == 0


async def test_last_hour_window_and_partner_deliveries(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner, partner_id, _ = await make_partner(airports=("ABZ",))
    refused_search = await search_at(http, key, "ABZ")
    pending_search = await search_at(http, key, "ABZ")
    partner.mode, partner.status_code = "status", 400  # a create refused for good: the delivery fails
    refused = await http.post(BOOKING, json=booking_body(refused_search["search_id"]), headers=bearer(key))
    assert refused.status_code == 200, refused.text
    partner.status_code = 503  # retried later: the delivery stays pending
    pending = await http.post(BOOKING, json=booking_body(pending_search["search_id"]), headers=bearer(key))
    assert pending.status_code == 200, pending.text
    now = clock.now()
    old = HealthBuffer()
    old.record(partner_id, "http_error", 10, minute_of(now) - timedelta(minutes=60))  # outside the hour
    old.record(partner_id, "timeout", 10, minute_of(now) - timedelta(minutes=59))  # the oldest minute inside
    await health_repository.add_tallies(db, old.take())
    await flush_now(svc_of(service))
    report = (await report_when(db, clock, [partner_id], 3))[partner_id]
    assert report.search_calls == 3 and report.errors_by_outcome == {"timeout": 1}
    assert report.deliveries_pending == 1 and report.deliveries_failed == 1
    # an hour later the failure is out of the window; the pending delivery is still pending
    async with db.read() as conn:
        (later,) = await health_repository.last_hour(conn, now + timedelta(minutes=61), [partner_id])
    assert later.search_calls == 0 and later.p95_latency_ms is None
    assert later.deliveries_pending == 1 and later.deliveries_failed == 0
    # leave nothing pending for later tests' delivery rounds: the partner recovers, the worker delivers
    partner.mode = "ok"
    clock.advance(timedelta(minutes=5))
    await svc_of(service).dispatcher.run_once()  # type: ignore[union-attr]
    async with db.read() as conn:
        (done,) = await health_repository.last_hour(conn, clock.now(), [partner_id])
    assert done.deliveries_pending == 0


async def test_minutes_older_than_30_days_are_pruned_by_the_scheduled_jobs(
    service: LiveServer,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, partner_id, _ = await make_partner(airports=("GOH",))
    now = clock.now()
    buffer = HealthBuffer()
    ages = [timedelta(days=30, minutes=5), timedelta(days=30, minutes=1), timedelta(days=29, hours=23), timedelta(0)]
    for age in ages:
        buffer.record(partner_id, "ok", 5, now - age)
    for minute in range(250):  # more than one batch of old rows
        buffer.record(partner_id, "ok", 5, now - timedelta(days=40, minutes=minute))
    await health_repository.add_tallies(db, buffer.take())
    counts = await scheduled.run_all(svc_of(service))
    assert counts["health_pruned"] >= 252
    async with db.read() as conn:
        left = [r["minute"] for r in await health_repository.minute_rows(conn, partner_id)]
    assert left == [minute_of(now - ages[2]), minute_of(now)]
