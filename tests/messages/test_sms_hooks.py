"""The SMS provider's callbacks on a real database (both, by TRANSFERS_TEST_DATABASE_URL), posted by a
local server as Twilio posts them (tests/fake_twilio.py): signed replies (STOP and its synonyms, START,
ordinary replies), signed delivery receipts, and everything unsigned, wrongly signed or malformed
refused without a trace and never a 500 (docs/rules/messages.md#opt-out, #sms)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from tests.conftest import ClientFactory, PartnerFactory, make_settings
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio, twilio_signature
from tests.incidents.helpers import approved_booking
from tests.servers import LiveServer, free_port, kept_public_url
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import message_optouts, traveller_messages
from transfers.messages import repository
from transfers.messages.models import Channel, NewMessage, Status, Template
from transfers.messages.sms.provider import status_callback_url
from transfers.messages.sms.senders import e164
from transfers.messages.sms.twilio import TwilioProvider

INBOUND = "/hooks/sms/twilio"
STATUS = "/hooks/sms/twilio/status"


@dataclass
class Hooks:
    url: str  # the app's public base URL (TRANSFERS_PUBLIC_BASE_URL), where it listens
    twilio: FakeTwilio


@pytest.fixture(scope="module")
async def hooks(database_url: str, workdir: Path, clock: ShiftedClock) -> AsyncIterator[Hooks]:
    """The service with twilio as its provider (the fake's URL), listening at its public base URL."""
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
            sms_long_code="+15017122661",
        )
        server = await LiveServer(create_app(settings, clock=clock, configure_logs=False), port=port).start()
        yield Hooks(server.url, twilio)
        await server.stop()
        await twilio.stop()


def a_mobile() -> str:
    """A UK mobile number no other test uses (the session's database is shared)."""
    while True:
        number = f"+447911{random.randrange(10**6):06d}"
        if e164(number) == number:
            return number


async def optouts(db: Database, number: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(message_optouts).where(message_optouts.c.address == number).order_by(message_optouts.c.id)
        )
        return [dict(r) for r in rows.mappings()]


async def stopped(db: Database, number: str) -> bool:
    async with db.read() as conn:
        return await repository.active_optout(conn, Channel.SMS, number, None) is not None


async def reply(hooks: Hooks, number: str, body: str) -> httpx.Response:
    answer = await hooks.twilio.inbound(hooks.url + INBOUND, from_=number, body=body)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/xml")
    assert answer.text == '<?xml version="1.0" encoding="UTF-8"?><Response/>'
    return answer


@pytest.mark.parametrize("word", ["STOP", "stop", " Stop \n", "STOPALL", "unsubscribe", "Cancel", "END", "quit"])
async def test_a_stop_word_stops_every_text_to_the_number(
    hooks: Hooks, db: Database, clock: ShiftedClock, word: str
) -> None:
    number = a_mobile()
    await reply(hooks, number, word)
    [row] = await optouts(db, number)
    assert (row["channel"], row["booking_id"], row["source"], row["lifted_at"]) == ("sms", None, "sms_reply", None)
    assert timedelta(0) <= clock.now() - row["created_at"] < timedelta(minutes=1)  # the service's clock
    assert await stopped(db, number)
    await reply(hooks, number, "STOP")  # a second STOP adds nothing
    assert len(await optouts(db, number)) == 1


@pytest.mark.parametrize("body", ["please stop texting", "STOP.", "stop it", "Don't stop", "", "S T O P", "STOPP"])
async def test_a_reply_that_merely_contains_stop_changes_nothing(hooks: Hooks, db: Database, body: str) -> None:
    number = a_mobile()
    await reply(hooks, number, body)
    assert await optouts(db, number) == []


@pytest.mark.parametrize("word", ["START", "unstop", " Start "])
async def test_start_lifts_the_stop(hooks: Hooks, db: Database, word: str) -> None:
    number = a_mobile()
    await reply(hooks, number, "STOP")
    assert await stopped(db, number)
    await reply(hooks, number, word)
    assert not await stopped(db, number)
    [row] = await optouts(db, number)
    assert row["lifted_at"] is not None
    await reply(hooks, number, "stop")  # and stopped again: a new opt-out
    assert await stopped(db, number) and len(await optouts(db, number)) == 2


