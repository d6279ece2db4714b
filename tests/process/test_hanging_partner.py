"""A partner that accepts the connection and never answers (RELIABILITY L6, F6 "hang").

The silent partner is a raw asyncio TCP server: it answers searches (so it can be booked) and
reads every other request without ever answering. Its booking's create delivery must give up at
the per-attempt timeout (the 1 s create budget in the request, ``partner_timeout_seconds`` in the
worker), and while it hangs the worker must go on delivering other partners' messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import select, update

from tests.booking_invariants import check_booking_invariants
from tests.conftest import bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body, search_body
from tests.invariants import check_wallet_invariants
from tests.process.conftest import FreshDatabase, Partners, Processes, eventually, report
from transfers.db.tables import bookings, delivery_attempts, outbox

pytestmark = [pytest.mark.slow]

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
CREATE_BUDGET = 1.0
ATTEMPT_TIMEOUT = 3.0  # the default partner_timeout_seconds
PARIS = {"type": "POINT", "lat": 48.8566, "lng": 2.3522, "name": "Place de la Concorde, Paris"}


@dataclass
class Hung:
    path: str
    webhook_id: str | None
    opened: float
    closed: float | None = None  # when the caller gave up and closed the connection


class SilentPartner:
    """Answers POST /booking/search; reads any other request and never answers it."""

    def __init__(self) -> None:
        self.hung: list[Hung] = []
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), timeout=5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                path = head[0].split(" ")[1]
                headers = dict(line.lower().split(": ", 1) for line in head[1:] if ": " in line)
                await reader.readexactly(int(headers.get("content-length", "0")))
                if path == "/booking/search":
                    body = orjson.dumps({"distance_km": 20, "vehicles": default_vehicles()})
                    writer.write(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                        b"content-length: %d\r\n\r\n%s" % (len(body), body)
                    )
                    await writer.drain()
                    continue
                record = Hung(path, headers.get("webhook-id"), time.monotonic())
                self.hung.append(record)
                await reader.read()  # nothing is ever answered: wait for the caller to give up
                record.closed = time.monotonic()
                return


async def _make_due(fresh: FreshDatabase, *outbox_ids: int) -> None:
    async with fresh.db.write() as conn:
        await conn.execute(update(outbox).where(outbox.c.id.in_(outbox_ids)).values(next_attempt_at=datetime.now(UTC)))


async def _message_of(fresh: FreshDatabase, reservation_no: str) -> dict[str, Any]:
    async with fresh.db.read() as conn:
        row = (
            await conn.execute(
                select(outbox)
                .join(bookings, bookings.c.id == outbox.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no)
            )
        ).one()
    return dict(row._mapping)


async def test_a_partner_that_never_answers_does_not_hold_the_worker(
    fresh_db: FreshDatabase,
    procs: Processes,
    partners: Partners,
) -> None:
    silent = SilentPartner()
    silent_url = await silent.start()
    try:
        await partners.register(fresh_db, base_url=silent_url, airports=("LHR",), name="Silent partner")
        fast, _ = await partners.add(fresh_db, airports=("CDG",), name="Fast partner")
        _, key = await fresh_db.make_client()
        env = procs.env(
            fresh_db.url, partner_timeout_seconds=ATTEMPT_TIMEOUT, partner_create_budget_seconds=CREATE_BUDGET
        )
        api = await procs.serve("api", env)
        async with httpx.AsyncClient(base_url=api.url, timeout=30, headers=bearer(key)) as http:
            lhr = (await http.post(SEARCH, json=search_body())).json()
            cdg = (
                await http.post(
                    SEARCH,
                    json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "CDG"}, dropoff_location=PARIS),
                )
            ).json()
            assert lhr["vehicles"] and cdg["vehicles"], (lhr, cdg)

            sent = time.monotonic()
            created = await http.post(BOOKING, json=booking_body(lhr["search_id"], 1))
            create_took = time.monotonic() - sent
            assert created.status_code == 200, created.text
            silent_booking = created.json()["booking"]
            assert silent_booking["status"] == "PENDING"  # no answer within the budget: the worker retries
            assert create_took < CREATE_BUDGET + 3, f"create took {create_took:.2f}s"

            fast.mode, fast.status_code = "status", 503  # B and C are left for the worker, too
            others = []
            for _ in range(2):
                answer = await http.post(BOOKING, json=booking_body(cdg["search_id"], 1))
                assert answer.json()["booking"]["status"] == "PENDING", answer.text
                others.append(answer.json()["booking"]["reservation_no"])
            fast.mode = "ok"
            a = await _message_of(fresh_db, silent_booking["reservation_no"])
            b, c = [await _message_of(fresh_db, r) for r in others]

            async def delivered(message: dict[str, Any]) -> bool:
                return (await _message_of(fresh_db, message["payload"]["reservation_no"]))["status"] == "delivered"

            rounds = []
            for other in (b, c):
                # The worker takes the silent partner's message and hangs on it ...
                await _make_due(fresh_db, a["id"])
                await eventually(
                    lambda n=len(silent.hung): len(silent.hung) > n,
                    timeout=10,
                    interval=0.02,
                    what="the worker calls the silent partner",
                )
                hanging = silent.hung[-1]
                assert hanging.webhook_id == a["webhook_id"]
                # ... and meanwhile another partner's message becomes due: it must not wait behind it.
                await _make_due(fresh_db, other["id"])
                await eventually(
                    lambda m=other: delivered(m),
                    timeout=ATTEMPT_TIMEOUT + 5,
                    interval=0.05,
                    what="the other partner's delivery",
                )
                fast_call = next(
                    r
                    for r in reversed(fast.calls("/booking/create"))
                    if r.headers.get("webhook-id") == other["webhook_id"]
                )
                await eventually(
                    lambda h=hanging: h.closed is not None,
                    timeout=ATTEMPT_TIMEOUT + 5,
                    what="the worker gives up on the silent partner",
                )
                assert hanging.closed is not None
                rounds.append((fast_call.finished - hanging.opened, hanging.closed - hanging.opened))
                assert fast_call.finished < hanging.closed, (
                    f"the other partner was only served {fast_call.finished - hanging.opened:.2f}s after the hang "
                    f"began, once the silent partner's attempt had timed out "
                    f"({hanging.closed - hanging.opened:.2f}s): the worker was held by the hung delivery"
                )
                assert ATTEMPT_TIMEOUT - 0.2 <= hanging.closed - hanging.opened <= ATTEMPT_TIMEOUT + 3

            async def attempts_recorded() -> list[Any]:
                async with fresh_db.db.read() as conn:
                    rows = (
                        await conn.execute(
                            select(delivery_attempts.c.outcome, delivery_attempts.c.duration_ms)
                            .where(delivery_attempts.c.outbox_id == a["id"])
                            .order_by(delivery_attempts.c.id)
                        )
                    ).all()
                return rows if len(rows) == 3 else []

            attempts = await eventually(attempts_recorded, timeout=10, what="three recorded attempts")
            statuses = {
                r: (await http.get(BOOKING, params={"reservation_no": r})).json()["status"]
                for r in [silent_booking["reservation_no"], *others]
            }
        assert [o for o, _ in attempts] == ["retry:timeout"] * 3
        assert CREATE_BUDGET * 1000 - 200 <= attempts[0][1] <= CREATE_BUDGET * 1000 + 3000
        assert all(ATTEMPT_TIMEOUT * 1000 - 200 <= d <= ATTEMPT_TIMEOUT * 1000 + 3000 for _, d in attempts[1:])
        assert statuses == {
            silent_booking["reservation_no"]: "PENDING",
            others[0]: "PENDING_APPROVAL",
            others[1]: "PENDING_APPROVAL",
        }
        message = await _message_of(fresh_db, silent_booking["reservation_no"])
        assert (message["status"], message["attempts"]) == ("pending", 3)
        await check_wallet_invariants(fresh_db.db)
        await check_booking_invariants(fresh_db.db)
        assert await procs.stop(api) == 0, api.logs()
    finally:
        await silent.close()
    report(
        f"hanging partner [{'pg' if fresh_db.is_postgres else 'sqlite'}]: create answered in {create_took:.2f}s "
        f"(budget {CREATE_BUDGET:g}s); worker attempts on the silent partner aborted after "
        f"{', '.join(f'{h:.2f}s' for _, h in rounds)} (timeout {ATTEMPT_TIMEOUT:g}s); the other partner's "
        f"messages delivered {', '.join(f'{o:.2f}s' for o, _ in rounds)} after the hang began"
    )
