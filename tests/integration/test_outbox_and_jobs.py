"""Outbox delivery under concurrency and crashes, and the scheduled jobs, on both databases."""

from __future__ import annotations

import asyncio
import itertools
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from structlog.testing import capture_logs

from tests.api.test_booking_lifecycle import balance_of, search, svc_of
from tests.conftest import ON_POSTGRES, ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body
from tests.servers import LiveServer
from transfers.bookings.lifecycle import CONCURRENT_CHANGE_ATTEMPTS, ConcurrentChange
from transfers.bookings.partner_answers import EFFECTS
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, outbox
from transfers.deliveries import Dispatcher
from transfers.delivery import operators
from transfers.delivery import repository as outbox_repo
from transfers.delivery.engine import UNAPPLIED
from transfers.jobs import scheduled
from transfers.partners.calls import MessageKind
from transfers.services import Services

BOOKING = "/api/v1/booking-api/booking"


async def book(http: httpx.AsyncClient, key: str, iata: str, **body: Any) -> dict[str, Any]:
    found = await search(http, key, iata)
    response = await http.post(BOOKING, json=booking_body(found["search_id"], **body), headers=bearer(key))
    assert response.status_code == 200, response.text
    booking: dict[str, Any] = response.json()["booking"]
    return booking


async def status_of(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    answer: dict[str, Any] = (
        await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    ).json()
    return answer


async def test_fifty_concurrent_bookings_never_overdraw_one_wallet(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=("BRS",), vehicles=default_vehicles(price="10.00")[:1])
    found = await search(http, key, "BRS")
    gate = asyncio.Event()

    async def one(i: int) -> httpx.Response:
        await gate.wait()
        return await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))

    tasks = [asyncio.create_task(one(i)) for i in range(50)]
    await asyncio.sleep(0.05)
    gate.set()
    answers = await asyncio.gather(*tasks)
    ok = [a for a in answers if a.status_code == 200]
    short = [a for a in answers if a.status_code == 422 and a.json()["code"] == 1101]
    assert len(ok) == 10, [a.text for a in answers if a.status_code not in (200, 422)][:3]
    assert len(short) == 40
    assert short[0].json() == {"status": "Error", "code": 1101, "message": "WALLET_BALANCE_INSUFFICIENT"}
    assert await balance_of(db, client_id) == Decimal("0.00")
    async with db.read() as conn:
        count = len((await conn.execute(select(bookings.c.id).where(bookings.c.client_id == client_id))).all())
    assert count == 10  # a refused debit leaves no booking behind


async def test_expired_delivery_fails_the_booking_and_refunds(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("BHX",), mode="status", status_code=503)
    partner.mode = "ok"
    found = await search(http, key, "BHX")
    partner.mode = "status"
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "PENDING"
    clock.advance(timedelta(hours=25))
    assert (await scheduled.run_all(svc_of(service)))["expired"] >= 1
    read = await status_of(http, key, booking["reservation_no"])
    assert read["status"] == "FAILED"
    assert await balance_of(db, client_id) == Decimal("100.00")


async def test_retry_past_the_deadline_fails_the_booking(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("NCL",))
    found = await search(http, key, "NCL")
    partner.mode, partner.status_code = "status", 502
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    dispatcher: Dispatcher = svc_of(service).dispatcher
    for hours in (1, 4, 8, 16, 23.99):  # attempts keep failing; the last one lands past the deadline
        clock.offset = timedelta(hours=hours)
        await dispatcher.run_once()
    read = await status_of(http, key, booking["reservation_no"])
    assert read["status"] == "FAILED"
    assert await balance_of(db, client_id) == Decimal("100.00")
    assert len(partner.calls("/booking/create")) == 6


async def test_reconciliation_applies_the_partners_answer(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="200.00")
    partner, _, _ = await make_partner(airports=("CWL",), create_status="PENDING")
    first = await book(http, key, "CWL")
    second = await book(http, key, "CWL")
    assert first["status"] == second["status"] == "PENDING_APPROVAL"
    svc = svc_of(service)
    await scheduled.reconcile(svc)
    assert partner.calls("/booking/info/") == []  # too young: 30 minutes have not passed
    clock.advance(timedelta(minutes=31))
    partner.info_status = "APPROVED"
    assert (await scheduled.run_all(svc))["reconciled"] >= 2  # whatever backlog other tests left
    for booking in (first, second):
        read = await status_of(http, key, booking["reservation_no"])
        assert read["status"] == "APPROVED"
        assert read["driver"]["name"] == "Sam Driver"
    info_calls = partner.calls("/booking/info/")
    assert {c.path.rsplit("/", 1)[1] for c in info_calls} == {first["reservation_no"], second["reservation_no"]}
    assert all(c.signature_ok for c in info_calls)
    await scheduled.reconcile(svc)
    assert len(partner.calls("/booking/info/")) == 2  # approved bookings are not asked again
    assert await balance_of(db, client_id) == Decimal("200.00") - Decimal("80.00")


async def test_partner_cancellation_seen_by_reconciliation_refunds(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("INV",))
    booking = await book(http, key, "INV")
    clock.advance(timedelta(minutes=45))
    partner.info_status = "CANCELLED"
    await scheduled.run_all(svc_of(service))
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "CANCELLED"
    assert await balance_of(db, client_id) == Decimal("100.00")


