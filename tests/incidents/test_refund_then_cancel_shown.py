"""The figure a cancellation shows after incident refunds (docs/rules/incidents.md#refund-then-cancel): the
BookingResource's ``cancellation.refund``, the ``booking.status_changed`` webhook, the cancellation quote
before it, the CLI and the console all show what the cancel itself gave back to the wallet
(``total - fee - incident refunds``, never below 0.00), not ``total - fee``; the incidents' refunds stay on
the incidents. On both databases, through the API and a real webhook receiver."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from decimal import Decimal

import httpx
import pytest

from tests.api.test_cancellation_policies import book, cancel, pickup_in, quote
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import at, report
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.bookings import operator_actions
from transfers.bookings.lifecycle import lock_booking, update_details
from transfers.cancellation.policy import parse_spec
from transfers.cli.bookings import _policy_lines
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.deliveries import webhook_dispatcher
from transfers.incidents import service as incidents
from transfers.operators.booking_story import load_detail
from transfers.partners.service import set_cancellation_policy
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher

BOOKING = "/api/v1/booking-api/booking"
WALLET = "/api/v1/booking-api/wallet"
ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    server = await LiveServer(made.app()).start()
    made.url = server.url
    yield made
    await server.stop()


@pytest.fixture
async def dispatcher(service: LiveServer) -> AsyncIterator[WebhookDispatcher]:
    made = webhook_dispatcher(service.app.state.services)
    yield made
    await made.aclose()


async def balance(http: httpx.AsyncClient, key: str) -> Decimal:
    return Decimal((await http.get(WALLET, headers=bearer(key))).json()["balance"])


async def status_changed_to_cancelled(dispatcher: WebhookDispatcher, receiver: Receiver) -> dict[str, object]:
    for _ in range(200):  # bounded: each round fans out and sends what is due
        await dispatcher.run_once()
        for got in receiver.received:
            data = got.body["data"]
            if got.body["type"] == "booking.status_changed" and data["booking"]["status"] == "CANCELLED":
                return dict(data["booking"])
        await asyncio.sleep(0.05)
    raise AssertionError("no booking.status_changed to CANCELLED arrived")


# (policy, who cancels, the incidents' refunds, what the cancel gives back of the 75.00 price)
CASES = [
    ("24:0,0:50", "client", ["30.00"], "7.50"),  # fee 37.50: 75.00 - 37.50 - 30.00
    ("24:0,0:100", "client", ["30.00"], "0.00"),  # the fee is the whole price: nothing left to give back
    ("24:0,0:50", "client", ["30.00", "15.00"], "0.00"),  # the incidents gave back more than the fee left
    ("24:0,0:100", "operator", ["30.00"], "45.00"),  # no fee: what is left of the price
]


@pytest.mark.parametrize(("policy", "by", "refunds", "credited"), CASES)
async def test_the_cancellation_shows_what_the_cancel_credited_after_incident_refunds(
    policy: str,
    by: str,
    refunds: list[str],
    credited: str,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    dispatcher: WebhookDispatcher,
) -> None:
    svc: Services = service.app.state.services
    _, partner_id, _ = await make_partner(
        vehicles=default_vehicles("60.00"),
        markup="25",
        create_status="APPROVED",
        driver={"name": "Sam Driver", "phone": "+447400123458", "plate": "AB12 CDE"},
    )
    await set_cancellation_policy(db, clock, partner_id, parse_spec(policy), actor="tests")
    _, key = await make_client()
    hook = await http.post(ENDPOINTS, json={"url": receiver.hook_url, "events": ["*"]}, headers=bearer(key))
    assert hook.status_code == 201, hook.text
    receiver.secrets.append(hook.json()["secret"])
    reservation_no = (await book(http, key, pickup_in(5)))["reservation_no"]
    row = await row_of(db, reservation_no)
    assert Decimal(row["total"]) == Decimal("75.00") and row["status"] == "APPROVED"

    at(clock, row["pickup_at"], timedelta(hours=1))  # incidents are reported from the pickup on
    for kind, refund in zip(("DRIVER_LATE", "WRONG_VEHICLE"), refunds, strict=False):
        incident = (await report(http, key, reservation_no, {"type": kind, "description": "went wrong"})).json()
        await incidents.resolve(db, clock, incident["id"], responsible="partner", refund=refund, note="n", actor="op")
    async with db.write() as conn:  # the flight arrives later still: the pickup moves 3 h ahead (flights.md)
        booking = await lock_booking(conn, row["id"])
        assert booking is not None
        await update_details(
            conn,
            booking,
            {"pickup_at": clock.now() + timedelta(hours=3)},
            actor="tests",
            reason="late",
            now=clock.now(),
        )
    before = await balance(http, key)
    if by == "client":
        assert (await quote(http, key, reservation_no))["refund"] == credited  # what the cancel will give
        await cancel(http, key, reservation_no)
    else:
        await operator_actions.cancel(svc, reservation_no, "Flight cancelled", actor="operator:support@example.com")

    assert await balance(http, key) - before == Decimal(credited)  # the wallet got exactly this
    cancel_entries = [amount for kind, amount in await ledger_of(db, reservation_no) if kind == "credit_refund"]
    assert sum(cancel_entries, Decimal("0.00")) == Decimal(credited)
    shown = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert shown["status"] == "CANCELLED"
    assert shown["cancellation"]["refund"] == credited and shown["cancellation"]["by"] == by
    told = await status_changed_to_cancelled(dispatcher, receiver)
    assert told["cancellation"] == shown["cancellation"]  # the webhook tells the same figure
    detail = await load_detail(db, reservation_no)
    assert detail is not None
    line = dict(_policy_lines(detail.booking))["cancellation"]
    assert f"refund {credited}" in line and "incidents refunded" in line  # the CLI's `bookings show`
