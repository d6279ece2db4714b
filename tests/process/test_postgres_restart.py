"""PostgreSQL crash and restart under load (hardening item 7, RELIABILITY F3).

On a private cluster of the test's own: while lanes send GET booking, search and create requests,
``pg_ctl stop -m immediate`` takes the database away for ~5 s, then it is started again.

* during the outage: API calls answer 503 ``UNAVAILABLE`` within a few seconds, ``/healthz`` 200,
  ``/readyz`` 503; never a 500;
* after the restart: the same API process recovers by itself within 10 s;
* every create answered 2xx survived crash recovery, creates cut off by the crash complete when
  retried with their key, every booking has exactly its one debit, and the outbox resumes.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
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
    Partners,
    PrivateCluster,
    Processes,
    eventually,
    fresh_database_on,
    report,
)
from transfers.db.tables import bookings

pytestmark = [pytest.mark.slow, pytest.mark.pg_only]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
DOWN_SECONDS = 5.0
RECOVERY_BOUND_SECONDS = 10.0
QUICK_SECONDS = 4.0  # "503 within a few seconds" (the connect timeout is 5 s)
READ_LANES = 4


@dataclass
class Sample:
    kind: str
    sent: float
    took: float
    status: int | str  # HTTP status, or the transport error's name
    code: str | None = None


async def _call(http: httpx.AsyncClient, kind: str, method: str, url: str, **kwargs: Any) -> Sample:
    sent = time.monotonic()
    try:
        response = await http.request(method, url, **kwargs)
    except httpx.TransportError as exc:
        return Sample(kind, sent, time.monotonic() - sent, type(exc).__name__)
    code = None
    if response.status_code == 503:
        code = response.json().get("code")
    return Sample(kind, sent, time.monotonic() - sent, response.status_code, code)


async def test_postgres_crash_and_restart_under_load(
    private_postgres: PrivateCluster,
    procs: Processes,
    partners: Partners,
    tmp_path: Path,
) -> None:
    cluster = private_postgres
    async with fresh_database_on(cluster.url(), tmp_path) as fresh:
        _, key = await fresh.make_client(balance="100000.00")
        partner, _ = await partners.add(fresh, airports=("LHR",), name="Restart partner")
        env = procs.env(fresh.url, idempotency_lock_seconds=3, outbox_lease_seconds=3)
        api = await procs.serve("api", env)
        samples: list[Sample] = []
        probes: list[Sample] = []
        created: dict[str, Sample] = {}  # idempotency key -> its last answer
        stop = asyncio.Event()
        marks: dict[str, float] = {}
        starting_wall: list[datetime] = []

        async with httpx.AsyncClient(
            base_url=api.url, timeout=httpx.Timeout(15.0), limits=httpx.Limits(max_connections=32)
        ) as http:
            found = (await http.post(SEARCH, json=search_body(), headers=bearer(key))).json()
            existing = []
            for i in range(3):
                answer = await http.post(
                    BOOKING,
                    json=booking_body(found["search_id"], 1),
                    headers={**bearer(key), "Idempotency-Key": f"seed-{i}"},
                )
                assert answer.status_code == 200, answer.text
                existing.append(answer.json()["booking"]["reservation_no"])

            async def reader(lane: int) -> None:
                i = 0
                while not stop.is_set():
                    i += 1
                    if (i + lane) % 3 == 0:
                        samples.append(
                            await _call(http, "search", "POST", SEARCH, json=search_body(), headers=bearer(key))
                        )
                    else:
                        samples.append(
                            await _call(
                                http,
                                "get",
                                "GET",
                                BOOKING,
                                headers=bearer(key),
                                params={"reservation_no": existing[i % len(existing)]},
                            )
                        )
                    await asyncio.sleep(0.02)

            async def creator() -> None:
                i = 0
                while not stop.is_set():
                    i += 1
                    idem = f"load-{i}"
                    sample = await _call(
                        http,
                        "create",
                        "POST",
                        BOOKING,
                        json=booking_body(found["search_id"], 1 + i % 2),
                        headers={**bearer(key), "Idempotency-Key": idem},
                    )
                    samples.append(sample)
                    created[idem] = sample
                    await asyncio.sleep(0.1)

            async def prober() -> None:
                async with httpx.AsyncClient(base_url=api.url, timeout=5) as probe:
                    while not stop.is_set():
                        probes.append(await _call(probe, "healthz", "GET", "/healthz"))
                        probes.append(await _call(probe, "readyz", "GET", "/readyz"))
                        await asyncio.sleep(0.25)

            async def outage() -> None:
                await asyncio.sleep(2.0)
                marks["stopping"] = time.monotonic()
                await cluster.stop_immediate()
                marks["down"] = time.monotonic()
                await asyncio.sleep(DOWN_SECONDS)
                marks["starting"] = time.monotonic()
                starting_wall.append(datetime.now(UTC))
                await cluster.start()
                marks["up"] = time.monotonic()

                def recovered() -> bool:
                    # recovered: the last 1 s of answers of every kind were all 200
                    now = time.monotonic()
                    window = [s for s in samples + probes if s.sent >= marks["up"] and s.sent + s.took >= now - 1.0]
                    kinds = {s.kind for s in window}
                    return {"get", "search", "readyz"} <= kinds and all(s.status == 200 for s in window)

                await eventually(
                    recovered, timeout=RECOVERY_BOUND_SECONDS + 10, interval=0.1, what="recovery after the restart"
                )
                await asyncio.sleep(2.0)
                stop.set()

            lanes = [reader(n) for n in range(READ_LANES)]
            await asyncio.wait_for(asyncio.gather(outage(), prober(), creator(), *lanes), timeout=90)

            # Creates cut off by the crash (503 or no answer): retried with their key until answered.
            unsettled = [idem for idem, s in created.items() if s.status != 200]
            settle_statuses: dict[int | str, int] = {}
            for idem in unsettled:
                deadline = time.monotonic() + 30
                while True:
                    again = await _call(
                        http,
                        "create",
                        "POST",
                        BOOKING,
                        headers={**bearer(key), "Idempotency-Key": idem},
                        json=booking_body(found["search_id"], 1 + int(idem.split("-")[1]) % 2),
                    )
                    settle_statuses[again.status] = settle_statuses.get(again.status, 0) + 1
                    if again.status == 200:
                        created[idem] = again
                        break
                    assert again.status in (409, 503), again
                    assert time.monotonic() < deadline, f"{idem} never completed"
                    await asyncio.sleep(0.5)
            answers: dict[str, Any] = {}
            for idem in created:
                replay = await http.post(
                    BOOKING,
                    headers={**bearer(key), "Idempotency-Key": idem},
                    json=booking_body(found["search_id"], 1 + int(idem.split("-")[1]) % 2),
                )
                assert replay.status_code == 200, replay.text
                answers[idem] = replay.json()["booking"]

        outage_start, outage_end = marks["down"], marks["starting"]
        during = [s for s in samples if s.sent >= outage_start and s.sent + s.took <= outage_end]
        after_up = [s for s in samples + probes if s.sent >= marks["up"] and s.status != 200]
        last_failure = max((s.sent + s.took for s in after_up), default=marks["up"])
        recovery = last_failure - marks["up"]
        counts: dict[str, int] = {"200": 0, "503": 0, "other": 0}
        for s in samples:
            bucket = str(s.status) if s.status in (200, 503) else "other"
            counts[bucket] += 1
        others = [s for s in samples if s.status not in (200, 503)]
        assert not others, others[:10]
        assert during, "no request was sent while the database was down"
        assert all(s.status == 503 and s.code == "UNAVAILABLE" for s in during), during
        slowest_503 = max(s.took for s in samples if s.status == 503)
        assert slowest_503 < QUICK_SECONDS, f"a 503 took {slowest_503:.2f}s"
        probes_down = [p for p in probes if p.sent >= outage_start and p.sent + p.took <= outage_end]
        assert {p.status for p in probes_down if p.kind == "healthz"} == {200}
        assert {p.status for p in probes_down if p.kind == "readyz"} == {503}
        assert recovery <= RECOVERY_BOUND_SECONDS, f"recovered {recovery:.1f}s after PostgreSQL was up"
        assert api.returncode is None, "the API process recovered without a restart"

        # Durability and money: every 2xx create exists with its price, one booking per key.
        async with fresh.db.read() as conn:
            rows = {
                r.idempotency_key: r
                for r in await conn.execute(
                    select(
                        bookings.c.idempotency_key, bookings.c.reservation_no, bookings.c.total, bookings.c.created_at
                    )
                )
            }
            total_bookings = (await conn.execute(select(func.count()).select_from(bookings))).scalar_one()
        lost = [
            idem
            for idem, booking in answers.items()
            if idem not in rows
            or rows[idem].reservation_no != booking["reservation_no"]
            or Decimal(rows[idem].total) != Decimal(booking["price"]["total"])
        ]
        assert not lost, lost
        # creates that were committed although their first answer was a 503 or no answer at all
        committed_unanswered = sum(rows[idem].created_at < starting_wall[0] for idem in unsettled)
        first_ok = min(s.sent + s.took for s in samples if s.sent >= marks["starting"] and s.status == 200)
        assert total_bookings == len(created) + len(existing)
        await check_wallet_invariants(fresh.db)
        await check_booking_invariants(fresh.db)

        async def outbox_drained() -> bool:
            rows = await fresh.outbox_rows()
            return all(r["status"] == "delivered" for r in rows)

        await eventually(outbox_drained, timeout=30, interval=0.5, what="the outbox resumes and drains")
        delivered_ids = {r["webhook_id"] for r in await fresh.outbox_rows()}
        assert delivered_ids <= {c.headers.get("webhook-id") for c in partner.calls("/booking/create")}
        assert await procs.stop(api) == 0, api.logs()

    report(
        f"PostgreSQL restart: {len(samples)} requests (get/search/create) -> 200={counts['200']}, "
        f"503={counts['503']}, other={counts['other']}; down {outage_end - outage_start:.1f}s, "
        f"{len(during)} requests during the outage all 503 UNAVAILABLE, slowest 503 {slowest_503:.2f}s; "
        f"/healthz during outage {sorted({p.status for p in probes_down if p.kind == 'healthz'})}, "
        f"/readyz {sorted({p.status for p in probes_down if p.kind == 'readyz'})}; recovered "
        f"{max(recovery, 0):.1f}s after PostgreSQL accepted connections (pg_ctl start took "
        f"{marks['up'] - marks['starting']:.1f}s; first 200 {first_ok - marks['starting']:.1f}s after it began); "
        f"creates: {len(created)} keys, {len(unsettled)} answered 503 or cut off and retried with their key "
        f"({settle_statuses}; {committed_unanswered} of them had been committed before the crash), lost=0, "
        f"bookings={total_bookings}"
    )
