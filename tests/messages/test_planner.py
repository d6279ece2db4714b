"""The messages' passes on a real database (both, by TRANSFERS_TEST_DATABASE_URL), bookings driven through
the booking API and a test partner's reverse calls, the clock moved: the events planned once (a second
pass and two passes at once write nothing more), confirmed at the approval, a driver change coalesced
(2 min, a later one supersedes), the arrival's SMS, the partner's cancel, the reminder written when due,
the booking's switches and opt-outs."""

from __future__ import annotations

import asyncio
from datetime import UTC, timedelta
from typing import Any

import httpx
from sqlalchemy import func, select, update

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancellation_policies import book, move_clock_to, pickup_in
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import row_of
from tests.incidents.helpers import driver_event
from tests.integration.test_flight_watch import book as book_flight
from tests.integration.test_flight_watch import run_pass
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import client_events, message_planned_events, traveller_messages
from transfers.jobs import scheduled
from transfers.messages import planner, reminders
from transfers.messages import repository as repo
from transfers.messages.models import Channel, MessageSettings, OptOutSource

REVERSE_UPDATE = "/api/v1/reverse/booking/update"
SAM = {"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"}


async def messages_on(db: Database, clock: ShiftedClock, client_id: int, *, feedback: bool = False) -> None:
    settings = MessageSettings(
        client_id=client_id,
        channels=(Channel.EMAIL, Channel.SMS),
        brand_name="Sunny Trips",
        sms_sender="SunnyTrips",
        feedback=feedback,
        travellers_consented_at=clock.now(),
    )
    async with db.write() as conn:
        assert await repo.save_settings(conn, settings, clock.now())


async def plan_all(db: Database, clock: ShiftedClock) -> None:
    for _ in range(50):
        if await planner.plan_pass(db, clock.now()) == 0:
            return


async def rows(db: Database, booking_id: int) -> list[dict[str, Any]]:
    async with db.read() as conn:
        found = await conn.execute(
            select(traveller_messages)
            .where(traveller_messages.c.booking_id == booking_id)
            .order_by(traveller_messages.c.id)
        )
        return [dict(r._mapping) for r in found]


async def only_these(db: Database, *booking_ids: int) -> None:
    """Other tests' messages still waiting in the session's database end here (expired), so a worker run
    by the calling test sends only its own bookings' messages."""
    async with db.write() as conn:
        await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.status == "scheduled", traveller_messages.c.booking_id.not_in(booking_ids))
            .values(status="expired", lease_until=None)
        )


def brief(found: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (r["template"], r["channel"], r["status"] if not r["reason"] else f"{r['status']}:{r['reason']}") for r in found
    ]


async def approved(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    **client: Any,
) -> tuple[str, str, dict[str, Any]]:
    _, _, partner_key = await make_partner(vehicles=default_vehicles("56.05"), create_status="APPROVED", driver=SAM)
    client_id, key = await make_client()
    await messages_on(db, clock, client_id, **client)
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, reservation_no)
    assert row["status"] == "APPROVED"
    return partner_key, reservation_no, row


