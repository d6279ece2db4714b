"""Crash at each failpoint of the create and cancel paths, restart, retry with the same key
(RELIABILITY F1, W3 a and c).

For every failpoint an API process (embedded worker) is started with
``TRANSFERS_FAILPOINTS=<point>=exit``; the request dies there with exit code 137, like ``kill -9``
at that exact spot. The API is restarted without failpoints and the request is retried with its
Idempotency-Key until it gets an answer. Then: exactly one booking and one debit (and one refund
for a cancellation), the partner's deliveries of a message share one webhook-id and never overlap,
and every outbox message is delivered. The four cases run side by side, each on its own database.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.booking_invariants import check_booking_invariants
from tests.conftest import ON_POSTGRES, PG_URL, bearer
from tests.helpers import booking_body, search_body
from tests.invariants import check_wallet_invariants
from tests.process.conftest import (
    Partners,
    Processes,
    Template,
    deliveries_by_webhook_id,
    eventually,
    fresh_database_on,
    overlapping,
    report,
)
from transfers.db.tables import bookings, ledger_entries

pytestmark = [pytest.mark.slow]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
POINTS = ("booking.after_commit", "booking.before_response", "outbox.after_send", "cancel.after_commit")
LOCK_SECONDS = 3  # idempotency lock and outbox lease left behind by the dead process


async def _crash_and_retry(point: str, procs: Processes, partners: Partners, tmp: Path, template: Template) -> str:
    tmp.mkdir()
    async with fresh_database_on(PG_URL if ON_POSTGRES else None, tmp, template) as fresh:
        partner, _ = await partners.add(fresh, airports=("LHR",), name=f"Partner {point}")
        _, key = await fresh.make_client(balance="500.00")
        common = {"idempotency_lock_seconds": LOCK_SECONDS, "outbox_lease_seconds": LOCK_SECONDS}
        api = await procs.serve(f"api-{point}", procs.env(fresh.url, failpoints=f"{point}=exit", **common))
        async with httpx.AsyncClient(base_url=api.url, timeout=30, headers=bearer(key)) as http:
            found = (await http.post(SEARCH, json=search_body())).json()
            create = {
                "method": "POST",
                "url": BOOKING,
                "json": booking_body(found["search_id"], 1),
                "headers": {"Idempotency-Key": f"create-{point}"},
            }
            request = create
            if point == "cancel.after_commit":
                booked = await http.request(**create)
                assert booked.status_code == 200, booked.text
                request = {
                    "method": "DELETE",
                    "url": BOOKING,
                    "headers": {"Idempotency-Key": f"cancel-{point}"},
                    "params": {"reservation_no": booked.json()["booking"]["reservation_no"], "cancellation_id": 1},
                }
            with pytest.raises(httpx.TransportError):
                await http.request(**request)
            assert await procs.wait_exit(api, timeout=15) == 137
            assert f"failpoint {point}: exit 137" in api.err.read_text()

        restarted = await procs.serve(f"api-{point}-restarted", procs.env(fresh.url, **common), port=api.port)
        answers: list[int] = []
        async with httpx.AsyncClient(base_url=restarted.url, timeout=30, headers=bearer(key)) as http:
            deadline = time.monotonic() + 30
            while True:
                answer = await http.request(**request)
                answers.append(answer.status_code)
                if answer.status_code != 409:  # 409: the dead process's lock, until it expires
                    break
                assert time.monotonic() < deadline, f"{point}: still 409 after 30 s"
                await asyncio.sleep(0.5)
            replay = await http.request(**request)
            assert replay.status_code == answer.status_code and replay.headers.get("idempotent-replayed") == "true"

            async def delivered() -> bool:
                rows = await fresh.outbox_rows()
                return bool(rows) and all(r["status"] == "delivered" for r in rows)

            await eventually(delivered, timeout=30, interval=0.3, what=f"{point}: outbox delivered")

        async with fresh.db.read() as conn:
            rows = (
                await conn.execute(
                    select(bookings.c.id, bookings.c.reservation_no, bookings.c.status, bookings.c.idempotency_key)
                )
            ).all()
            moves = dict(
                (
                    await conn.execute(
                        select(ledger_entries.c.kind, func.count())
                        .where(ledger_entries.c.booking_id.is_not(None))
                        .group_by(ledger_entries.c.kind)
                    )
                ).all()
            )
        assert len(rows) == 1, rows
        ((_, reservation_no, status, idem),) = rows
        assert idem == f"create-{point}"
        cancelling = point == "cancel.after_commit"
        assert moves == ({"debit_booking": 1, "credit_refund": 1} if cancelling else {"debit_booking": 1})
        assert status == ("CANCELLED" if cancelling else "PENDING_APPROVAL")
        body: dict[str, Any] = answer.json()
        if cancelling:
            # The cancellation was committed by the dead process; the booking remembers the key that
            # cancelled it, so the retry answers Success rather than CANCELLATION_FAILED.
            assert (answer.status_code, body) == (
                200,
                {"status": "Success", "message": "Booking cancelled successfully.", "data": []},
            )
        else:
            assert answer.status_code == 200 and body["booking"]["reservation_no"] == reservation_no
        await check_wallet_invariants(fresh.db)
        await check_booking_invariants(fresh.db)
        messages = await fresh.outbox_rows()
        calls = {
            **deliveries_by_webhook_id(partner, "/booking/create"),
            **deliveries_by_webhook_id(partner, "/booking/update"),
        }
        assert set(calls) == {m["webhook_id"] for m in messages}
        assert not [wid for wid, c in calls.items() if overlapping(c)]
        sent = {m["kind"]: len(calls[m["webhook_id"]]) for m in messages}
        if point == "outbox.after_send":
            assert sent == {"booking.create": 2}  # sent again after the lease expired, same webhook-id
        assert await procs.stop(restarted) == 0, restarted.logs()
    retry = " -> ".join(str(s) for s in answers)
    return (
        f"{point}: exit 137, retry answers {retry}"
        + (f" {body.get('code', '')}" if answer.status_code != 200 else "")
        + f"; bookings=1, ledger {moves}, status {status}, partner calls per message {sent}"
    )


async def test_crash_at_each_failpoint_then_retry_with_the_same_key(
    procs: Processes,
    partners: Partners,
    tmp_path: Path,
    migrated_template: Template,
) -> None:
    results = await asyncio.gather(
        *(
            _crash_and_retry(point, procs, partners, tmp_path / point.replace(".", "_"), migrated_template)
            for point in POINTS
        ),
        return_exceptions=True,
    )
    failures = [r for r in results if isinstance(r, BaseException)]
    for line in results:
        if isinstance(line, str):
            report(f"failpoint [{'pg' if ON_POSTGRES else 'sqlite'}] {line}")
    if failures:
        raise failures[0]
