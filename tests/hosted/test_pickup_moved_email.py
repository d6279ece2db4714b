"""A hosted partner's users are e-mailed when a pickup follows the flight (docs/rules/flights.md#pickup-moves,
docs/rules/hosted-partners.md), through the partner e-mail delivery, to a real SMTP server (aiosmtpd) on
loopback: the flight checked by the sandbox provider on the injected clock (``ZZ1045``: 45 min late), the
notice delivered in-process, one e-mail per move, never two for a re-delivered notice."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory
from tests.helpers import row_of
from tests.hosted.conftest import HostedFactory
from tests.hosted.test_partner_emails import Inbox, emails_of, smtp, worker_services  # noqa: F401  (the fixture)
from tests.ride_pages.flights import accepted_on_flight
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import outbox
from transfers.deliveries import send_partner_emails
from transfers.delivery.models import OutboxMessage
from transfers.hosted import mail
from transfers.hosted.users import create_partner_user


async def test_the_partner_s_users_are_mailed_when_the_pickup_moves(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_hosted: HostedFactory,
    db: Database,
    clock: ShiftedClock,
    smtp: tuple[Inbox, int],  # noqa: F811
) -> None:
    inbox, port = smtp
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Moved Pickup Cars")
    address = f"dispatch-{partner_id}-{os.getpid()}@moved-cars.example"  # unique in a database kept between runs
    await create_partner_user(db, clock, partner_id=partner_id, email=address, password=None, actor="tests")
    ride = await accepted_on_flight(svc_of(service), http, key, "Moved Pickup Cars", partner_id, "ZZ1045", clock)
    no = ride.reservation_no
    assert (await row_of(db, no))["pickup_at"] == ride.pickup_at + timedelta(minutes=45)
    dispatcher = svc_of(service).dispatcher
    assert dispatcher is not None
    for _ in range(3):
        clock.advance(timedelta(seconds=30))
        await dispatcher.run_once(limit=200)
    # a re-delivery of the same notice (at-least-once outbox) does not queue a second e-mail
    booking_id = (await row_of(db, no))["id"]
    async with db.read() as conn:
        notice = OutboxMessage.from_row(
            (
                await conn.execute(
                    select(outbox).where(outbox.c.booking_id == booking_id, outbox.c.kind == "booking.flight_update")
                )
            )
            .mappings()
            .one()
        )
    async with db.write() as conn:
        await mail.enqueue(conn, notice, "booking.pickup_moved", clock.now())
    assert [e["kind"] for e in await emails_of(db, no)].count("booking.pickup_moved") == 1
    async with worker_services(service, clock, port) as svc:
        await send_partner_emails(svc)
        await send_partner_emails(svc)
    moved = [
        m for _, m in inbox.messages if m["Subject"] == f"Booking {no}: the pickup moved to 15:15 (the flight is late)"
    ]
    assert len(moved) == 1
    raw = moved[0].get_payload(decode=True)  # quoted-printable: long lines come wrapped
    assert isinstance(raw, bytes)
    body = raw.decode()
    assert "The traveller's flight is late: the pickup moved from 14:30 to 15:15 (airport time)." in body
    assert "GLA local time" in body and f"/partner/bookings/{no}" in body and "ZZ1045" in body
    sent = [e for e in await emails_of(db, no) if e["kind"] == "booking.pickup_moved"]
    assert [(e["status"], e["recipients"]) for e in sent] == [("sent", [address])]
