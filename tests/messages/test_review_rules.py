"""Rules of docs/rules/messages.md the other message tests left unproven end to end, on both databases
(TRANSFERS_TEST_DATABASE_URL), the clock moved, never slept:

* a pickup moved by the flight (the sandbox provider's ``ZZ1045``, 45 min late) is told once on each
  channel, revision the new pickup, expiring at it; the same move reported again tells nothing more;
* a reminder written before the move and sent after it carries the current pickup (its text is rendered
  at the send), to a real SMTP server (aiosmtpd);
* Twilio's 21610 (the number replied STOP to Twilio) fails the text at once and is kept as that STOP: the
  number's next text is ``suppressed`` and never reaches Twilio;
* the rendered subject and body are kept 30 days after the message ended, then emptied.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancellation_policies import move_clock_to
from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import row_of
from tests.hosted.conftest import HostedFactory
from tests.messages.test_delivery import smtp, worker  # noqa: F401  (the fixture)
from tests.messages.test_planner import SAM, messages_on, only_these, plan_all, rows
from tests.messages.test_sms_twilio_flow import (  # noqa: F401  (the fixture)
    World,
    a_number,
    cancelled_booking,
    failures_told,
    send,
    text_of,
    texts_to,
    world,
)
from tests.ride_pages.flights import book_flight
from tests.ride_pages.helpers import accept
from tests.servers import LiveServer
from tests.smtp_server import Inbox
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import message_optouts, traveller_messages
from transfers.deliveries import send_traveller_messages
from transfers.flights import watch as flight_watch
from transfers.flights.sandbox import SandboxProvider
from transfers.messages import delivery, reminders, timing


def brief(found: list[dict[str, Any]], template: str) -> list[tuple[str, str]]:
    return [(r["channel"], r["status"]) for r in found if r["template"] == template]


async def test_a_moved_pickup_is_told_once_and_the_reminder_carries_it(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    inbox, port = smtp
    client_id, key = await make_client()
    await messages_on(db, clock, client_id)
    partner_id = await make_hosted(airports=("GLA",), name="Review Moved Cars")
    svc = svc_of(service)
    ride = await book_flight(http, key, "Review Moved Cars", db, partner_id, "ZZ1045")
    await accept(svc, ride)
    booking_id = int((await row_of(db, ride.reservation_no))["id"])
    await plan_all(db, clock)

    # 23 h before the pickup (14:30 at Glasgow): the reminder is written, not yet sent
    move_clock_to(clock, ride.pickup_at - timedelta(hours=23))
    await reminders.reminders_pass(db, clock.now())
    assert brief(await rows(db, booking_id), "reminder") == [("email", "scheduled"), ("sms", "scheduled")]

    # 3 h before, the flight is 45 min late: the pickup follows it, told on both channels
    move_clock_to(clock, ride.pickup_at - timedelta(hours=3))
    await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, ride.reservation_no)
    moved_to = (await row_of(db, ride.reservation_no))["pickup_at"]
    assert moved_to == ride.pickup_at + timedelta(minutes=45)
    await plan_all(db, clock)
    moved = [r for r in await rows(db, booking_id) if r["template"] == "pickup_moved"]
    assert [(r["channel"], r["status"]) for r in moved] == [("email", "scheduled"), ("sms", "scheduled")]
    assert {r["revision"] for r in moved} == {timing.pickup_revision(moved_to)}
    assert {r["expires_at"] for r in moved} == {moved_to}

    # the same move reported again: nothing more
    clock.advance(timedelta(minutes=10))
    await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, ride.reservation_no)
    await plan_all(db, clock)
    assert len([r for r in await rows(db, booking_id) if r["template"] == "pickup_moved"]) == 2

    await only_these(db, booking_id)
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
    found = await rows(db, booking_id)
    (reminder,) = [r for r in found if r["template"] == "reminder" and r["channel"] == "email"]
    assert reminder["status"] == "sent"
    # the reminder names the pickup as it is now (15:15), never the one it was written under (14:30)
    assert "15:15" in (reminder["body"] or "") and "14:30" not in (reminder["body"] or "")
    (mail,) = [m for m in inbox.messages if m[1]["Subject"] == reminder["subject"]]
    payload = mail[1].get_payload(decode=True)
    assert isinstance(payload, bytes) and "15:15" in payload.decode()
    (moved_mail,) = [r for r in found if r["template"] == "pickup_moved" and r["channel"] == "email"]
    assert moved_mail["status"] == "sent" and "15:15" in (moved_mail["body"] or "")


async def test_a_number_twilio_lists_as_unsubscribed_is_stopped_here_too(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,  # noqa: F811
) -> None:
    number = a_number("+447911", 6)
    world.twilio.unsubscribed.add(number)
    _, _, partner_key = await make_partner(create_status="APPROVED", driver=SAM)
    first = await cancelled_booking(http, db, clock, make_client, make_partner, number, partner_key)
    await send(world, db, first)
    refused = await text_of(db, first)
    assert (refused["status"], refused["reason"], refused["attempts"]) == ("failed", "unsubscribed", 1)
    assert "21610" in refused["last_error"]
    (told,) = await failures_told(db, first)
    assert told["message"]["id"] == refused["id"]
    async with db.read() as conn:
        kept = (
            await conn.execute(
                select(message_optouts).where(message_optouts.c.channel == "sms", message_optouts.c.address == number)
            )
        ).all()
    assert [(r.booking_id, r.source, r.lifted_at) for r in kept] == [(None, "sms_reply", None)]

    # the number's next text, from another client: suppressed, never handed to Twilio, the client not told
    second = await cancelled_booking(http, db, clock, make_client, make_partner, number, partner_key)
    await send(world, db, second)
    stopped = await text_of(db, second)
    assert (stopped["status"], stopped["reason"], stopped["attempts"]) == ("suppressed", "opted_out", 0)
    assert await failures_told(db, second) == []
    assert len(texts_to(world.twilio, number)) == 1


async def test_the_rendered_text_is_kept_30_days_then_emptied(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    from tests.messages.test_planner import approved

    _, port = smtp
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    booking_id = int(row["id"])
    await plan_all(db, clock)
    await only_these(db, booking_id)
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
    (sent,) = await rows(db, booking_id)
    assert sent["status"] == "sent" and sent["subject"] and row["reservation_no"] in (sent["body"] or "")

    async def purge() -> None:
        async with db.write() as conn:
            await delivery.purge_bodies(conn, clock.now(), limit=1000)

    move_clock_to(clock, sent["sent_at"] + timedelta(days=29, hours=23))
    await purge()
    (kept,) = await rows(db, booking_id)
    assert kept["body"] == sent["body"] and kept["subject"] == sent["subject"]
    move_clock_to(clock, sent["sent_at"] + timedelta(days=30, minutes=1))
    await purge()
    async with db.read() as conn:
        emptied = (await conn.execute(select(traveller_messages).where(traveller_messages.c.id == sent["id"]))).one()
    assert (emptied.subject, emptied.body, emptied.status) == (None, None, "sent")
