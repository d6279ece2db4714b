"""E-mails to a hosted partner's users (docs/rules/hosted-partners.md) against a real SMTP server (aiosmtpd) on
loopback: one per new booking and per cancellation, sent by the worker's job (never in the
request), retried while the server is down, never twice."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, row_of
from tests.hosted.conftest import HostedFactory
from tests.hosted.test_hosted_search_and_booking import company, search_at
from tests.servers import LiveServer, free_port
from tests.smtp_server import Inbox, smtp_server
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import outbox, partner_emails
from transfers.deliveries import send_partner_emails
from transfers.delivery.models import OutboxMessage
from transfers.hosted import mail
from transfers.hosted.users import create_partner_user
from transfers.services import Services

BOOKING = "/api/v1/booking-api/booking"
POINT = {"type": "POINT", "lat": 52.9548, "lng": -1.1581, "name": "Nottingham"}


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    """A real SMTP server on loopback (``tests/smtp_server.py``) that takes every message."""
    with smtp_server() as running:
        yield running


@contextlib.asynccontextmanager
async def worker_services(service: LiveServer, clock: ShiftedClock, port: int) -> AsyncIterator[Services]:
    """The worker's view: the app's settings with TRANSFERS_SMTP_URL pointing at the test server."""
    base = svc_of(service)
    settings = base.settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{port}", "smtp_timeout_seconds": 2})
    svc = Services.build(settings, clock=clock, application_name="transfers-mail-worker")
    try:
        yield svc
    finally:
        await svc.partner_client.aclose()
        await svc.db.dispose()


async def emails_of(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    booking_id = (await row_of(db, reservation_no))["id"]
    async with db.read() as conn:
        rows = await conn.execute(
            select(partner_emails).where(partner_emails.c.booking_id == booking_id).order_by(partner_emails.c.id)
        )
        return [dict(r._mapping) for r in rows]


async def book_hosted(http: httpx.AsyncClient, key: str, iata: str, name: str) -> dict[str, Any]:
    found = await search_at(http, key, iata, point=POINT)
    sedan = company(found, name)[0]
    answer = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    assert answer.status_code == 200, answer.text
    booking: dict[str, Any] = answer.json()["booking"]
    return booking


async def test_one_mail_per_new_booking_and_cancellation_never_twice(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, key = await make_client()
    partner_id = await make_hosted(airports=("EMA",), name="Hosted East Midlands")
    for address in ("dispatch@eastmidlands-cars.example", "owner@eastmidlands-cars.example"):
        await create_partner_user(db, clock, partner_id=partner_id, email=address, password=None, actor="tests")
    booking = await book_hosted(http, key, "EMA", "Hosted East Midlands")
    no = booking["reservation_no"]
    assert inbox.messages == []  # never inside the request
    # a re-delivery of the same create (at-least-once outbox) does not queue a second e-mail
    booking_id = (await row_of(db, no))["id"]
    async with db.read() as conn:
        created = OutboxMessage.from_row(
            (
                await conn.execute(
                    select(outbox).where(outbox.c.booking_id == booking_id, outbox.c.kind == "booking.create")
                )
            )
            .mappings()
            .one()
        )
    for _ in range(2):
        async with db.write() as conn:
            await mail.enqueue(conn, created, "booking.new", clock.now())
    assert [e["kind"] for e in await emails_of(db, no)] == ["booking.new"]
    async with worker_services(service, clock, port) as svc:
        await send_partner_emails(svc)
        await send_partner_emails(svc)  # a second run finds nothing to send
        cancelled = await http.delete(BOOKING, params={"reservation_no": no, "cancellation_id": 1}, headers=bearer(key))
        assert cancelled.status_code == 200
        # The client's cancellation reaches the hosted partner through the outbox, in-process.
        assert svc_of(service).dispatcher is not None
        clock.advance(timedelta(minutes=1))
        await svc_of(service).dispatcher.run_once()
        await send_partner_emails(svc)
        await send_partner_emails(svc)
    subjects = [m["Subject"] for _, m in inbox.messages if no in m["Subject"]]
    assert subjects == [f"New booking {no}: please accept or decline", f"Booking {no} was cancelled"]
    recipients, first = next((r, m) for r, m in inbox.messages if no in m["Subject"])
    assert recipients == ["dispatch@eastmidlands-cars.example", "owner@eastmidlands-cars.example"]
    body = first.get_payload()
    assert isinstance(body, str) and f"/partner/bookings/{no}" in body and "EMA local time" in body
    assert [(e["kind"], e["status"], e["attempts"]) for e in await emails_of(db, no)] == [
        ("booking.new", "sent", 1),
        ("booking.cancelled", "sent", 1),
    ]


async def test_retried_while_the_smtp_server_is_down(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("HUY",), name="Hosted Humberside")
    await create_partner_user(
        db, clock, partner_id=partner_id, email="desk@humber-cars.example", password=None, actor="tests"
    )
    booking = await book_hosted(http, key, "HUY", "Hosted Humberside")
    no = booking["reservation_no"]
    port = free_port()  # nothing listens here yet
    async with worker_services(service, clock, port) as svc:
        await send_partner_emails(svc)
        (pending,) = await emails_of(db, no)
        assert (pending["status"], pending["attempts"]) == ("pending", 1)
        assert "ConnectionRefusedError" in (pending["last_error"] or "")
        await send_partner_emails(svc)  # not due yet (backoff): no second attempt
        assert (await emails_of(db, no))[0]["attempts"] == 1
        with smtp_server(port) as (inbox, _):
            clock.advance(timedelta(seconds=15))
            await send_partner_emails(svc)
            clock.advance(timedelta(hours=1))
            await send_partner_emails(svc)
    assert [m["Subject"] for _, m in inbox.messages if no in m["Subject"]] == [
        f"New booking {no}: please accept or decline"
    ]
    (sent,) = await emails_of(db, no)
    assert (sent["status"], sent["attempts"]) == ("sent", 2)


async def test_without_smtp_url_the_mail_is_logged_not_sent(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    from structlog.testing import capture_logs

    _, key = await make_client()
    partner_id = await make_hosted(airports=("LBA",), name="Hosted Leeds")
    await create_partner_user(
        db, clock, partner_id=partner_id, email="ops@leeds-cars.example", password=None, actor="tests"
    )
    booking = await book_hosted(http, key, "LBA", "Hosted Leeds")
    svc = svc_of(service)
    assert svc.settings.smtp_url == ""
    with capture_logs() as logs:
        await send_partner_emails(svc)
    assert any(
        e["event"] == "partner_email_not_sent" and e.get("reservation_no") == booking["reservation_no"] for e in logs
    )
    assert [(e["status"], e["recipients"]) for e in await emails_of(db, booking["reservation_no"])] == [
        ("logged", ["ops@leeds-cars.example"])
    ]
    await asyncio.sleep(0)


async def test_an_amendment_is_taken_in_process_and_mailed(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, key = await make_client()
    partner_id = await make_hosted(airports=("BOH",), name="Hosted Bournemouth")
    await create_partner_user(
        db, clock, partner_id=partner_id, email="desk@bournemouth-cars.example", password=None, actor="tests"
    )
    booking = await book_hosted(http, key, "BOH", "Hosted Bournemouth")
    no = booking["reservation_no"]
    changed = await http.patch(
        BOOKING, params={"reservation_no": no}, json={"passenger": {"surname": "Byron"}}, headers=bearer(key)
    )
    assert changed.status_code == 202, changed.text
    dispatcher = svc_of(service).dispatcher
    assert dispatcher is not None
    for _ in range(3):
        clock.advance(timedelta(minutes=1))
        await dispatcher.run_once(limit=200)
    seen = (await http.get(BOOKING, params={"reservation_no": no}, headers=bearer(key))).json()
    assert seen["amendment"]["status"] == "APPLIED" and seen["passenger"]["surname"] == "Byron"
    async with worker_services(service, clock, port) as svc:
        await send_partner_emails(svc)
    # Both mails, in either order: the service's own worker may have tried (and rescheduled) the first one
    # before this test's worker ran, which puts it after the second in the queue.
    subjects = sorted(m["Subject"] for _, m in inbox.messages if no in m["Subject"])
    assert subjects == sorted([f"New booking {no}: please accept or decline", f"Booking {no} was changed"])
