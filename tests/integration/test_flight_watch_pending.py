"""A booking the partner has not answered yet (still PENDING) keeps its flight watched
(docs/rules/flights.md#watching), on both databases: a pass that finds only PENDING bookings on a flight
moves nothing (the partner has not accepted the trip) and looks again a few minutes later, so once the
partner's answer is in the late flight moves the pickup; before, that pass ended the watch for good."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, row_of, search_body
from tests.integration.test_flight_watch import BOOKING, SEARCH, get, minutes_between, run_pass, watch_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.services import Services


@pytest.fixture
def svc(service: LiveServer) -> Services:
    found: Services = service.app.state.services
    return found


async def test_a_pending_booking_keeps_its_watch_until_the_partner_answers(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    # a date no other test books ZZ1045 on: bookings of one flight, airport and date share one watch, and an
    # APPROVED booking of another test on it would set the watch's schedule
    pickup = (datetime.now().astimezone() + timedelta(days=17)).strftime("%Y-%m-%d 14:30")
    found = await http.post(SEARCH, json=search_body(pickup_datetime=pickup), headers=bearer(key))
    assert found.status_code == 200, found.text
    partner.mode = "status"  # the create fails (HTTP 500): the booking stays PENDING, its message retried
    body = booking_body(found.json()["search_id"], "1", travel_details={"flight_number": "ZZ1045"})
    created = await http.post(BOOKING, json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    number = booking["reservation_no"]
    assert (await row_of(svc.db, number))["status"] == "PENDING"

    await run_pass(svc, clock)
    assert (await get(http, key, number))["pickup_datetime"] == booking["pickup_datetime"]  # not accepted yet
    watch = await watch_of(svc.db, number)
    assert watch["next_check_at"] is not None and watch["next_check_at"] - clock.now() <= timedelta(minutes=5)

    partner.mode = "ok"
    assert svc.dispatcher is not None
    for _ in range(10):  # the create's retries, each after its back-off (bounded)
        if (await row_of(svc.db, number))["status"] != "PENDING":
            break
        clock.advance(timedelta(minutes=1))
        await svc.dispatcher.run_once(limit=200)
    assert (await row_of(svc.db, number))["status"] == "PENDING_APPROVAL"
    clock.advance(watch["next_check_at"] - clock.now() + timedelta(seconds=1))
    await run_pass(svc, clock)
    moved = await get(http, key, number)
    assert minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == 45
