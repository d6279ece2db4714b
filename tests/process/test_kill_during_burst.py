"""SIGKILL of the API during a booking burst (hardening item 7, RELIABILITY F2).

A driver sends 200 creates at concurrency 10, each with its own Idempotency-Key, and journals
(key, status, reservation_no, price). At 40 % of the burst the API (embedded worker included) is
killed with SIGKILL and restarted on the same port; requests cut off by the kill are retried with
their original key until they get an answer. Then: nothing lost, nobody charged twice, one booking
per key, every booking's partner delivery completed.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.booking_invariants import check_booking_invariants
from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.invariants import check_wallet_invariants
from tests.process.conftest import (
    FreshDatabase,
    Partners,
    Proc,
    Processes,
    deliveries_by_webhook_id,
    eventually,
    overlapping,
    report,
)
from transfers.db.tables import bookings, ledger_entries

pytestmark = [pytest.mark.slow]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
REQUESTS = 200
CONCURRENCY = 10
KILL_AT = int(REQUESTS * 0.4)
CLIENTS = 4
RETRY_WINDOW_SECONDS = 60.0


@dataclass
class Planned:
    index: int
    key: str
    api_key: str
    body: dict[str, Any]


@dataclass
class Entry:
    key: str
    phase: str  # burst | retry
    status: int | None  # None: no answer (connection error), outcome unknown
    reservation_no: str | None
    price: str | None
    started: float
    finished: float
    error: str | None = None


class Driver:
    def __init__(self, base_url: str, journal_path: Path) -> None:
        self.http = httpx.AsyncClient(
            base_url=base_url, timeout=httpx.Timeout(30.0), limits=httpx.Limits(max_connections=CONCURRENCY * 2)
        )
        self.journal: list[Entry] = []
        self.answered = 0
        self.up = asyncio.Event()
        self.up.set()
        self._journal = journal_path.open("a")

    async def aclose(self) -> None:
        await self.http.aclose()
        self._journal.close()

    async def send(self, request: Planned, phase: str) -> Entry:
        started = time.monotonic()
        headers = {**bearer(request.api_key), "Idempotency-Key": request.key}
        try:
            response = await self.http.post(BOOKING, json=request.body, headers=headers)
        except httpx.TransportError as exc:
            entry = Entry(request.key, phase, None, None, None, started, time.monotonic(), type(exc).__name__)
        else:
            booking = response.json().get("booking") if response.status_code == 200 else None
            entry = Entry(
                request.key,
                phase,
                response.status_code,
                booking and booking["reservation_no"],
                booking and booking["price"]["total"],
                started,
                time.monotonic(),
                None if response.status_code == 200 else response.text[:300],
            )
            self.answered += 1
        self.journal.append(entry)
        self._journal.write(json.dumps(asdict(entry)) + "\n")
        return entry

    async def burst(self, planned: list[Planned]) -> None:
        queue: asyncio.Queue[Planned] = asyncio.Queue()
        for request in planned:
            queue.put_nowait(request)

        async def lane() -> None:
            while True:
                try:
                    request = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                await asyncio.wait_for(self.up.wait(), timeout=60)  # a client backs off while the API is down
                entry = await self.send(request, "burst")
                if entry.status is None:
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(lane() for _ in range(CONCURRENCY)))

    async def settle(self, request: Planned) -> Entry:
        """Retry with the original key until an answer other than 409 (the key of a request the
        killed process was running stays locked for idempotency_lock_seconds)."""
        deadline = time.monotonic() + RETRY_WINDOW_SECONDS
        while True:
            entry = await self.send(request, "retry")
            if entry.status not in (None, 409):
                return entry
            assert time.monotonic() < deadline, f"{request.key}: no answer after {RETRY_WINDOW_SECONDS:g}s"
            await asyncio.sleep(0.5)


async def _plan(http: httpx.AsyncClient, fresh: FreshDatabase) -> list[Planned]:
    offers = []
    for _ in range(CLIENTS):
        _, api_key = await fresh.make_client(balance="100000.00")
        found = await http.post(SEARCH, json=search_body(), headers=bearer(api_key))
        assert found.status_code == 200, found.text
        offers.append((api_key, found.json()))
    planned = []
    for i in range(REQUESTS):
        api_key, found = offers[i % CLIENTS]
        car, van = found["vehicles"][0], found["vehicles"][1]
        if i % 3 == 0:
            body = booking_body(found["search_id"], van["vehicle_id"])
        else:
            seat = car["extra_services"][0]["id"]
            body = booking_body(
                found["search_id"], car["vehicle_id"], extra_services=[{"id": seat, "quantity": 1 + i % 2}]
            )
        planned.append(Planned(i, f"burst-{i}-{uuid.uuid4().hex[:8]}", api_key, body))
    return planned


async def test_sigkill_during_a_booking_burst_loses_nothing_and_charges_once(
    fresh_db: FreshDatabase,
    procs: Processes,
    partners: Partners,
    tmp_path: Path,
) -> None:
    partner, _ = await partners.add(fresh_db, airports=("LHR",), name="Burst partner")
    # Short locks so the retries of the killed requests do not wait out the 60 s defaults: the
    # idempotency lock of a request the dead process was running, and the outbox lease of a
    # delivery it had claimed.
    env = procs.env(fresh_db.url, idempotency_lock_seconds=3, outbox_lease_seconds=3)
    api = await procs.serve("api", env)
    driver = Driver(api.url, tmp_path / "journal.jsonl")
    restarted: list[Proc] = []
    killed_at: list[datetime] = []

    async def killer() -> None:
        await eventually(
            lambda: driver.answered >= KILL_AT, timeout=120, interval=0.01, what=f"{KILL_AT} answers before the kill"
        )
        driver.up.clear()
        await procs.kill(api)  # SIGKILL, by PID
        killed_at.append(datetime.now(UTC))
        restarted.append(await procs.serve("api-restarted", env, port=api.port))
        driver.up.set()

    try:
        planned = await _plan(driver.http, fresh_db)
        started = time.monotonic()
        await asyncio.gather(driver.burst(planned), killer())
        burst_seconds = time.monotonic() - started
        unknown = [e.key for e in driver.journal if e.status is None]
        by_key = {p.key: p for p in planned}
        final = {e.key: e for e in driver.journal if e.status is not None}
        retried = sorted(set(unknown))
        for entry in await asyncio.gather(*(driver.settle(by_key[key]) for key in retried)):
            final[entry.key] = entry
    finally:
        await driver.aclose()

    assert api.returncode == -9
    assert set(final) == set(by_key), "every request has a final answer"
    statuses = sorted({e.status for e in final.values() if e.status is not None})
    assert statuses == [200], [(e.key, e.status, e.error) for e in final.values() if e.status != 200][:5]

    db = fresh_db.db
    async with db.read() as conn:
        rows = {
            r.reservation_no: r
            for r in await conn.execute(
                select(bookings.c.reservation_no, bookings.c.total, bookings.c.idempotency_key, bookings.c.created_at)
            )
        }
        per_key = (
            await conn.execute(
                select(bookings.c.client_id, bookings.c.idempotency_key, func.count())
                .group_by(bookings.c.client_id, bookings.c.idempotency_key)
                .having(func.count() > 1)
            )
        ).all()
        debits = dict(
            (
                await conn.execute(
                    select(ledger_entries.c.booking_id, func.count())
                    .where(ledger_entries.c.kind == "debit_booking")
                    .group_by(ledger_entries.c.booking_id)
                )
            ).all()
        )
        booking_ids = [r[0] for r in await conn.execute(select(bookings.c.id))]
    lost = [
        e
        for e in final.values()
        if e.reservation_no not in rows
        or Decimal(rows[e.reservation_no].total) != Decimal(e.price or "-1")
        or rows[e.reservation_no].idempotency_key != e.key
    ]
    double_charged = [b for b in booking_ids if debits.get(b, 0) != 1]
    assert not lost, lost[:5]
    assert not double_charged
    assert not per_key, "two bookings share one idempotency key"
    assert len(rows) == REQUESTS, f"{len(rows)} bookings for {REQUESTS} keys"
    await check_wallet_invariants(db)
    await check_booking_invariants(db)

    async def all_delivered() -> bool:
        rows = await fresh_db.outbox_rows()
        return len(rows) == REQUESTS and all(r["status"] == "delivered" for r in rows)

    await eventually(all_delivered, timeout=60, interval=0.5, what="every create delivered to the partner")
    messages = await fresh_db.outbox_rows()
    received = deliveries_by_webhook_id(partner, "/booking/create")
    assert {m["webhook_id"] for m in messages} <= set(received), "the partner saw every webhook-id"
    assert not [wid for wid, calls in received.items() if overlapping(calls)]
    redelivered = sum(len(calls) - 1 for calls in received.values())
    created_at = {r.idempotency_key: r.created_at for r in rows.values()}
    committed_before_kill = sum(created_at[key] < killed_at[0] for key in retried)
    for proc in restarted:
        assert await procs.stop(proc) == 0, proc.logs()

    report(
        f"SIGKILL during burst [{'pg' if fresh_db.is_postgres else 'sqlite'}]: requests={REQUESTS}, "
        f"2xx={sum(e.status == 200 for e in final.values())} (first try "
        f"{sum(e.status == 200 and e.phase == 'burst' for e in final.values())}), "
        f"unknown at kill -> retried={len(retried)} (booking already committed by the killed process: "
        f"{committed_before_kill}; {sum(1 for e in driver.journal if e.phase == 'retry')} "
        f"retry requests, 409 while locked: {sum(e.status == 409 for e in driver.journal)}), "
        f"lost={len(lost)}, double-charged={len(double_charged)}, bookings={len(rows)}, "
        f"deliveries={sum(len(c) for c in received.values())} for {len(messages)} messages "
        f"(redelivered after the kill: {redelivered}, overlapping: 0), burst {burst_seconds:.1f}s"
    )