async def test_a_badly_signed_reply_is_refused_and_records_nothing(hooks: Hooks, db: Database) -> None:
    number = a_mobile()
    wrong = await hooks.twilio.inbound(hooks.url + INBOUND, from_=number, body="STOP", token="another-token")
    assert wrong.status_code == 403
    fields = {"From": number, "Body": "STOP", "AccountSid": ACCOUNT_SID}
    async with httpx.AsyncClient(timeout=10) as client:
        unsigned = await client.post(hooks.url + INBOUND, data=fields)
        # signed for another address (a Host header the caller chose is never believed)
        elsewhere = twilio_signature(AUTH_TOKEN, "http://attacker.example" + INBOUND, sorted(fields.items()))
        moved = await client.post(hooks.url + INBOUND, data=fields, headers={"X-Twilio-Signature": elsewhere})
        # a signature over other fields than those posted
        other = twilio_signature(AUTH_TOKEN, hooks.url + INBOUND, sorted({**fields, "Body": "hello"}.items()))
        swapped = await client.post(hooks.url + INBOUND, data=fields, headers={"X-Twilio-Signature": other})
    assert [unsigned.status_code, moved.status_code, swapped.status_code] == [403, 403, 403]
    assert await optouts(db, number) == []


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"\xff\xfe\x00garbage=%%%&&&==", "application/x-www-form-urlencoded"),
        (b"&".join(b"f%d=1" % i for i in range(500)), "application/x-www-form-urlencoded"),
        (b'{"From": "+447911123456", "Body": "STOP"}', "application/json"),
        (b"", "application/x-www-form-urlencoded"),
        (b"From=%2B44%ZZ&Body=ST%0", "text/plain"),
    ],
)
async def test_a_malformed_form_is_refused_never_a_500(hooks: Hooks, content: bytes, content_type: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        for path in (INBOUND, STATUS):
            for signature in (None, "bm90IGEgc2lnbmF0dXJl", "%%%"):
                headers = {"content-type": content_type} | ({"X-Twilio-Signature": signature} if signature else {})
                answer = await client.post(hooks.url + path, content=content, headers=headers)
                assert answer.status_code == 403, (path, signature, answer.text)


async def test_a_signed_form_without_the_fields_records_nothing(hooks: Hooks, db: Database) -> None:
    answer = await hooks.twilio.post_signed(hooks.url + INBOUND, [("Body", "STOP")])
    assert answer.status_code == 200
    odd = await hooks.twilio.post_signed(hooks.url + INBOUND, [("From", "not a number"), ("Body", "STOP")])
    assert odd.status_code == 200
    receipt = await hooks.twilio.post_signed(hooks.url + STATUS, [("MessageStatus", "delivered")])
    assert receipt.status_code == 200
    async with db.read() as conn:
        assert (
            await conn.execute(select(message_optouts).where(message_optouts.c.address == "not a number"))
        ).first() is None


async def test_without_twilio_every_callback_is_refused(http: httpx.AsyncClient) -> None:
    """The session's service runs the sandbox provider: no auth token, nothing can be signed."""
    fields = [("From", a_mobile()), ("Body", "STOP")]
    signed = twilio_signature(AUTH_TOKEN, str(http.base_url).rstrip("/") + INBOUND, fields)
    for path in (INBOUND, STATUS):
        answer = await http.post(path, data=dict(fields), headers={"X-Twilio-Signature": signed})
        assert answer.status_code == 403


# -- receipts ---------------------------------------------------------------------------------------------


async def sent_text(
    hooks: Hooks, db: Database, clock: ShiftedClock, row: dict[str, Any], template: Template = Template.DRIVER_ARRIVED
) -> tuple[int, str]:
    """(message id, Twilio sid) of a text really sent to the fake, its row ``sent`` with the sid."""
    number = a_mobile()
    provider = TwilioProvider(hooks.twilio.url, ACCOUNT_SID, AUTH_TOKEN, timeout_seconds=2)
    try:
        answer = await provider.send(number, "Acme", "Your driver is here.", status_callback_url(hooks.url))
    finally:
        await provider.aclose()
    assert answer.outcome == "sent" and answer.provider_id
    now = clock.now()
    planned = NewMessage(
        booking_id=int(row["id"]),
        client_id=int(row["client_id"]),
        template=template,
        channel=Channel.SMS,
        to_address=number,
        language="en",
        status=Status.SCHEDULED,
        revision=answer.provider_id,  # one message per text in these tests
        scheduled_for=now,
        expires_at=row["pickup_at"],
    )
    async with db.write() as conn:
        [key] = await repository.insert_messages(conn, [planned], now)
        message = await repository.message_by_key(conn, key)
        assert message is not None
        await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.id == message.id)
            .values(status="sent", provider_id=answer.provider_id, sent_at=now, attempts=1)
        )
    return message.id, answer.provider_id


