"""SMS to travellers end to end (docs/rules/messages.md#sending), on both databases: bookings driven through
the booking API and a test partner's reverse calls, the planner's pass, then the worker's
``traveller_messages`` job against a local server answering like Twilio's Messages API
(tests/fake_twilio.py) or the sandbox provider, the clock moved. What Twilio is sent (the sender, the
text, the status callback); a 503 retried until taken; an invalid number failed at once and the client
told; a provider that hangs bounded and the text not resent (ambiguous); the sandbox keeps the text."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancellation_policies import move_clock_to
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio
from tests.incidents.helpers import driver_event
from tests.messages.test_delivery import failed_events, of
from tests.messages.test_planner import REVERSE_UPDATE, approved, only_these, plan_all, rows
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.deliveries import send_traveller_messages
from transfers.messages import repository as repo
from transfers.messages.models import Channel
from transfers.services import Services

PHONE = "+447911123456"  # the test bookings' passenger (tests/helpers.booking_body)


@pytest.fixture
async def twilio() -> AsyncIterator[FakeTwilio]:
    fake = await FakeTwilio().start()
    yield fake
    await fake.stop()


@contextlib.asynccontextmanager
async def worker(service: LiveServer, clock: ShiftedClock, **more: Any) -> AsyncIterator[Services]:
    settings = svc_of(service).settings.model_copy(update={"smtp_url": "", **more})
    svc = Services.build(settings, clock=clock, application_name="transfers-sms-worker")
    try:
        yield svc
    finally:
        await svc.partner_client.aclose()
        await svc.db.dispose()


def twilio_settings(twilio: FakeTwilio) -> dict[str, Any]:
    return {
        "sms_provider": "twilio",
        "sms_provider_url": twilio.url,
        "twilio_account_sid": ACCOUNT_SID,
        "twilio_auth_token": AUTH_TOKEN,
        "sms_long_code": "+12025550123",
        "sms_timeout_seconds": 0.5,
    }


async def arrived(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> tuple[str, dict[str, Any]]:
    """An APPROVED booking whose driver has just arrived, planned: its ``driver_arrived`` SMS is due."""
    async with db.write() as conn:
        await repo.lift_optouts(conn, Channel.SMS, PHONE, clock.now())  # another test's STOP, if any
    partner_key, no, row = await approved(http, db, clock, make_client, make_partner)
    move_clock_to(clock, row["pickup_at"] - timedelta(minutes=5))
    await driver_event(http, partner_key, no, "DRIVER_ARRIVED_AT_PICKUP", clock.now() - timedelta(seconds=30))
    await plan_all(db, clock)
    await only_these(db, int(row["id"]))
    return partner_key, row


async def test_the_arrival_texted_through_twilio_and_a_503_retried(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    twilio: FakeTwilio,
) -> None:
    _, row = await arrived(http, db, clock, make_client, make_partner)
    twilio.queue = ["503"]
    async with worker(service, clock, **twilio_settings(twilio)) as svc:
        await send_traveller_messages(svc)
        waiting = of(await rows(db, int(row["id"])), "driver_arrived", "sms")
        assert (waiting["status"], waiting["attempts"]) == ("scheduled", 1) and waiting["scheduled_for"] > clock.now()
        move_clock_to(clock, waiting["scheduled_for"] + timedelta(seconds=1))
        await send_traveller_messages(svc)
    sent = of(await rows(db, int(row["id"])), "driver_arrived", "sms")
    assert (sent["status"], sent["attempts"]) == ("sent", 2)
    (request,) = [r for r in twilio.sent if row["reservation_no"] in r.form["Body"]]
    assert request.form["To"] == PHONE and request.form["From"] == "SunnyTrips"  # the client's sender
    assert request.form["StatusCallback"].endswith("/hooks/sms/twilio/status")
    assert "AB12 CDE" in request.form["Body"] and "Sam" in request.form["Body"]  # the plate, the first name
    assert sent["provider_id"] == next(
        sid for sid, m in twilio.messages.items() if m["to"] == PHONE and m["body"] == request.form["Body"]
    )
    assert sent["body"] == request.form["Body"]


async def test_an_invalid_number_fails_at_once_and_the_client_is_told(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    twilio: FakeTwilio,
) -> None:
    _, row = await arrived(http, db, clock, make_client, make_partner)
    twilio.invalid.add(PHONE)
    async with worker(service, clock, **twilio_settings(twilio)) as svc:
        await send_traveller_messages(svc)
    failed = of(await rows(db, int(row["id"])), "driver_arrived", "sms")
    assert (failed["status"], failed["attempts"]) == ("failed", 1) and failed["reason"]
    (event,) = await failed_events(db, int(row["id"]))
    assert event["data"]["message"]["template"] == "driver_arrived" and event["data"]["message"]["channel"] == "sms"


async def test_a_hanging_provider_is_bounded_and_the_text_not_resent(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    twilio: FakeTwilio,
) -> None:
    _, row = await arrived(http, db, clock, make_client, make_partner)
    twilio.mode = "hang"
    async with worker(service, clock, **twilio_settings(twilio)) as svc:
        await send_traveller_messages(svc)
        twilio.mode = "ok"
        move_clock_to(clock, clock.now() + timedelta(minutes=10))
        await send_traveller_messages(svc)
    ended = of(await rows(db, int(row["id"])), "driver_arrived", "sms")
    assert (ended["status"], ended["reason"], ended["attempts"]) == ("failed", "ambiguous", 1)
    assert (
        len(
            [
                r
                for r in twilio.requests
                if r.form.get("To") == PHONE and row["reservation_no"] in r.form.get("Body", "")
            ]
        )
        == 1
    )
    assert len(await failed_events(db, int(row["id"]))) == 1


async def test_the_sandbox_keeps_the_text_and_the_partners_cancel_goes_on_both_channels(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner_key, row = await arrived(http, db, clock, make_client, make_partner)
    cancelled = await http.put(
        REVERSE_UPDATE,
        json={"reservation_no": row["reservation_no"], "status": "CANCELLED"},
        headers=bearer(partner_key),
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    async with worker(service, clock, sms_provider="sandbox") as svc:
        await send_traveller_messages(svc)
    found = await rows(db, int(row["id"]))
    # the arrival's text is about a booking no longer APPROVED when it is sent: outdated, not sent
    assert (of(found, "driver_arrived", "sms")["status"], of(found, "driver_arrived", "sms")["reason"]) == (
        "skipped",
        "outdated",
    )
    kept = of(found, "cancelled", "sms")
    assert (
        kept["status"] == "sent"
        and kept["provider_id"].startswith("sandbox-")
        and row["reservation_no"] in kept["body"]
    )
    email = of(found, "cancelled", "email")
    assert (email["status"], email["reason"]) == ("skipped", "not_configured")  # no SMTP server in this worker
