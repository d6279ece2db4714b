"""The opt-out link of a message actually sent (docs/rules/messages.md#opt-out-page), end to end: a client with
messages on, its booking's ``confirmed`` e-mail planned and delivered to a real SMTP server (aiosmtpd) on
loopback, the link read out of the e-mail as the traveller would click it, the page opened and ``every
transfer`` chosen; then the partner cancels, and the ``cancelled`` e-mail is suppressed (it never reaches
the SMTP server) while the text message to the same traveller is not."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.messages.page_helpers import own_addresses
from tests.messages.test_delivery import worker
from tests.messages.test_planner import REVERSE_UPDATE, approved, only_these, plan_all, rows
from tests.servers import LiveServer
from tests.smtp_server import Inbox, smtp_server
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.deliveries import send_traveller_messages

LINK = re.compile(r"https?://\S+/m/[A-Za-z0-9_-]+")


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    with smtp_server() as running:
        yield running


def body_of(mail: object) -> str:
    payload = mail.get_payload(decode=True)  # type: ignore[attr-defined]
    return payload.decode("utf-8") if isinstance(payload, bytes) else str(payload)


async def test_the_link_in_a_sent_email_stops_the_next_ones(
    http: httpx.AsyncClient,
    service: LiveServer,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    partner_key, no, booked = await approved(http, db, clock, make_client, make_partner)
    row = await own_addresses(db, booked)  # an address of its own: "every transfer" stops nobody else's
    booking_id = int(row["id"])
    await plan_all(db, clock)
    await only_these(db, booking_id)
    async with worker(service, clock, port) as svc:
        assert await send_traveller_messages(svc) >= 1
    ((to, mail),) = [m for m in inbox.messages if no in str(m[1]["Subject"])]
    assert to == [row["passenger_email"]]
    (link,) = set(LINK.findall(body_of(mail)))
    path = urlsplit(link).path

    page = await http.get(path)
    assert page.status_code == 200 and "a***@example.com" in page.text and no in page.text
    stopped = await http.post(path, data={"scope": "all"})
    assert stopped.status_code == 303

    cancelled = await http.put(
        REVERSE_UPDATE, json={"reservation_no": no, "status": "CANCELLED"}, headers=bearer(partner_key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await plan_all(db, clock)
    await only_these(db, booking_id)
    async with worker(service, clock, port) as svc:
        await send_traveller_messages(svc)
    found = {(r["template"], r["channel"]): r["status"] for r in await rows(db, booking_id)}
    assert found[("cancelled", "email")] == "suppressed", found
    assert found[("cancelled", "sms")] != "suppressed", found
    assert [m for m in inbox.messages if no in str(m[1]["Subject"])] == [(to, mail)]  # nothing more by e-mail
