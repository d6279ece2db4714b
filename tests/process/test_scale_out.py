"""Scale-out on PostgreSQL (hardening item 2, RELIABILITY W4): 2 API processes without workers and
2 ``transfers worker`` processes on one database.

60 bookings go through both APIs alternately: 45 to a partner that answers within the create
budget (delivered by the API itself) and 15 to a partner that is down at first (503), so their
creates are left to the workers. Once every booking is acknowledged, a third of them are cancelled,
again through both APIs; the cancellation notices are delivered by the workers. Then: nothing lost,
one debit per booking, refunds exactly for the cancelled ones, every outbox message delivered with
exactly one successful partner call per webhook-id, never two overlapping calls of one webhook-id,
both workers did part of the work, and every process stops with exit code 0.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import or_, select, update

from tests.booking_invariants import check_booking_invariants
from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.invariants import check_wallet_invariants
from tests.process.conftest import (
    FreshDatabase,
    Partners,
    Proc,
    Processes,
    RecordingPartner,
    deliveries_by_webhook_id,
    eventually,
    overlapping,
    report,
)
from transfers.db.tables import bookings, ledger_entries, outbox

pytestmark = [pytest.mark.slow, pytest.mark.pg_only]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
BOOKINGS = 60
TO_DOWN_PARTNER = 15  # every 4th booking
CONCURRENCY = 6
LGW = {"type": "AIRPORT", "iata_code": "LGW"}


def _deliveries_done(proc: Proc) -> list[int]:
    """Outbox ids this process delivered successfully (its ``outbox_delivery`` log lines)."""
    ids = []
    for line in proc.out.read_text(errors="replace").splitlines():
        if line.startswith("{") and '"outbox_delivery"' in line:
            event = json.loads(line)
            if event["verdict"] == "done":
                ids.append(event["outbox_id"])
    return ids


async def _gather_limited(jobs: list[Any], limit: int) -> list[Any]:
    gate = asyncio.Semaphore(limit)

    async def run(job: Any) -> Any:
        async with gate:
            return await job

    return await asyncio.gather(*(run(job) for job in jobs))


async def test_two_apis_and_two_workers_share_one_database(
    fresh_db: FreshDatabase,
    procs: Processes,
    partners: Partners,
) -> None:
    steady, steady_id = await partners.add(fresh_db, airports=("LHR",), name="Steady partner", mode="slow", delay=0.2)
    flaky, flaky_id = await partners.add(fresh_db, airports=("LGW",), name="Flaky partner", mode="slow", delay=0.2)
    clients = [await fresh_db.make_client(balance="100000.00") for _ in range(3)]
    env = procs.env(fresh_db.url)
    apis = [await procs.serve(f"api-{n}", env, "--no-worker", wait=False) for n in (1, 2)]
    workers = [procs.start(f"worker-{n}", ["worker"], env) for n in (1, 2)]
    for api in apis:
        await procs.wait_healthy(api)
    for proc in workers:
        await procs.wait_logged(proc, "worker_started")

    https = [httpx.AsyncClient(base_url=api.url, timeout=30) for api in apis]
    try:
        offers = []
        for n, (_, key) in enumerate(clients):
            http = https[n % 2]
            lhr = (await http.post(SEARCH, json=search_body(), headers=bearer(key))).json()
            lgw = (await http.post(SEARCH, json=search_body(pickup_location=LGW), headers=bearer(key))).json()
            offers.append((key, lhr, lgw))

        flaky.mode, flaky.status_code = "status", 503

        async def create(i: int) -> tuple[int, str, httpx.Response]:
            key, lhr, lgw = offers[i % len(offers)]
            found = lgw if i % 4 == 0 else lhr
            idem = f"so-{i}"
            body = booking_body(found["search_id"], 1 + i % 2)
            return (
                i,
                idem,
                await https[i % 2].post(BOOKING, json=body, headers={**bearer(key), "Idempotency-Key": idem}),
            )

        created = await _gather_limited([create(i) for i in range(BOOKINGS)], CONCURRENCY)
        assert all(r.status_code == 200 for _, _, r in created), [r.text for _, _, r in created if r.status_code != 200]
        booked = {i: (idem, r.json()["booking"]) for i, idem, r in created}
        assert {booked[i][1]["status"] for i in range(0, BOOKINGS, 4)} == {"PENDING"}
        # The steady partner answers within the create budget, so its bookings are normally
        # acknowledged in the create response; a worker may claim the fresh message first, though.
        answered_acknowledged = sum(b["status"] == "PENDING_APPROVAL" for _, b in booked.values())

        # The flaky partner is back: its creates are due now, for the workers to deliver. A worker
        # may be judging a 503 it got just before the switch and reschedule that message after the
        # 30 s or 120 s backoff, so every poll makes the pending, unleased messages due again (what
        # an operator's "retry now" does), instead of waiting out a backoff longer than the bound.
        flaky.mode = "slow"

        async def acknowledged() -> bool:
            await _due_now(fresh_db)
            return await _all_acknowledged(fresh_db)

        try:
            await eventually(
                acknowledged,
                timeout=60,
                interval=0.3,
                what="every booking acknowledged by its partner",
            )
        except AssertionError as failed:
            raise AssertionError(f"{failed}\n{await _waiting(fresh_db)}") from None

        async def cancel(i: int) -> tuple[int, httpx.Response]:
            key = offers[i % len(offers)][0]
            reservation_no = booked[i][1]["reservation_no"]
            return i, await https[(i // 3) % 2].delete(
                BOOKING,
                params={"reservation_no": reservation_no, "cancellation_id": 1},
                headers={**bearer(key), "Idempotency-Key": f"cancel-{i}"},
            )

        to_cancel = [i for i in range(BOOKINGS) if i % 3 == 0]
        cancelled = await _gather_limited([cancel(i) for i in to_cancel], CONCURRENCY)
        assert all(r.status_code == 200 and r.json()["status"] == "Success" for _, r in cancelled), [
            r.text for _, r in cancelled
        ]

        async def drained() -> bool:
            rows = await fresh_db.outbox_rows()
            return len(rows) == BOOKINGS + len(to_cancel) and all(r["status"] == "delivered" for r in rows)

        started = time.monotonic()
        await eventually(drained, timeout=60, interval=0.3, what="every outbox message delivered")
        drain_seconds = time.monotonic() - started
    finally:
        for http in https:
            await http.aclose()

    # Money and bookings.
    async with fresh_db.db.read() as conn:
        rows = {
            r.reservation_no: r
            for r in await conn.execute(
                select(
                    bookings.c.id,
                    bookings.c.reservation_no,
                    bookings.c.status,
                    bookings.c.total,
                    bookings.c.idempotency_key,
                )
            )
        }
        entries = (
            await conn.execute(
                select(ledger_entries.c.booking_id, ledger_entries.c.kind, ledger_entries.c.amount).where(
                    ledger_entries.c.booking_id.is_not(None)
                )
            )
        ).all()
    assert len(rows) == BOOKINGS
    lost = [
        i
        for i, (idem, b) in booked.items()
        if b["reservation_no"] not in rows
        or rows[b["reservation_no"]].idempotency_key != idem
        or Decimal(rows[b["reservation_no"]].total) != Decimal(b["price"]["total"])
    ]
    assert not lost
    moves: dict[int, list[tuple[str, Decimal]]] = defaultdict(list)
    for booking_id, kind, amount in entries:
        moves[booking_id].append((kind, Decimal(amount)))
    cancelled_nos = {booked[i][1]["reservation_no"] for i in to_cancel}
    for reservation_no, row in rows.items():
        total = Decimal(row.total)
        expected = [("debit_booking", -total)]
        if reservation_no in cancelled_nos:
            expected.append(("credit_refund", total))
        assert sorted(moves[row.id]) == sorted(expected), (reservation_no, moves[row.id])
        assert row.status == ("CANCELLED" if reservation_no in cancelled_nos else "PENDING_APPROVAL")
    await check_wallet_invariants(fresh_db.db)
    await check_booking_invariants(fresh_db.db)

    # Deliveries: exactly one successful call per webhook-id, never two at once.
    messages = await fresh_db.outbox_rows()
    summary: dict[str, Any] = {}
    for partner, partner_id, path, kind in (
        (steady, steady_id, "/booking/create", "booking.create"),
        (flaky, flaky_id, "/booking/create", "booking.create"),
        (steady, steady_id, "/booking/update", "booking.update"),
        (flaky, flaky_id, "/booking/update", "booking.update"),
    ):
        wanted = {m["webhook_id"] for m in messages if m["kind"] == kind and m["partner_id"] == partner_id}
        received = deliveries_by_webhook_id(partner, path)
        ok = {wid: [c for c in calls if _ok(partner, c)] for wid, calls in received.items()}
        assert set(received) == wanted, f"{partner.name} {path}: webhook-ids differ"
        assert all(len(calls) == 1 for calls in ok.values()), {
            wid: len(calls) for wid, calls in ok.items() if len(calls) != 1
        }
        assert not {wid: overlapping(calls) for wid, calls in received.items() if overlapping(calls)}
        summary[f"{partner.name.split()[0].lower()} {kind.split('.')[1]}"] = (
            len(wanted),
            sum(len(c) for c in received.values()),
        )
    by_process = {proc.name: _deliveries_done(proc) for proc in [*apis, *workers]}
    every = sorted(i for ids in by_process.values() for i in ids)
    assert every == sorted(m["id"] for m in messages), "each message delivered once, by one process"
    by_worker = {proc.name: len(by_process[proc.name]) for proc in workers}
    assert all(by_worker.values()), f"a worker delivered nothing: {by_worker}"

    exit_codes = [await procs.stop(proc) for proc in [*apis, *workers]]
    assert exit_codes == [0, 0, 0, 0], [p.logs() for p in [*apis, *workers]]
    report(
        f"scale-out [pg]: 2 APIs (--no-worker) + 2 `transfers worker`; bookings={BOOKINGS} "
        f"({answered_acknowledged} acknowledged in the create response, the rest left to the workers), "
        f"cancelled={len(to_cancel)}, lost=0, debits=1 per booking, refunds={len(cancelled_nos)} "
        f"(exactly the cancelled); messages/partner calls: {summary}; worker deliveries "
        f"{by_worker}, by the APIs {sum(len(by_process[a.name]) for a in apis)}, overlapping=0, outbox "
        f"drained {drain_seconds:.1f}s after the last cancel; exit codes {exit_codes}"
    )


def _ok(partner: RecordingPartner, call: Any) -> bool:
    status = partner.status_of(call)
    return status is not None and 200 <= status < 300


async def _due_now(fresh: FreshDatabase) -> None:
    """Pending messages no process holds a lease on: due now."""
    now = datetime.now(UTC)
    async with fresh.db.write() as conn:
        await conn.execute(
            update(outbox)
            .where(outbox.c.status == "pending")
            .where(outbox.c.next_attempt_at > now)
            .where(or_(outbox.c.lease_until.is_(None), outbox.c.lease_until < now))
            .values(next_attempt_at=now)
        )


async def _waiting(fresh: FreshDatabase) -> str:
    """The evidence when bookings stay unacknowledged: each one's status and its messages' state."""
    async with fresh.db.read() as conn:
        waiting = {
            r.id: r.reservation_no
            for r in await conn.execute(
                select(bookings.c.id, bookings.c.reservation_no).where(bookings.c.status != "PENDING_APPROVAL")
            )
        }
    lines = [f"{len(waiting)} bookings not PENDING_APPROVAL at {datetime.now(UTC).isoformat()}"]
    for m in await fresh.outbox_rows():
        if m["booking_id"] in waiting:
            lines.append(
                f"  {waiting[m['booking_id']]} {m['kind']} status={m['status']} attempts={m['attempts']} "
                f"next={m['next_attempt_at']} lease={m['lease_until']} error={str(m.get('last_error'))[:120]}"
            )
    return "\n".join(lines)


async def _all_acknowledged(fresh: FreshDatabase) -> bool:
    async with fresh.db.read() as conn:
        states = [r[0] for r in await conn.execute(select(bookings.c.status))]
    return len(states) == BOOKINGS and all(s == "PENDING_APPROVAL" for s in states)
