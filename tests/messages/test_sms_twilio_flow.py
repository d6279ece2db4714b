"""Texts to travellers end to end through Twilio's callbacks (docs/rules/messages.md#sms), on both databases
(beside tests/messages/test_sms_delivery.py, the sending side): a booking cancelled by
its partner through the reverse API, the planner's pass, the worker's ``traveller_messages`` job sending
through ``TRANSFERS_SMS_PROVIDER=twilio`` to a local server answering like Twilio (tests/fake_twilio.py),
and Twilio's signed status callbacks back to the service. What Twilio was sent (From, Body, the STOP line,
the status callback), the receipts, a stopped number, a fixed line, a 503 retried, a refused number and
an undelivered text reported to the client, a Twilio that hangs never sent to twice."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.api.test_cancellation_policies import BOOKING, move_clock_to, pickup_in, search
from tests.conftest import ClientFactory, PartnerFactory, bearer, make_settings
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio, TwilioRequest
from tests.helpers import booking_body, row_of
from tests.messages.test_planner import REVERSE_UPDATE, SAM, messages_on, only_these, plan_all, rows
from tests.servers import LiveServer, free_port, kept_public_url
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import client_events
from transfers.deliveries import send_traveller_messages
from transfers.messages.sms.senders import e164
from transfers.services import Services

LONG_CODE = "+15017122661"
STATUS = "/hooks/sms/twilio/status"


@dataclass
class World:
    url: str  # the service's public base URL, where Twilio's callbacks arrive
    twilio: FakeTwilio
    svc: Services  # the worker's view: twilio as the provider


@pytest.fixture(scope="module")
async def world(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[World]:
    from transfers.app import create_app

    with kept_public_url():  # this module's app sets the process's public URL: as it was after it
        twilio = await FakeTwilio().start()
        port = free_port()
        settings = make_settings(
            database_url,
            workdir,
            public_base_url=f"http://127.0.0.1:{port}",
            sms_provider="twilio",
            sms_provider_url=twilio.url,
            twilio_account_sid=ACCOUNT_SID,
            twilio_auth_token=AUTH_TOKEN,
            sms_long_code=LONG_CODE,
            sms_timeout_seconds=0.5,
        )
        app = create_app(settings, clock=clock, configure_logs=False)
        server = await LiveServer(app, port=port).start()
        yield World(server.url, twilio, app.state.services)
        await server.stop()
        await twilio.stop()


def a_number(prefix: str, digits: int) -> str:
    """A valid number no other test uses (the session's database is shared)."""
    while True:
        number = prefix + "".join(random.choice("0123456789") for _ in range(digits))
        if e164(number) == number:
            return number


async def cancelled_booking(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    phone: str,
    partner_key: str | None = None,
) -> dict[str, Any]:
    """An APPROVED booking for a traveller at ``phone`` (the client texting as SunnyTrips), then cancelled by
    its partner (a new one unless given: the test's partners all answer its searches): the ``cancelled``
    text is planned, due at once. Its row."""
    if partner_key is None:
        _, _, partner_key = await make_partner(create_status="APPROVED", driver=SAM)
    client_id, key = await make_client()
    await messages_on(db, clock, client_id)
    found = await search(http, key, pickup_in(5))
    passenger = {"name": "Ada", "surname": "Lovelace", "phone": phone, "email": "ada@example.com"}
    created = await http.post(
        BOOKING, json=booking_body(found["search_id"], "1", passenger=passenger), headers=bearer(key)
    )
    assert created.status_code == 200, created.text
    no = created.json()["booking"]["reservation_no"]
    cancelled = await http.put(
        REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    return await row_of(db, no)


async def send(world: World, db: Database, *bookings: dict[str, Any]) -> None:
    """The worker's job, for these bookings' messages only (other tests' waiting ones expired first)."""
    await only_these(db, *(int(b["id"]) for b in bookings))
    await send_traveller_messages(world.svc)


def texts_to(twilio: FakeTwilio, number: str) -> list[TwilioRequest]:
    return [r for r in twilio.requests if r.form.get("To") == number]


async def text_of(db: Database, booking: dict[str, Any]) -> dict[str, Any]:
    (row,) = [r for r in await rows(db, int(booking["id"])) if r["channel"] == "sms"]
    assert row["template"] == "cancelled"
    return row


async def failures_told(db: Database, booking: dict[str, Any]) -> list[dict[str, Any]]:
    async with db.read() as conn:
        found = await conn.execute(
            select(client_events.c.data).where(
                client_events.c.booking_id == int(booking["id"]), client_events.c.type == "booking.message_failed"
            )
        )
        return [dict(r._mapping)["data"] for r in found]


async def test_a_text_goes_to_twilio_and_its_receipt_makes_it_delivered(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+447911", 6)
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    await send(world, db, booking)
    (sent,) = texts_to(world.twilio, number)
    assert (sent.user, sent.password) == (ACCOUNT_SID, AUTH_TOKEN)
    assert sent.form["From"] == "SunnyTrips"  # the client's sender outside the US and Canada
    assert sent.form["StatusCallback"] == world.url + STATUS
    assert booking["reservation_no"] in sent.form["Body"] and "Reply STOP" not in sent.form["Body"]
    row = await text_of(db, booking)
    sid = row["provider_id"]
    assert (row["status"], row["attempts"], row["body"]) == ("sent", 1, sent.form["Body"])
    assert sid in world.twilio.messages and row["sent_at"] is not None

    assert (await world.twilio.callback(sid, "sent")).status_code == 200
    assert (await text_of(db, booking))["status"] == "sent"
    assert (await world.twilio.callback(sid, "delivered")).status_code == 200
    row = await text_of(db, booking)
    assert row["status"] == "delivered" and row["delivered_at"] is not None
    await send(world, db, booking)
    assert len(texts_to(world.twilio, number)) == 1  # taken once


async def test_the_us_and_canada_get_the_long_code_and_the_stop_line(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+1415555", 4)
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    await send(world, db, booking)
    (sent,) = texts_to(world.twilio, number)
    assert sent.form["From"] == LONG_CODE
    assert sent.form["Body"].endswith("\nReply STOP to opt out.")
    assert (await text_of(db, booking))["body"] == sent.form["Body"]


async def test_a_fixed_line_and_a_stopped_number_never_reach_twilio(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    _, _, partner_key = await make_partner(create_status="APPROVED", driver=SAM)
    fixed = a_number("+442071", 6)
    landline = await cancelled_booking(http, db, clock, make_client, make_partner, fixed, partner_key)
    stopped = a_number("+447911", 6)
    # the traveller replied STOP to an earlier text (any client's): signed, through the hook
    replied = await world.twilio.inbound(world.url + "/hooks/sms/twilio", from_=stopped, body=" stop ")
    assert replied.status_code == 200
    opted_out = await cancelled_booking(http, db, clock, make_client, make_partner, stopped, partner_key)
    await send(world, db, landline, opted_out)
    assert texts_to(world.twilio, fixed) == [] and texts_to(world.twilio, stopped) == []
    row = await text_of(db, landline)
    assert (row["status"], row["reason"]) == ("skipped", "not_mobile")
    assert (await text_of(db, opted_out))["status"] == "suppressed"


async def test_a_busy_twilio_is_tried_again_and_the_text_taken_once(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+447911", 6)
    world.twilio.by_number[number] = ["503", "429"]
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    for attempt, code in ((1, "503"), (2, "429")):
        await send(world, db, booking)
        row = await text_of(db, booking)
        assert (row["status"], row["attempts"]) == ("scheduled", attempt) and code in row["last_error"]
        move_clock_to(clock, row["scheduled_for"] + timedelta(seconds=1))
    await send(world, db, booking)
    row = await text_of(db, booking)
    assert (row["status"], row["attempts"]) == ("sent", 3)
    assert [r.answered for r in texts_to(world.twilio, number)] == [503, 429, 201]


async def test_a_refused_number_fails_at_once_and_the_client_is_told(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+447911", 6)
    world.twilio.invalid.add(number)
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    await send(world, db, booking)
    row = await text_of(db, booking)
    assert (row["status"], row["reason"], row["attempts"]) == ("failed", "invalid_number", 1)
    assert "21211" in row["last_error"]
    (told,) = await failures_told(db, booking)
    assert told["message"]["id"] == row["id"] and told["message"]["template"] == "cancelled"
    await send(world, db, booking)
    assert len(texts_to(world.twilio, number)) == 1


async def test_an_undelivered_receipt_fails_the_text_and_the_client_is_told(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+447911", 6)
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    await send(world, db, booking)
    sid = (await text_of(db, booking))["provider_id"]
    assert await failures_told(db, booking) == []
    assert (await world.twilio.callback(sid, "undelivered", error_code="30005")).status_code == 200
    row = await text_of(db, booking)
    assert (row["status"], row["reason"]) == ("failed", "undelivered") and "30005" in row["last_error"]
    (told,) = await failures_told(db, booking)
    assert told["message"]["id"] == row["id"]
    # Twilio says it again: nothing more
    assert (await world.twilio.callback(sid, "failed", error_code="30005")).status_code == 200
    assert len(await failures_told(db, booking)) == 1


async def test_a_twilio_that_takes_the_text_and_hangs_is_never_sent_to_twice(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    world: World,
) -> None:
    number = a_number("+447911", 6)
    world.twilio.by_number[number] = ["hang"]
    booking = await cancelled_booking(http, db, clock, make_client, make_partner, number)
    await send(world, db, booking)
    row = await text_of(db, booking)
    assert (row["status"], row["reason"], row["attempts"]) == ("failed", "ambiguous", 1)
    move_clock_to(clock, clock.now() + timedelta(hours=2))
    await send(world, db, booking)
    assert len(texts_to(world.twilio, number)) == 1