async def text_row(db: Database, message_id: int) -> dict[str, Any]:
    async with db.read() as conn:
        row = await conn.execute(select(traveller_messages).where(traveller_messages.c.id == message_id))
        return dict(row.mappings().one())


@pytest.fixture
async def booking(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> dict[str, Any]:
    _, _, row = await approved_booking(http, db, make_client, make_partner)
    return row


async def test_a_delivered_receipt_makes_the_text_delivered(
    hooks: Hooks, db: Database, clock: ShiftedClock, booking: dict[str, Any]
) -> None:
    message_id, sid = await sent_text(hooks, db, clock, booking)
    assert hooks.twilio.callbacks[sid] == hooks.url + STATUS  # where Twilio was told to post
    for progress in ("queued", "sending", "sent"):  # Twilio's steps on the way change nothing
        assert (await hooks.twilio.callback(sid, progress)).status_code == 200
        assert (await text_row(db, message_id))["status"] == "sent"
    answer = await hooks.twilio.callback(sid, "delivered")
    assert answer.status_code == 200
    row = await text_row(db, message_id)
    assert row["status"] == "delivered" and row["delivered_at"] is not None
    # a late "failed" for a delivered text changes nothing
    assert (await hooks.twilio.callback(sid, "failed", error_code="30003")).status_code == 200
    assert (await text_row(db, message_id))["status"] == "delivered"


@pytest.mark.parametrize("status", ["undelivered", "failed"])
async def test_an_undelivered_receipt_makes_the_text_failed(
    hooks: Hooks, db: Database, clock: ShiftedClock, booking: dict[str, Any], status: str
) -> None:
    message_id, sid = await sent_text(hooks, db, clock, booking)
    assert (await hooks.twilio.callback(sid, status, error_code="30003")).status_code == 200
    row = await text_row(db, message_id)
    assert (row["status"], row["reason"]) == ("failed", "undelivered")
    assert "30003" in row["last_error"] and row["finished_at"] is not None and row["delivered_at"] is None


async def test_a_receipt_for_an_unknown_sid_is_answered_and_changes_nothing(
    hooks: Hooks, db: Database, clock: ShiftedClock, booking: dict[str, Any]
) -> None:
    message_id, _ = await sent_text(hooks, db, clock, booking)
    answer = await hooks.twilio.callback("SM" + "f" * 32, "delivered", url=hooks.url + STATUS)
    assert answer.status_code == 200
    assert (await text_row(db, message_id))["status"] == "sent"


async def test_a_badly_signed_receipt_is_refused_and_changes_nothing(
    hooks: Hooks, db: Database, clock: ShiftedClock, booking: dict[str, Any]
) -> None:
    message_id, sid = await sent_text(hooks, db, clock, booking)
    answer = await hooks.twilio.callback(sid, "delivered", token="not-the-account-token")
    assert answer.status_code == 403
    assert (await text_row(db, message_id))["status"] == "sent"
    # the signed one still counts afterwards
    assert (await hooks.twilio.callback(sid, "delivered")).status_code == 200
    assert (await text_row(db, message_id))["status"] == "delivered"
