"""The request log (docs/rules/agency-portal.md#request-log) on both databases: what a client's
API request leaves (time, client, method, path, status, request id, idempotency key, duration) and
what it never does (a body, a key, a query string, another header); nothing for requests without a
client; the buffer's bound (full: dropped and counted, never waited for); a database that is down
(the batch kept within the bound, written later); the write at shutdown; the 7 days' retention
with the injected clock."""

from __future__ import annotations

import asyncio
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, bearer, make_settings
from tests.servers import LiveServer
from transfers.app import create_app
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import api_requests
from transfers.jobs import scheduled
from transfers.observability import metrics
from transfers.requestlog import repository
from transfers.requestlog.buffer import RequestLogBuffer
from transfers.requestlog.writer import RequestLogWriter

BOOKING = "/api/v1/booking-api/booking"
ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"


async def rows_of(db: Database, client_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        found = await conn.execute(select(api_requests).where(api_requests.c.client_id == client_id))
        return [dict(r) for r in found.mappings()]


async def logged(db: Database, client_id: int, request_ids: set[str]) -> dict[str, dict[str, Any]]:
    """The client's rows once every one of ``request_ids`` is written (the writer runs every second:
    bounded polling, generous for a loaded machine)."""
    by_id: dict[str, dict[str, Any]] = {}
    for _ in range(300):
        by_id = {row["request_id"]: row for row in await rows_of(db, client_id)}
        if request_ids <= set(by_id):
            return by_id
        await asyncio.sleep(0.1)
    raise AssertionError(f"not logged within 30 s: {request_ids - set(by_id)}")


def _dropped() -> float:
    return float(metrics.REQUEST_LOG_DROPPED._value.get())


async def test_a_client_request_is_logged_with_what_it_was_and_never_a_body_a_key_or_a_query(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, key = await make_client()
    secret_query = f"query-secret-{os.getpid()}"
    secret_body = f"body-secret-{os.getpid()}"
    before = clock.now()
    read = await http.get(
        BOOKING,
        params={"reservation_no": "NOPE-1", "token": secret_query},
        headers={**bearer(key), "X-Request-ID": f"rl-read-{client_id}", "X-Custom": "header-secret"},
    )
    written = await http.post(
        ENDPOINTS,
        content=b'{"url": "ftp://nowhere", "events": ["*"], "description": "' + secret_body.encode() + b'"}',
        headers={
            **bearer(key),
            "X-Request-ID": f"rl-write-{client_id}",
            "Idempotency-Key": f"idem-{client_id}-é".encode(),
        },
    )
    assert read.status_code in (404, 422) and written.status_code == 422
    rows = await logged(db, client_id, {f"rl-read-{client_id}", f"rl-write-{client_id}"})
    first, second = rows[f"rl-read-{client_id}"], rows[f"rl-write-{client_id}"]
    assert (first["method"], first["path"], first["status"], first["idempotency_key"]) == (
        "GET",
        BOOKING,
        read.status_code,
        None,
    )
    assert (second["method"], second["path"], second["status"]) == ("POST", ENDPOINTS, 422)
    assert second["idempotency_key"] == f"idem-{client_id}-é".encode().decode("latin-1")  # its bytes, as latin-1
    for row in (first, second):
        assert row["client_id"] == client_id
        assert before - timedelta(seconds=1) <= row["at"] <= clock.now()
        assert 0 < row["duration_us"] < 60_000_000
        every_value = " ".join(str(v) for v in row.values())
        for secret in (key, key.split("_", 2)[2], secret_query, secret_body, "header-secret", "Bearer", "?"):
            assert secret not in every_value


async def test_requests_without_a_client_and_outside_the_api_are_not_logged(
    http: httpx.AsyncClient, service: LiveServer, make_client: ClientFactory, db: Database
) -> None:
    client_id, key = await make_client()
    wrong_key = key[:-4] + "AAAA"
    assert (await http.get(ENDPOINTS, headers=bearer(wrong_key))).status_code == 401
    assert (await http.get("/healthz", headers=bearer(key))).status_code == 200
    assert (
        await http.get(ENDPOINTS, headers={**bearer(key), "X-Request-ID": f"rl-mark-{client_id}"})
    ).status_code == 200
    rows = await logged(db, client_id, {f"rl-mark-{client_id}"})
    assert list(rows) == [f"rl-mark-{client_id}"]  # the 401 (no client known) and /healthz left nothing


async def test_ugly_paths_and_keys_are_written_cut_and_without_nul(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database
) -> None:
    client_id, key = await make_client()
    ugly = "%00" + "é" * 3000
    answer = await http.get(f"{ENDPOINTS}/{ugly}", headers={**bearer(key), "X-Request-ID": f"rl-ugly-{client_id}"})
    assert answer.status_code == 404
    huge_key = "k" * 10_000
    await http.get(
        ENDPOINTS, headers={**bearer(key), "X-Request-ID": f"rl-huge-{client_id}", "Idempotency-Key": huge_key}
    )
    rows = await logged(db, client_id, {f"rl-ugly-{client_id}", f"rl-huge-{client_id}"})
    path = rows[f"rl-ugly-{client_id}"]["path"]
    assert path.startswith(f"{ENDPOINTS}/é") and "\x00" not in path and len(path) == 500
    assert rows[f"rl-huge-{client_id}"]["idempotency_key"] == "k" * 255


async def test_a_full_buffer_drops_and_counts_and_never_waits(clock: ShiftedClock) -> None:
    buffer = RequestLogBuffer(clock, capacity=3, batch=2)
    dropped_before = _dropped()
    for n in range(5):
        buffer.record(1, "GET", f"/api/{n}", 200, f"r{n}", None, 0.001)
    assert len(buffer) == 3 and buffer.dropped == 2 and _dropped() == dropped_before + 2
    assert buffer.wake.is_set()  # a full batch was waiting
    taken = buffer.take(2)
    assert [entry[3] for entry in taken] == ["/api/0", "/api/1"]
    buffer.record(1, "GET", "/api/5", 200, "r5", None, 0.001)
    buffer.give_back(taken)  # room for one: the oldest goes back in front, the other is counted
    assert [entry[3] for entry in buffer.take(10)] == ["/api/0", "/api/2", "/api/5"]
    assert buffer.dropped == 3 and _dropped() == dropped_before + 3


async def test_a_database_that_is_down_keeps_the_batch_within_the_bound_and_it_is_written_later(
    make_client: ClientFactory, db: Database, clock: ShiftedClock, tmp_path: Path
) -> None:
    client_id, _ = await make_client()
    down = Database(f"sqlite+aiosqlite:///{tmp_path}/no-such-dir/x.db", pool_size=1, application_name="down")
    target = down

    async def write(entries: list[Any]) -> None:
        await repository.insert_entries(target, entries)

    buffer = RequestLogBuffer(clock, capacity=4, batch=2)
    writer = RequestLogWriter(buffer, write, 60)
    for n in range(6):
        buffer.record(client_id, "GET", f"/api/{n}", 200, f"down-{client_id}-{n}", None, 0.002)
    assert await writer.flush() == 0
    assert len(buffer) == 4 and buffer.dropped == 2  # kept, bounded
    await down.dispose()
    target = db
    assert await writer.flush() == 4
    assert sorted(r["path"] for r in await rows_of(db, client_id)) == ["/api/0", "/api/1", "/api/2", "/api/3"]


async def test_what_is_buffered_is_written_when_the_process_stops(
    database_url: str, workdir: Path, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, key = await make_client()
    settings = make_settings(database_url, workdir, request_log_flush_seconds=60)
    server = await LiveServer(create_app(settings, clock=clock, configure_logs=False)).start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            for n in range(3):
                await http.get(ENDPOINTS, headers={**bearer(key), "X-Request-ID": f"rl-stop-{client_id}-{n}"})
        assert await rows_of(db, client_id) == []  # still in the process (its interval is a minute)
    finally:
        await server.stop(graceful=True)
    assert {r["request_id"] for r in await rows_of(db, client_id)} == {f"rl-stop-{client_id}-{n}" for n in range(3)}


async def test_requests_are_kept_seven_days(
    http: httpx.AsyncClient, service: LiveServer, make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    client_id, key = await make_client()
    await http.get(ENDPOINTS, headers={**bearer(key), "X-Request-ID": f"rl-old-{client_id}"})
    clock.advance(timedelta(days=2))
    await http.get(ENDPOINTS, headers={**bearer(key), "X-Request-ID": f"rl-new-{client_id}"})
    await logged(db, client_id, {f"rl-old-{client_id}", f"rl-new-{client_id}"})
    svc = svc_of(service)
    clock.advance(timedelta(days=5) - timedelta(minutes=1))  # the first is 7 days old less a minute
    await scheduled.prune_request_log(svc)
    assert {r["request_id"] for r in await rows_of(db, client_id)} == {f"rl-old-{client_id}", f"rl-new-{client_id}"}
    clock.advance(timedelta(minutes=2))
    assert await scheduled.prune_request_log(svc) >= 1
    assert {r["request_id"] for r in await rows_of(db, client_id)} == {f"rl-new-{client_id}"}
    clock.advance(timedelta(days=2))
    await scheduled.run_all(svc)
    assert await rows_of(db, client_id) == []


async def test_concurrent_requests_are_each_logged_once(
    http: httpx.AsyncClient, make_client: ClientFactory, db: Database
) -> None:
    client_id, key = await make_client()
    ids = {f"rl-burst-{client_id}-{n}" for n in range(120)}
    answers = await asyncio.gather(
        *(http.get(ENDPOINTS, headers={**bearer(key), "X-Request-ID": request_id}) for request_id in ids)
    )
    assert {a.status_code for a in answers} == {200}
    await logged(db, client_id, ids)
    rows = await rows_of(db, client_id)
    assert len(rows) == len(ids) and {r["request_id"] for r in rows} == ids
