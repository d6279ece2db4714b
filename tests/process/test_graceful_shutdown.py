"""SIGTERM with requests in flight (hardening item 5, RELIABILITY F7).

``transfers serve`` with the embedded worker and a partner that takes 1.5 s per call: 20 searches
and 2 creates (whose immediate partner delivery is running) are in flight when SIGTERM arrives.
All of them must finish 200, new connections must be refused from then on, and the process must
exit 0 well within the graceful timeout, leaving no outbox lease behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time

import httpx
import pytest

from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.process.conftest import FreshDatabase, Partners, Processes, eventually, report

pytestmark = [pytest.mark.slow]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IN_FLIGHT_SEARCHES = 20
IN_FLIGHT_CREATES = 2


async def _refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return True
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return False


async def test_sigterm_finishes_requests_in_flight_refuses_new_ones_and_exits_0(
    fresh_db: FreshDatabase,
    procs: Processes,
    partners: Partners,
) -> None:
    _, key = await fresh_db.make_client(balance="500.00")
    partner, _ = await partners.add(fresh_db, airports=("LHR",), name="Slow partner", mode="slow", delay=1.5)
    env = procs.env(fresh_db.url, partner_timeout_seconds=5, partner_create_budget_seconds=4)
    api = await procs.serve("api", env)
    assert api.port is not None
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with (
        httpx.AsyncClient(base_url=api.url, timeout=30, limits=limits) as http,
        httpx.AsyncClient(base_url=api.url, timeout=5) as probe,
    ):
        first = await http.post(SEARCH, json=search_body(), headers=bearer(key))
        assert first.status_code == 200, first.text
        found = first.json()
        assert (await probe.get("/readyz")).status_code == 200  # probe now holds a keep-alive connection

        searches = [
            asyncio.create_task(http.post(SEARCH, json=search_body(), headers=bearer(key)))
            for _ in range(IN_FLIGHT_SEARCHES)
        ]
        creates = [
            asyncio.create_task(
                http.post(
                    BOOKING,
                    json=booking_body(found["search_id"], 1),
                    headers={**bearer(key), "Idempotency-Key": f"gs-{i}"},
                )
            )
            for i in range(IN_FLIGHT_CREATES)
        ]
        await eventually(
            lambda: (
                len(partner.calls("/booking/search")) >= 1 + IN_FLIGHT_SEARCHES
                and len(partner.calls("/booking/create")) >= IN_FLIGHT_CREATES
            ),
            timeout=15,
            interval=0.02,
            what="all requests reach the partner",
        )
        signalled = time.monotonic()
        procs.signal(api, signal.SIGTERM)
        in_flight_at_signal = sum(not t.done() for t in searches + creates)
        # On a loaded box the first searches may already be answered by the time the last one
        # reaches the partner; most must still be running.
        assert in_flight_at_signal >= (IN_FLIGHT_SEARCHES + IN_FLIGHT_CREATES) // 2, in_flight_at_signal
        await eventually(
            lambda: _refused(api.port or 0), timeout=3, interval=0.02, what="new connections refused after SIGTERM"
        )
        refused_after = time.monotonic() - signalled
        still_in_flight = sum(not t.done() for t in searches + creates)
        # /readyz during the drain: the listener is closed and idle keep-alive connections are closed
        # with it, so nobody can reach it any more; if an answer does arrive it must not be "ready".
        try:
            readyz: int | str = (await probe.get("/readyz")).status_code
        except httpx.TransportError as exc:
            readyz = type(exc).__name__
        assert readyz != 200

        results = await asyncio.gather(*searches, *creates, return_exceptions=True)
        rc = await procs.wait_exit(api, timeout=40)
        exited_after = time.monotonic() - signalled

    failures = [
        r if isinstance(r, BaseException) else (r.status_code, r.text[:200])
        for r in results
        if isinstance(r, BaseException) or r.status_code != 200
    ]
    assert not failures, failures
    assert rc == 0, api.logs()
    assert exited_after < 30, "graceful timeout exceeded"
    for created in results[IN_FLIGHT_SEARCHES:]:
        assert isinstance(created, httpx.Response)
        assert created.json()["booking"]["status"] == "PENDING_APPROVAL"  # the partner's answer was applied
    assert all(call.finished > 0 for call in partner.requests)
    assert await _refused(api.port)
    rows = await fresh_db.outbox_rows()
    assert [(r["status"], r["lease_until"]) for r in rows] == [("delivered", None)] * IN_FLIGHT_CREATES
    report(
        f"graceful shutdown [{'pg' if fresh_db.is_postgres else 'sqlite'}]: "
        f"{in_flight_at_signal} of {len(results)} requests in flight at SIGTERM ({still_in_flight} still running "
        f"when new connections were "
        f"refused {refused_after:.2f}s after the signal), {len(results) - len(failures)} x 200, "
        f"exit code {rc} after {exited_after:.2f}s, /readyz during drain: {readyz}"
    )
