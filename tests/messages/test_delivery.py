"""Sending messages to travellers end to end (docs/rules/messages.md#sending), on both databases: bookings
driven through the booking API and a test partner's reverse calls, the planner's pass, then the worker's
``traveller_messages`` job against a real SMTP server (aiosmtpd) on loopback, the clock moved (never
slept). A message taken once and never again; the brand and Reply-To; a 5xx failed at once (and the
client told for a message it must hear of); a 4xx retried until taken; a server that hangs bounded and
not resent; a worker killed mid-send never sends twice; a message past its expiry expires; an address
stopped since the planning suppressed."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancellation_policies import move_clock_to
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.messages.test_planner import REVERSE_UPDATE, approved, only_these, plan_all, rows
from tests.ratings.helpers import dropped_off_ride
from tests.servers import LiveServer
from tests.smtp_server import Inbox, free_port, smtp_server
from transfers.bookings.rating_link import rating_token
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import client_events
from transfers.deliveries import send_traveller_messages
from transfers.messages import delivery
from transfers.messages import queue_repository as queue_repo
from transfers.messages import repository as repo
from transfers.messages.models import Channel, MessageSettings, OptOutSource
from transfers.services import Services


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


@contextlib.asynccontextmanager
async def worker(service: LiveServer, clock: ShiftedClock, port: int, **more: Any) -> AsyncIterator[Services]:
    """The worker's view: the app's settings with TRANSFERS_SMTP_URL pointing at the test server."""
    settings = svc_of(service).settings.model_copy(
        update={"smtp_url": f"smtp://127.0.0.1:{port}", "smtp_timeout_seconds": 0.5, **more}
    )
    svc = Services.build(settings, clock=clock, application_name="transfers-messages-worker")
    try:
        yield svc
    finally:
        await svc.partner_client.aclose()
        await svc.db.dispose()


def of(found: list[dict[str, Any]], template: str, channel: str = "email") -> dict[str, Any]:
    (row,) = [r for r in found if r["template"] == template and r["channel"] == channel]
    return row


async def failed_events(db: Database, booking_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        found = await conn.execute(
            select(client_events.c.data, client_events.c.sequence).where(
                client_events.c.booking_id == booking_id, client_events.c.type == "booking.message_failed"
            )
        )
        return [
            {"data": r.data if isinstance(r.data, dict) else orjson.loads(r.data), "sequence": r.sequence}
            for r in found
        ]


async def test_confirmed_taken_once_with_the_brand_and_reply_to(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, no, row = await approved(http, db, clock, make_client, make_partner)
    async with db.write() as conn:
        settings = await repo.settings_of(conn, int(row["client_id"]))
        assert settings is not None
        await repo.save_settings(conn, dataclasses.replace(settings, reply_to="help@sunny.example"), clock.now())
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    async with worker(service, clock, port) as svc:
        assert await send_traveller_messages(svc) >= 1
        assert await send_traveller_messages(svc) == 0  # nothing more to send
    ((to, mail),) = [m for m in inbox.messages if no in str(m[1]["Subject"])]
    assert to == [row["passenger_email"]]
    assert str(mail["From"]).startswith("Sunny Trips <") and mail["Reply-To"] == "help@sunny.example"
    sent = of(await rows(db, int(row["id"])), "confirmed")
    assert sent["status"] == "sent" and sent["sent_at"] is not None and sent["attempts"] == 1
    assert sent["subject"] == str(mail["Subject"]) and no in (sent["body"] or "")
    assert sent["last_error"] is None and sent["lease_until"] is None


async def test_refusals_retries_and_the_client_told(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    partner_key, no, row = await approved(http, db, clock, make_client, make_partner)
    booking_id = int(row["id"])
    await plan_all(db, clock)
    await only_these(db, booking_id)
    async with worker(service, clock, port) as svc:
        # a 4xx: tried again on the schedule, then taken
        inbox.data_answer = "451 4.3.0 try again later"
        await send_traveller_messages(svc)
        waiting = of(await rows(db, booking_id), "confirmed")
        assert waiting["status"] == "scheduled" and waiting["attempts"] == 1 and "451" in waiting["last_error"]
        assert waiting["scheduled_for"] > clock.now() and waiting["lease_until"] is None
        inbox.data_answer = "250 OK"
        await send_traveller_messages(svc)
        assert of(await rows(db, booking_id), "confirmed")["status"] == "scheduled"  # not due yet
        move_clock_to(clock, waiting["scheduled_for"] + timedelta(seconds=1))
        await send_traveller_messages(svc)
        taken = of(await rows(db, booking_id), "confirmed")
        assert (taken["status"], taken["attempts"]) == ("sent", 2)
        assert len([m for m in inbox.messages if no in str(m[1]["Subject"])]) == 1

        # the partner cancels; the server refuses with a 5xx: failed at once, the client told
        cancelled = await http.put(
            REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
        )
        assert cancelled.status_code == 200, cancelled.text
        await plan_all(db, clock)
        inbox.data_answer = "554 5.7.1 refused"
        await send_traveller_messages(svc)
        failed = of(await rows(db, booking_id), "cancelled")
        assert (failed["status"], failed["reason"], failed["attempts"]) == ("failed", "refused", 1)
        (event,) = await failed_events(db, booking_id)
        message = event["data"]["message"]
        assert message["id"] == failed["id"] and message["template"] == "cancelled" and message["status"] == "failed"
        assert message["to"] != failed["to_address"] and "***" in message["to"]  # masked
        inbox.data_answer = "250 OK"
        move_clock_to(clock, clock.now() + timedelta(hours=1))
        await send_traveller_messages(svc)
        assert of(await rows(db, booking_id), "cancelled")["status"] == "failed"  # never tried again


async def test_a_hang_is_bounded_and_not_resent(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    inbox.hang = True
    async with worker(service, clock, port) as svc:
        await send_traveller_messages(svc)
        inbox.release()
        inbox.hang = False
        move_clock_to(clock, clock.now() + timedelta(hours=2))
        await send_traveller_messages(svc)
    ended = of(await rows(db, int(row["id"])), "confirmed")
    assert (ended["status"], ended["reason"], ended["attempts"]) == ("failed", "ambiguous", 1)
    assert inbox.data_seen == 1  # never handed over twice
    assert await failed_events(db, int(row["id"])) == []  # ``confirmed`` is not one the client is told of


async def test_a_worker_killed_mid_send_never_sends_twice(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, _, first = await approved(http, db, clock, make_client, make_partner)
    _, _, second = await approved(http, db, clock, make_client, make_partner)
    await plan_all(db, clock)
    await only_these(db, int(first["id"]), int(second["id"]))
    ids = {int(first["id"]): None, int(second["id"]): None}
    # a worker claims both, records the first's attempt (its send began) and dies
    now = clock.now()
    async with db.write() as conn:
        claimed = [
            r
            for r in await queue_repo.claim_due(conn, now=now, lease_until=now + delivery.LEASE, limit=500)
            if r.booking_id in ids
        ]
    assert {r.booking_id for r in claimed} == set(ids)
    began = next(r for r in claimed if r.booking_id == int(first["id"]))
    async with db.write() as conn:
        assert await queue_repo.start_attempt(conn, began.id, began.lease_until, subject="s", body="b")
    async with worker(service, clock, port) as svc:
        await send_traveller_messages(svc)  # both still leased: nothing of theirs goes
        assert of(await rows(db, int(first["id"])), "confirmed")["status"] == "scheduled"
        move_clock_to(clock, now + delivery.LEASE + timedelta(seconds=1))
        await send_traveller_messages(svc)
    died = of(await rows(db, int(first["id"])), "confirmed")
    assert (died["status"], died["reason"]) == ("failed", "ambiguous")
    unstarted = of(await rows(db, int(second["id"])), "confirmed")
    assert (unstarted["status"], unstarted["attempts"]) == ("sent", 1)
    subjects = [str(m[1]["Subject"]) for m in inbox.messages]
    assert not any(first["reservation_no"] in s for s in subjects)
    assert len([s for s in subjects if second["reservation_no"] in s]) == 1


async def test_expired_and_suppressed_never_reach_the_server(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, _, late = await approved(http, db, clock, make_client, make_partner)
    _, _, stopped = await approved(http, db, clock, make_client, make_partner)
    await plan_all(db, clock)
    await only_these(db, int(late["id"]), int(stopped["id"]))
    async with db.write() as conn:
        await repo.add_optout(
            conn,
            Channel.EMAIL,
            stopped["passenger_email"],
            booking_id=int(stopped["id"]),
            source=OptOutSource.PAGE,
            now=clock.now(),
        )
    inbox.data_answer = "451 4.3.0 busy"
    async with worker(service, clock, port) as svc:
        await send_traveller_messages(svc)
        assert of(await rows(db, int(stopped["id"])), "confirmed")["status"] == "suppressed"
        move_clock_to(clock, late["pickup_at"] + timedelta(minutes=1))
        inbox.data_answer = "250 OK"
        await send_traveller_messages(svc)
    assert of(await rows(db, int(late["id"])), "confirmed")["status"] == "expired"
    assert not any(late["reservation_no"] in str(m[1]["Subject"]) for m in inbox.messages)
    assert not any(stopped["reservation_no"] in str(m[1]["Subject"]) for m in inbox.messages)


async def test_without_an_smtp_server_nothing_is_sent(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    async with worker(service, clock, free_port(), smtp_url="") as svc:
        await send_traveller_messages(svc)
    skipped = of(await rows(db, int(row["id"])), "confirmed")
    assert (skipped["status"], skipped["reason"], skipped["attempts"]) == ("skipped", "not_configured", 0)
    # the text that would have gone is kept, for `transfers messages show` (the sandbox's default has no SMTP)
    assert skipped["subject"] and skipped["body"] and str(row["reservation_no"]) in skipped["body"]


async def test_feedback_an_hour_after_the_drop_off_with_the_rating_link(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    _, no, row, dropped, _ = await dropped_off_ride(http, db, clock, make_client, make_partner)
    async with db.write() as conn:  # the rating e-mail alone: no channel on, feedback on
        await repo.save_settings(
            conn, MessageSettings(client_id=int(row["client_id"]), brand_name="Sunny Trips", feedback=True), clock.now()
        )
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    (planned,) = await rows(db, int(row["id"]))
    assert (planned["template"], planned["channel"], planned["status"]) == ("feedback", "email", "scheduled")
    assert planned["scheduled_for"] == dropped + timedelta(hours=1)
    assert planned["expires_at"] == dropped + timedelta(days=7)
    async with worker(service, clock, port) as svc:
        await send_traveller_messages(svc)
        assert inbox.messages == []  # not before the hour
        move_clock_to(clock, dropped + timedelta(hours=1, seconds=1))
        await send_traveller_messages(svc)
    ((to, mail),) = inbox.messages
    assert to == [row["passenger_email"]]
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes) and f"/r/{rating_token(no)}" in payload.decode()
    assert of(await rows(db, int(row["id"])), "feedback")["status"] == "sent"
