"""Rules of docs/rules/messages.md the other message tests left unproven end to end, on both databases
(TRANSFERS_TEST_DATABASE_URL), the clock moved, never slept:

* a pickup moved by the flight (the sandbox provider's ``ZZ1045``, 45 min late) is told once on each
  channel, revision the new pickup, expiring at it; the same move reported again tells nothing more;
* a reminder written before the move and sent after it carries the current pickup (its text is rendered
  at the send), to a real SMTP server (aiosmtpd);
* Twilio's 21610 (the number replied STOP to Twilio) fails the text at once and is kept as that STOP: the
  number's next text is ``suppressed`` and never reaches Twilio;
* the rendered subject and body are kept 30 days after the message ended, then emptied;
* a failed ``cancelled`` reaches the client's webhook endpoint as ``booking.message_failed`` with
  ``data`` = ``booking``, ``message`` (masked), ``sequence``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancellation_policies import BOOKING, book, move_clock_to, pickup_in
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body, row_of
from tests.hosted.conftest import HostedFactory
from tests.incidents.test_incident_events import ENDPOINTS, delivered, dispatcher, receiver  # noqa: F401
from tests.messages.test_delivery import smtp, worker  # noqa: F401  (the fixture)
from tests.messages.test_planner import REVERSE_UPDATE, SAM, messages_on, only_these, plan_all, rows
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
from tests.webhook_receiver import Receiver
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import message_optouts, traveller_messages
from transfers.deliveries import send_traveller_messages
from transfers.flights import watch as flight_watch
from transfers.flights.sandbox import SandboxProvider
from transfers.messages import delivery, reminders, timing
from transfers.webhooks.delivery import WebhookDispatcher


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


async def test_the_client_is_sent_message_failed_with_the_booking_the_message_and_the_sequence(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],  # noqa: F811
    receiver: Receiver,  # noqa: F811
    dispatcher: WebhookDispatcher,  # noqa: F811
) -> None:
    inbox, port = smtp
    _, _, partner_key = await make_partner(vehicles=default_vehicles("56.05"), create_status="APPROVED", driver=SAM)
    client_id, key = await make_client()
    await messages_on(db, clock, client_id)
    created = await http.post(
        ENDPOINTS, json={"url": receiver.hook_url, "events": ["booking.message_failed"]}, headers=bearer(key)
    )
    assert created.status_code == 201, created.text
    receiver.secrets.append(created.json()["secret"])
    no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, no)
    cancelled = await http.put(
        REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    inbox.data_answer = "554 5.7.1 refused"
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
    failed = [r for r in await rows(db, int(row["id"])) if r["status"] == "failed"]
    assert [(r["template"], r["channel"], r["reason"]) for r in failed] == [("cancelled", "email", "refused")]
    await delivered(dispatcher, receiver, 1)
    (got,) = receiver.received
    assert got.body["type"] == "booking.message_failed"
    data = got.body["data"]
    assert set(data) == {"booking", "message", "sequence"}
    assert data["booking"]["reservation_no"] == no and data["booking"]["status"] == "CANCELLED"
    assert data["message"]["id"] == failed[0]["id"] and data["message"]["status"] == "failed"
    assert data["message"]["to"] != row["passenger_email"] and "***" in data["message"]["to"]
    assert isinstance(data["sequence"], int) and data["sequence"] > 1
    assert "price" not in str(data["message"])


async def test_driver_changes_are_coalesced_into_one_message_2_min_after_the_last(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    from tests.messages.test_planner import approved

    inbox, port = smtp
    partner_key, no, row = await approved(http, db, clock, make_client, make_partner)
    booking_id = int(row["id"])
    await plan_all(db, clock)
    await only_these(db, booking_id)
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)  # the confirmed e-mail
        for name, plate in (("Bob Other", "XY34 ZZZ"), ("Ann Third", "CD56 EEE")):
            changed = await http.put(
                REVERSE_UPDATE,
                json={
                    "reservation_no": no,
                    "status": "APPROVED",
                    "driver_info": {"name": name, "phone": "+447400123459", "plate": plate},
                },
                headers=bearer(partner_key),
            )
            assert changed.status_code == 200, changed.text
            await plan_all(db, clock)
            last_change = clock.now()
            clock.advance(timedelta(seconds=90))
            await send_traveller_messages(w)  # within the 2 min: nothing goes
        waiting = [r for r in await rows(db, booking_id) if r["template"] == "driver_changed"]
        assert [(r["channel"], r["status"], r["reason"]) for r in waiting] == [
            ("email", "skipped", "superseded"),
            ("sms", "skipped", "superseded"),
            ("email", "scheduled", None),
            ("sms", "scheduled", None),
        ]
        assert abs(waiting[2]["scheduled_for"] - (last_change + timedelta(minutes=2))) < timedelta(seconds=5)
        clock.advance(timedelta(seconds=31))
        await send_traveller_messages(w)
        # the same driver reported again: no new message
        again = await http.put(
            REVERSE_UPDATE,
            json={
                "reservation_no": no,
                "status": "APPROVED",
                "driver_info": {"name": "Ann Third", "phone": "+447400123459", "plate": "CD56 EEE"},
            },
            headers=bearer(partner_key),
        )
        assert again.status_code == 200, again.text
        await plan_all(db, clock)
    changed_rows = [r for r in await rows(db, booking_id) if r["template"] == "driver_changed"]
    assert [(r["channel"], r["status"]) for r in changed_rows][2:] == [("email", "sent"), ("sms", "sent")]
    assert len(changed_rows) == 4
    mails = [m for m in inbox.messages if m[1]["Subject"] == changed_rows[2]["subject"]]
    assert len(mails) == 1
    body = changed_rows[2]["body"] or ""
    assert "Ann" in body and "CD56 EEE" in body and "Bob" not in body


async def test_a_waiting_message_expires_at_a_pickup_moved_earlier(
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
    partner_id = await make_hosted(airports=("GLA",), name="Review Early Cars")
    svc = svc_of(service)
    ride = await book_flight(http, key, "Review Early Cars", db, partner_id, "ZZ2090")  # 90 min early
    await accept(svc, ride)
    booking_id = int((await row_of(db, ride.reservation_no))["id"])
    await plan_all(db, clock)
    move_clock_to(clock, ride.pickup_at - timedelta(hours=23))
    await reminders.reminders_pass(db, clock.now())
    await only_these(db, booking_id)
    inbox.data_answer = "451 4.3.0 try again later"
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
        (waiting,) = [r for r in await rows(db, booking_id) if r["template"] == "reminder" and r["channel"] == "email"]
        assert (waiting["status"], waiting["attempts"]) == ("scheduled", 1)
        # the flight lands 90 min early: the pickup follows it; the reminder is still being retried
        move_clock_to(clock, ride.pickup_at - timedelta(hours=3))
        await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, ride.reservation_no)
        moved_to = (await row_of(db, ride.reservation_no))["pickup_at"]
        assert moved_to == ride.pickup_at - timedelta(minutes=90)
        await plan_all(db, clock)
        # past the new pickup, before the one the reminder was written under: never sent
        move_clock_to(clock, moved_to + timedelta(minutes=1))
        await only_these(db, booking_id)
        inbox.data_answer = "250 OK"
        await send_traveller_messages(w)
    found = await rows(db, booking_id)
    emails = [r for r in found if r["channel"] == "email" and r["template"] in ("reminder", "pickup_moved")]
    assert {(r["template"], r["status"]) for r in emails} == {("reminder", "expired"), ("pickup_moved", "expired")}
    assert not any(ride.reservation_no in str(m[1]["Subject"]) for m in inbox.messages)


async def test_a_waiting_message_is_still_sent_after_the_old_pickup_when_the_pickup_moved_later(
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
    partner_id = await make_hosted(airports=("GLA",), name="Review Late Cars")
    svc = svc_of(service)
    ride = await book_flight(http, key, "Review Late Cars", db, partner_id, "ZZ1045")  # 45 min late
    await accept(svc, ride)
    booking_id = int((await row_of(db, ride.reservation_no))["id"])
    await plan_all(db, clock)
    move_clock_to(clock, ride.pickup_at - timedelta(hours=23))
    await reminders.reminders_pass(db, clock.now())
    await only_these(db, booking_id)
    inbox.data_answer = "451 4.3.0 try again later"
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
        (waiting,) = [r for r in await rows(db, booking_id) if r["template"] == "reminder" and r["channel"] == "email"]
        assert (waiting["status"], waiting["attempts"], waiting["expires_at"]) == ("scheduled", 1, ride.pickup_at)
        # the flight is 45 min late: the pickup follows it; the reminder is still being retried
        move_clock_to(clock, ride.pickup_at - timedelta(hours=3))
        await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, ride.reservation_no)
        moved_to = (await row_of(db, ride.reservation_no))["pickup_at"]
        assert moved_to == ride.pickup_at + timedelta(minutes=45)
        await plan_all(db, clock)
        (waiting,) = [r for r in await rows(db, booking_id) if r["template"] == "reminder" and r["channel"] == "email"]
        assert waiting["expires_at"] == moved_to  # the expiry followed the pickup
        # past the old pickup, before the new one: the sweep leaves it, the retry sends it
        move_clock_to(clock, ride.pickup_at + timedelta(minutes=1))
        await only_these(db, booking_id)
        inbox.data_answer = "250 OK"
        await send_traveller_messages(w)
    found = await rows(db, booking_id)
    (reminder,) = [r for r in found if r["template"] == "reminder" and r["channel"] == "email"]
    assert (reminder["status"], reminder["attempts"]) == ("sent", 2)
    assert "15:15" in (reminder["body"] or "")
    assert any(m[1]["Subject"] == reminder["subject"] for m in inbox.messages)


async def test_the_message_speaks_the_passengers_language_else_the_clients_else_english_and_a_switch_holds(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    import dataclasses

    from tests.api.test_cancellation_policies import search
    from transfers.messages import repository as repo

    inbox, port = smtp
    await make_partner(vehicles=default_vehicles("56.05"), create_status="APPROVED", driver=SAM)
    made: dict[str, dict[str, Any]] = {}
    for default in ("de", None):
        client_id, key = await make_client()
        await messages_on(db, clock, client_id)
        async with db.write() as conn:
            settings = await repo.settings_of(conn, client_id)
            assert settings is not None
            await repo.save_settings(conn, dataclasses.replace(settings, default_language=default), clock.now())
        found = await search(http, key, pickup_in(5))
        cases: list[tuple[str, dict[str, Any]]] = [
            (f"pt-BR/{default}", {"language": "pt-BR"}),
            (f"ja/{default}", {"language": "ja"}),
            (f"bad/{default}", {"language": "not a tag!"}),
        ]
        if default == "de":
            cases.append(("email-off", {"language": "fr"}))
        for name, extra in cases:
            passenger = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}
            body = booking_body(found["search_id"], "1", passenger={**passenger, **extra})
            if name == "email-off":
                body["messages"] = {"email": False}
            created = await http.post(BOOKING, json=body, headers=bearer(key))
            assert created.status_code == 200, created.text
            made[name] = await row_of(db, created.json()["booking"]["reservation_no"])
    await plan_all(db, clock)
    await only_these(db, *(int(r["id"]) for r in made.values()))
    async with worker(service, clock, port) as w:
        await send_traveller_messages(w)
    expected = {"pt-BR/de": "pt", "ja/de": "de", "bad/de": "de", "pt-BR/None": "pt", "ja/None": "en", "bad/None": "en"}
    subjects: dict[str, str] = {}
    for name, language in expected.items():
        (confirmed,) = await rows(db, int(made[name]["id"]))
        assert (confirmed["template"], confirmed["language"], confirmed["status"]) == ("confirmed", language, "sent")
        subjects[language] = confirmed["subject"]
    # each language writes its own words (the subject differs from the English one)
    assert len({subjects["pt"], subjects["de"], subjects["en"]}) == 3
    (off,) = await rows(db, int(made["email-off"]["id"]))
    assert (off["status"], off["reason"], off["language"]) == ("skipped", "channel_off", "fr")
    assert not any(made["email-off"]["reservation_no"] in str(m[1]["Subject"]) for m in inbox.messages)


async def test_the_ninth_sms_of_a_booking_is_skipped_and_its_email_still_goes(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    from tests.messages.test_planner import approved
    from transfers.messages import repository as repo
    from transfers.messages.models import Channel, NewMessage, Status, Template

    partner_key, no, row = await approved(http, db, clock, make_client, make_partner)
    booking_id, now = int(row["id"]), clock.now()
    # eight texts of earlier moves: sent, delivered, failed or waiting all count; skipped/suppressed/expired not
    statuses = [Status.SENT] * 5 + [Status.DELIVERED, Status.FAILED, Status.SCHEDULED]
    statuses += [Status.SKIPPED, Status.SUPPRESSED, Status.EXPIRED]
    earlier = [
        NewMessage(
            booking_id=booking_id,
            client_id=int(row["client_id"]),
            template=Template.PICKUP_MOVED,
            channel=Channel.SMS,
            to_address=row["passenger_phone"],
            language="en",
            status=status,
            revision=f"2000010100{i:02d}",
            scheduled_for=now,
            expires_at=row["pickup_at"],
            finished_at=None if status == Status.SCHEDULED else now,
        )
        for i, status in enumerate(statuses)
    ]
    async with db.write() as conn:
        await repo.insert_messages(conn, earlier, now)
    cancelled = await http.put(
        REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    told = [
        (r["channel"], r["status"], r["reason"]) for r in await rows(db, booking_id) if r["template"] == "cancelled"
    ]
    assert told == [("email", "scheduled", None), ("sms", "skipped", "sms_limit")]


@pytest.mark.parametrize(
    ("actor", "told"),
    [("client", False), ("partner", True), ("operator", True)],
)
async def test_cancelled_is_told_when_the_partner_or_an_operator_cancels_never_the_client(
    actor: str,
    told: bool,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    from tests.api.test_cancel_actors import cancel_now, request_of
    from tests.messages.test_planner import approved
    from transfers.bookings.cancel import Actor

    _, no, row = await approved(http, db, clock, make_client, make_partner)
    await cancel_now(db, clock, no, request_of(Actor(actor)))
    assert (await row_of(db, no))["cancelled_by"] == actor
    await plan_all(db, clock)
    found = [(r["channel"], r["status"]) for r in await rows(db, int(row["id"])) if r["template"] == "cancelled"]
    assert found == ([("email", "scheduled"), ("sms", "scheduled")] if told else [])


async def test_a_booking_confirmed_in_the_airports_night_is_told_at_seven_there(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    from datetime import UTC, datetime, time
    from zoneinfo import ZoneInfo

    from tests.messages.test_planner import approved

    london = ZoneInfo("Europe/London")  # the test partner's bookings are picked up at Heathrow
    tonight = datetime.combine(clock.now().astimezone(london).date(), time(23, 30), tzinfo=london)
    move_clock_to(clock, tonight.astimezone(UTC))
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    await plan_all(db, clock)
    (confirmed,) = await rows(db, int(row["id"]))
    seven = datetime.combine(tonight.date() + timedelta(days=1), time(7, 0), tzinfo=london)
    assert (confirmed["template"], confirmed["status"]) == ("confirmed", "scheduled")
    assert confirmed["scheduled_for"] == seven.astimezone(UTC)