async def test_completion_job_closes_approved_rides_after_pickup(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    await make_partner(
        airports=("BFS",),
        create_status="APPROVED",
        driver={"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"},
    )
    booking = await book(http, key, "BFS")
    assert booking["status"] == "APPROVED"
    svc = svc_of(service)
    pickup = datetime.fromisoformat(booking["pickup_datetime"])
    clock.advance(pickup - clock.now() + timedelta(hours=11))
    await scheduled.complete_rides(svc)
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "APPROVED"  # < 12 h after pickup
    clock.advance(timedelta(hours=1, minutes=1))
    assert (await scheduled.run_all(svc))["completed"] >= 1
    # at most a batch a run, oldest pickups first: other tests' rides in the session's database may come first
    for _ in range(100):
        if not await scheduled.complete_rides(svc):
            break
    read = await status_of(http, key, booking["reservation_no"])
    assert read["status"] == "COMPLETED"
    assert read["is_cancelable"] is False


async def test_a_crashed_delivery_is_redelivered_with_the_same_webhook_id(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
) -> None:
    _, key = await make_client()
    partner, _, _ = await make_partner(airports=("SOU",))
    found = await search(http, key, "SOU")
    partner.mode, partner.status_code = "status", 503
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    svc = svc_of(service)
    clock.advance(timedelta(seconds=20))
    now = svc.clock.now()
    async with db.write() as conn:  # a worker claims the message ... and dies before recording anything
        claimed = await outbox_repo.claim_due(conn, now=now, lease_until=now + timedelta(seconds=60), limit=100)
    assert booking["reservation_no"] in {m.reservation_no for m in claimed}
    partner.mode = "ok"
    dispatcher: Dispatcher = svc.dispatcher
    await dispatcher.run_once()
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "PENDING"  # lease still held
    clock.advance(timedelta(seconds=61))
    await dispatcher.run_once()
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "PENDING_APPROVAL"
    creates = partner.calls("/booking/create")
    assert len({c.headers["webhook-id"] for c in creates}) == 1


@pytest.mark.pg_only
async def test_two_workers_never_deliver_one_message_at_the_same_time(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
) -> None:
    assert ON_POSTGRES
    _, key = await make_client(balance="5000.00")
    partner, _, _ = await make_partner(airports=("EMA",))
    found = await search(http, key, "EMA")
    partner.mode, partner.status_code = "status", 503
    reservations = []
    for _ in range(30):
        answer = await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))
        reservations.append(answer.json()["booking"]["reservation_no"])
    partner.mode, partner.delay = "slow", 0.05
    clock.advance(timedelta(seconds=20))
    base: Services = svc_of(service)
    workers = [Services.build(base.settings, clock=clock, application_name=f"transfers-worker-{i}") for i in (1, 2)]
    try:
        dispatchers = [Dispatcher(w, concurrency=8) for w in workers]
        for _ in range(5):
            await asyncio.gather(*(d.run_once(limit=8) for d in dispatchers))
    finally:
        for w in workers:
            await w.partner_client.aclose()
            await w.db.dispose()
    async with db.read() as conn:
        rows = (
            await conn.execute(select(outbox.c.status, outbox.c.payload).where(outbox.c.kind == "booking.create"))
        ).all()
    mine = [r for r in rows if r.payload["reservation_no"] in reservations]
    assert {r.status for r in mine} == {"delivered"}
    by_webhook: dict[str, list[Any]] = {}
    for call in partner.calls("/booking/create"):
        if call.started >= 0 and call.headers.get("webhook-id"):
            by_webhook.setdefault(call.headers["webhook-id"], []).append(call)
    successful = [calls[1:] for calls in by_webhook.values()]  # first call of each was the 503 at booking time
    assert all(len(calls) == 1 for calls in successful), "a message was delivered twice"
    for calls in by_webhook.values():
        spans = sorted((c.started, c.finished) for c in calls)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))


async def test_an_answer_that_keeps_meeting_concurrent_changes_is_recorded_and_delivered_again(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every try to apply the answer meets a concurrent change of the booking (injected: the
    create's effect raises ConcurrentChange): the attempt is recorded with the reason, the message
    stays pending and ``outbox_answer_unapplied`` is logged; the next delivery applies the answer."""
    _, key = await make_client()
    partner, _, _ = await make_partner(
        airports=("EXT",),
        create_status="APPROVED",
        driver={"name": "Jo", "phone": "+447400123457", "plate": "AB12 CDE"},
    )
    found = await search(http, key, "EXT")
    partner.mode, partner.status_code = "status", 503
    booking = (await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))).json()["booking"]
    assert booking["status"] == "PENDING"
    tries: list[int] = []

    async def always_concurrent(*_: Any) -> dict[str, Any] | None:
        tries.append(1)
        raise ConcurrentChange()

    monkeypatch.setitem(EFFECTS, MessageKind.CREATE, always_concurrent)
    partner.mode = "ok"
    clock.advance(timedelta(seconds=20))
    with capture_logs() as logs:
        await svc_of(service).dispatcher.run_once()
    assert len(tries) == CONCURRENT_CHANGE_ATTEMPTS
    assert [e["reservation_no"] for e in logs if e["event"] == "outbox_answer_unapplied"] == [booking["reservation_no"]]
    async with db.read() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == booking["reservation_no"]))
        ).scalar_one()
        [message] = await operators.for_booking(conn, booking_id)
        attempts = await operators.attempts_of(conn, message.id)
    assert (message.status, message.attempts, message.last_error) == ("pending", 2, UNAPPLIED)
    assert message.lease_until is None
    assert [a.error for a in attempts][-1] == UNAPPLIED and len(attempts) == 2
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "PENDING"

    monkeypatch.undo()
    clock.advance(timedelta(minutes=1))  # past the backoff after a second attempt (30 s ± 20 %)
    await svc_of(service).dispatcher.run_once()
    assert (await status_of(http, key, booking["reservation_no"]))["status"] == "APPROVED"
    creates = partner.calls("/booking/create")
    assert len(creates) == 3 and len({c.headers["webhook-id"] for c in creates}) == 1
