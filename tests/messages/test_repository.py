"""The statements of messages to travellers on a real database (both, by TRANSFERS_TEST_DATABASE_URL):
settings read with their defaults and written, a message written once per dedupe key (ON CONFLICT DO
NOTHING on both databases, also when two writers race), listed and read back, opt-outs added, found by
scope and lifted."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory
from tests.incidents.helpers import approved_booking
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import client_message_settings, clients, traveller_messages
from transfers.messages import repository as repo
from transfers.messages.models import Channel, MessageSettings, NewMessage, OptOutSource, Status, Template


async def test_settings_default_to_off_and_are_written_with_the_support_phone(
    db: Database, clock: ShiftedClock, make_client: ClientFactory
) -> None:
    client_id, _ = await make_client()
    async with db.read() as conn:
        settings = await repo.settings_of(conn, client_id)
        assert await repo.settings_of(conn, 10**9) is None
    assert settings == MessageSettings(client_id=client_id)

    now = clock.now()
    wanted = MessageSettings(
        client_id=client_id,
        channels=(Channel.EMAIL, Channel.SMS),
        brand_name="Sunny Trips ✈",
        sms_sender="SunnyTrips",
        reply_to="help@sunny.example",
        support_phone="+447911123456",
        default_language="de",
        feedback=True,
        travellers_consented_at=now,
    )
    async with db.write() as conn:
        assert await repo.save_settings(conn, wanted, now)
        assert not await repo.save_settings(conn, MessageSettings(client_id=10**9), now)
    async with db.read() as conn:
        stored = await repo.settings_of(conn, client_id)
        phone = (await conn.execute(select(clients.c.support_phone).where(clients.c.id == client_id))).scalar_one()
        unknown = await conn.execute(
            select(client_message_settings).where(client_message_settings.c.client_id == 10**9)
        )
        assert unknown.first() is None
    assert stored is not None
    assert stored.resource() == {**wanted.resource(), "updated_at": now.isoformat()}
    assert phone == "+447911123456"

    # written again (an upsert): one row, the new values
    later = now + timedelta(minutes=5)
    async with db.write() as conn:
        assert await repo.save_settings(conn, MessageSettings(client_id=client_id, channels=(Channel.EMAIL,)), later)
    async with db.read() as conn:
        again = await repo.settings_of(conn, client_id)
        rows = await conn.execute(
            select(func.count())
            .select_from(client_message_settings)
            .where(client_message_settings.c.client_id == client_id)
        )
        assert rows.scalar_one() == 1
    assert again == MessageSettings(client_id=client_id, channels=(Channel.EMAIL,), updated_at=later)


async def test_a_message_is_written_once_per_dedupe_key_and_read_back(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await approved_booking(http, db, make_client, make_partner)
    booking_id, client_id = int(row["id"]), int(row["client_id"])
    now = clock.now()

    def planned(template: Template, channel: Channel, revision: str, **more: object) -> NewMessage:
        values: dict[str, object] = {
            "booking_id": booking_id,
            "client_id": client_id,
            "template": template,
            "channel": channel,
            "to_address": "+447911123456" if channel is Channel.SMS else "ada@example.com",
            "language": "de",
            "status": Status.SCHEDULED,
            "revision": revision,
            "scheduled_for": now + timedelta(hours=1),
            "expires_at": row["pickup_at"],
        }
        values.update(more)
        return NewMessage(**values)  # type: ignore[arg-type]

    confirmed = planned(Template.CONFIRMED, Channel.EMAIL, "1", scheduled_for=now)
    reminder = planned(Template.REMINDER, Channel.SMS, "1")
    skipped = planned(
        Template.DRIVER_ARRIVED, Channel.SMS, "1", status=Status.SKIPPED, reason="sms_limit", finished_at=now
    )
    async with db.write() as conn:
        written = await repo.insert_messages(conn, [confirmed, reminder, skipped], now)
        assert await repo.insert_messages(conn, [], now) == []
    assert sorted(written) == sorted(m.dedupe_key for m in (confirmed, reminder, skipped))

    async with db.write() as conn:  # the same plan again: nothing more, no error
        assert await repo.insert_messages(conn, [confirmed, planned(Template.REMINDER, Channel.SMS, "2")], now) == [
            reminder.dedupe_key[:-1] + "2"
        ]

    async with db.read() as conn:
        listed = await repo.messages_of_booking(conn, booking_id)
        assert await repo.messages_of_booking(conn, 10**9) == []
        one = await repo.message(conn, listed[0].id)
        assert await repo.message(conn, 10**9) is None
        by_key = await repo.message_by_key(conn, skipped.dedupe_key)
    assert [(m.template, m.channel, m.revision) for m in listed] == [
        ("confirmed", "email", "1"),
        ("reminder", "sms", "1"),
        ("driver_arrived", "sms", "1"),
        ("reminder", "sms", "2"),
    ]
    assert listed[0].scheduled_for == now and listed[0].status == "scheduled" and listed[0].attempts == 0
    assert one == listed[0]
    assert by_key is not None and (by_key.status, by_key.reason, by_key.finished_at) == ("skipped", "sms_limit", now)
    assert (by_key.sent_at, by_key.subject, by_key.body, by_key.provider_id) == (None, None, None, None)


async def test_two_writers_of_the_same_plan_write_one_row(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await approved_booking(http, db, make_client, make_partner)
    now = clock.now()
    message = NewMessage(
        booking_id=int(row["id"]),
        client_id=int(row["client_id"]),
        template=Template.CANCELLED,
        channel=Channel.EMAIL,
        to_address="ada@example.com",
        language="en",
        status=Status.SCHEDULED,
        revision="1",
        scheduled_for=now,
        expires_at=None,
    )

    async def write() -> list[str]:
        async with db.write() as conn:
            return await repo.insert_messages(conn, [message], now)

    results = await asyncio.gather(*(write() for _ in range(4)))
    assert sorted(len(r) for r in results) == [0, 0, 0, 1]
    async with db.read() as conn:
        count = await conn.execute(
            select(func.count())
            .select_from(traveller_messages)
            .where(traveller_messages.c.dedupe_key == message.dedupe_key)
        )
        assert count.scalar_one() == 1


async def test_optouts_by_scope_and_lifted(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await approved_booking(http, db, make_client, make_partner)
    booking_id = int(row["id"])
    now = clock.now()
    address = f"Traveller.{booking_id}@Example.com"
    number = "+4479111" + f"{booking_id % 100000:05d}"
    async with db.write() as conn:
        assert await repo.active_optout(conn, Channel.EMAIL, address, booking_id) is None
        first = await repo.add_optout(
            conn, Channel.EMAIL, address, booking_id=booking_id, source=OptOutSource.PAGE, now=now
        )
        # the same scope again adds nothing
        assert (
            await repo.add_optout(conn, "email", address.upper(), booking_id=booking_id, source="page", now=now)
            == first
        )
    async with db.read() as conn:
        found = await repo.active_optout(conn, Channel.EMAIL, address.lower(), booking_id)
        assert found is not None and (found.id, found.address, found.booking_id) == (first, address.lower(), booking_id)
        assert await repo.active_optout(conn, Channel.EMAIL, address, booking_id + 1) is None  # another booking
        assert await repo.active_optout(conn, Channel.SMS, address, booking_id) is None  # another channel

    async with db.write() as conn:
        every = await repo.add_optout(
            conn, Channel.SMS, number, booking_id=None, source=OptOutSource.SMS_REPLY, now=now
        )
    async with db.read() as conn:
        stopped = await repo.active_optout(conn, Channel.SMS, number, booking_id)
        assert (
            stopped is not None and stopped.id == every and stopped.booking_id is None and stopped.source == "sms_reply"
        )
        assert (await repo.active_optout(conn, Channel.SMS, number, None)) is not None

    later = now + timedelta(hours=1)
    async with db.write() as conn:
        assert await repo.lift_optouts(conn, Channel.SMS, number, later) == 1
        assert await repo.lift_optouts(conn, Channel.SMS, number, later) == 0
    async with db.read() as conn:
        assert await repo.active_optout(conn, Channel.SMS, number, booking_id) is None
    async with db.write() as conn:  # a STOP after the START stops again
        again = await repo.add_optout(conn, Channel.SMS, number, booking_id=None, source="sms_reply", now=later)
        assert again != every
    async with db.read() as conn:
        assert (await repo.active_optout(conn, Channel.SMS, number, booking_id)) is not None
