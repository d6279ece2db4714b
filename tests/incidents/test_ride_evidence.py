"""The ride's evidence in incidents (docs/rules/incidents.md#driver-no-show, #customer-no-show): an arrival on
record keeps a driver no-show OPEN for an operator; a partner's CUSTOMER_NO_SHOW opens its incident,
resolved at once against the client, and the client may still report a driver no-show. Real HTTP,
both databases."""

from __future__ import annotations

from datetime import timedelta

import httpx

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import INCIDENTS, approved_ride, at, driver_event, report
from transfers.bookings.lifecycle import lock_booking
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.incidents import evidence


async def test_an_arrival_on_record_leaves_a_driver_no_show_open(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, partner_key, reservation_no, row = await approved_ride(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(minutes=20))
    await driver_event(
        http, partner_key, reservation_no, "DRIVER_ARRIVED_AT_PICKUP", clock.now() - timedelta(minutes=25)
    )
    answer = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "I saw nobody"})
    assert answer.status_code == 201, answer.text
    assert (answer.json()["status"], answer.json()["resolution"]) == ("OPEN", None)
    assert (await row_of(db, reservation_no))["status"] == "APPROVED"
    assert [k for k, _ in await ledger_of(db, reservation_no)] == ["debit_booking"]
    async with db.read() as conn:
        booking = await lock_booking(conn, row["id"])
        assert booking is not None
        found = await evidence.of_booking(conn, booking)
    assert found.arrived_at_pickup
    assert [e.milestone.type.value for e in found.events] == ["DRIVER_ARRIVED_AT_PICKUP"]


async def test_a_customer_no_show_opens_its_incident_resolved_against_the_client(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, partner_key, reservation_no, row = await approved_ride(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=3))
    await driver_event(http, partner_key, reservation_no, "DRIVER_ARRIVED_AT_PICKUP", row["pickup_at"])
    await driver_event(http, partner_key, reservation_no, "CUSTOMER_NO_SHOW", clock.now() - timedelta(minutes=1))
    await driver_event(http, partner_key, reservation_no, "CUSTOMER_NO_SHOW", clock.now() - timedelta(minutes=1))
    assert (await row_of(db, reservation_no))["status"] == "COMPLETED"
    listed = (await http.get(INCIDENTS, params={"reservation_no": reservation_no}, headers=bearer(key))).json()["data"]
    assert len(listed) == 1  # the repeated event opened nothing more
    incident = listed[0]
    assert (incident["type"], incident["status"], incident["reported_by"]) == (
        "CUSTOMER_NO_SHOW",
        "RESOLVED",
        "partner",
    )
    assert (incident["resolution"]["responsible"], incident["resolution"]["refund"]) == ("client", "0.00")
    # the client may still say the driver never came: with the arrival on record, an operator decides
    disputed = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "no driver"})
    assert disputed.status_code == 201 and disputed.json()["status"] == "OPEN"
    assert [k for k, _ in await ledger_of(db, reservation_no)] == ["debit_booking"]