async def test_a_booking_told_from_approval_to_cancel(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    partner_key, no, row = await approved(http, db, clock, make_client, make_partner)
    booking_id = int(row["id"])
    await plan_all(db, clock)
    # the approval named the driver: one ``confirmed`` (e-mail only), no ``driver_changed``
    assert brief(await rows(db, booking_id)) == [("confirmed", "email", "scheduled")]
    (confirmed,) = await rows(db, booking_id)
    assert confirmed["to_address"] == row["passenger_email"] and confirmed["language"] == "en"
    assert confirmed["expires_at"] == row["pickup_at"]
    await plan_all(db, clock)  # nothing new
    assert len(await rows(db, booking_id)) == 1

    # a driver change: 2 min later, both channels; a second change within the 2 min supersedes it
    bob = {"name": "Bob Other", "phone": "+447400123459", "plate": "XY34 ZZZ"}
    changed = await http.put(
        REVERSE_UPDATE,
        json={"reservation_no": no, "status": "APPROVED", "driver_info": bob},
        headers=bearer(partner_key),
    )
    assert changed.status_code == 200, changed.text
    await plan_all(db, clock)
    found = await rows(db, booking_id)
    assert brief(found)[1:] == [("driver_changed", "email", "scheduled"), ("driver_changed", "sms", "scheduled")]
    assert (
        found[1]["scheduled_for"] == found[1]["created_at"] + timedelta(minutes=2)
        or found[1]["scheduled_for"] > clock.now()
    )
    ann = {"name": "Ann Third", "phone": "+447400123450", "plate": "CD56 EEE"}
    again = await http.put(
        REVERSE_UPDATE,
        json={"reservation_no": no, "status": "APPROVED", "driver_info": ann},
        headers=bearer(partner_key),
    )
    assert again.status_code == 200, again.text
    await plan_all(db, clock)
    assert brief(await rows(db, booking_id))[1:] == [
        ("driver_changed", "email", "skipped:superseded"),
        ("driver_changed", "sms", "skipped:superseded"),
        ("driver_changed", "email", "scheduled"),
        ("driver_changed", "sms", "scheduled"),
    ]

    # the driver arrives: the SMS, expiring 30 min after the arrival occurred
    pickup = row["pickup_at"]
    move_clock_to(clock, pickup - timedelta(minutes=10))
    await driver_event(http, partner_key, no, "DRIVER_DEPARTED_TO_PICKUP", clock.now() - timedelta(minutes=20))
    occurred = clock.now() - timedelta(minutes=1)
    await driver_event(http, partner_key, no, "DRIVER_ARRIVED_AT_PICKUP", occurred)
    await plan_all(db, clock)
    arrived = [r for r in await rows(db, booking_id) if r["template"] == "driver_arrived"]
    assert brief(arrived) == [("driver_arrived", "sms", "scheduled")]
    assert abs(arrived[0]["expires_at"] - (occurred + timedelta(minutes=30))) < timedelta(milliseconds=1)

    # the partner cancels: ``cancelled`` on both channels
    cancelled = await http.put(
        REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    assert [b for b in brief(await rows(db, booking_id)) if b[0] == "cancelled"] == [
        ("cancelled", "email", "scheduled"),
        ("cancelled", "sms", "scheduled"),
    ]


async def test_the_clients_own_cancel_tells_nothing_and_switches_and_opt_outs_hold(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner(vehicles=default_vehicles("56.05"), create_status="APPROVED", driver=SAM)
    client_id, key = await make_client()
    await messages_on(db, clock, client_id)
    async with db.write() as conn:
        await repo.add_optout(
            conn, Channel.EMAIL, "SOMEONE@example.com", booking_id=None, source=OptOutSource.PAGE, now=clock.now()
        )
    no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, no)
    cancel = await http.delete(
        "/api/v1/booking-api/booking", params={"reservation_no": no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert cancel.status_code == 200, cancel.text
    await plan_all(db, clock)
    found = brief(await rows(db, int(row["id"])))
    expected_confirmed = (
        "suppressed:opted_out" if row["passenger_email"].lower() == "someone@example.com" else "scheduled"
    )
    assert found == [("confirmed", "email", expected_confirmed)]  # the client's own cancel: nothing


async def test_the_reminder_is_written_when_due_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    booking_id, pickup = int(row["id"]), row["pickup_at"]
    await reminders.reminders_pass(db, clock.now())
    assert [r for r in await rows(db, booking_id) if r["template"] == "reminder"] == []  # 5 days ahead: not yet
    move_clock_to(clock, pickup - timedelta(hours=23))
    # two passes at once write one reminder per channel
    await asyncio.gather(reminders.reminders_pass(db, clock.now()), reminders.reminders_pass(db, clock.now()))
    await reminders.reminders_pass(db, clock.now())
    found = [r for r in await rows(db, booking_id) if r["template"] == "reminder"]
    assert brief(found) == [("reminder", "email", "scheduled"), ("reminder", "sms", "scheduled")]
    # 14:30 in London is daytime: due 24 h before the pickup
    assert found[0]["scheduled_for"] == pickup - timedelta(hours=24) and found[0]["expires_at"] == pickup


async def test_two_planners_at_once_plan_each_event_once(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    await asyncio.gather(*(planner.plan_pass(db, clock.now(), limit=3) for _ in range(4)))
    await plan_all(db, clock)
    assert brief(await rows(db, int(row["id"]))) == [("confirmed", "email", "scheduled")]


async def test_a_late_flight_tells_the_traveller_the_new_pickup_once(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner(create_status="APPROVED", driver=SAM)
    client_id, key = await make_client()
    await messages_on(db, clock, client_id)
    booking = await book_flight(http, key, "zz 1045")  # the sandbox flight provider: 45 min late
    svc = svc_of(service)
    await run_pass(svc, clock)
    row = await row_of(db, booking["reservation_no"])
    assert row["pickup_at"] != row["original_pickup_at"]
    await plan_all(db, clock)
    await run_pass(svc, clock)  # no news: nothing more
    await plan_all(db, clock)
    moved = [r for r in await rows(db, int(row["id"])) if r["template"] == "pickup_moved"]
    assert brief(moved) == [("pickup_moved", "email", "scheduled"), ("pickup_moved", "sms", "scheduled")]
    assert moved[0]["expires_at"] == row["pickup_at"]
    assert moved[0]["revision"] == row["pickup_at"].astimezone(UTC).strftime("%Y%m%d%H%M")


async def test_texts_kept_30_days_and_marks_2_days(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, _, row = await approved(http, db, clock, make_client, make_partner)
    booking_id = int(row["id"])
    await plan_all(db, clock)
    sent_at = clock.now()
    async with db.write() as conn:  # as the sender leaves a sent message
        await conn.execute(
            update(traveller_messages)
            .where(traveller_messages.c.booking_id == booking_id)
            .values(status="sent", subject="s", body="b", sent_at=sent_at, finished_at=sent_at)
        )
    events = select(client_events.c.id).where(client_events.c.booking_id == booking_id)
    marks = select(func.count()).where(message_planned_events.c.event_pk.in_(events))
    async with db.read() as conn:
        assert (await conn.execute(marks)).scalar_one() >= 1
    svc = svc_of(service)
    move_clock_to(clock, sent_at + timedelta(days=2, minutes=1))
    await scheduled.prune_messages(svc)
    async with db.read() as conn:
        assert (await conn.execute(marks)).scalar_one() == 0  # past the planner's window
    assert (await rows(db, booking_id))[0]["body"] == "b"  # still kept
    move_clock_to(clock, sent_at + timedelta(days=30, minutes=1))
    for _ in range(50):
        if await scheduled.prune_messages(svc) == 0:
            break
    (kept,) = await rows(db, booking_id)
    assert (kept["status"], kept["subject"], kept["body"]) == ("sent", None, None)
