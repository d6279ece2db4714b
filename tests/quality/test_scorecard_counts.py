"""The counts the first scorecard world (``test_scorecards.world``) does not reach, over rides driven
through the reverse API with chosen event times (docs/rules/quality.md#counts): a decline, a booking an
operator cancelled before the partner answered (no request), a client's cancel after the partner
accepted (a request, nothing else), a driver no-show resolved against the partner (DNS, a ride
REFUNDED after APPROVED, a partner incident), and the window's lower bound, which is inclusive."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.api.test_booking_lifecycle import svc_of
from tests.api.test_cancel_actors import cancel_now, request_of
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, row_of, search_body
from tests.incidents.helpers import report
from tests.quality.test_scorecards import book, recorded
from tests.ride.conftest import BOOKING, REVERSE, SEARCH, Ride, approved_ride
from tests.servers import LiveServer
from transfers.bookings.cancel import Actor
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.jobs import scheduled
from transfers.quality import service as quality

MIN = timedelta(minutes=1)


@pytest.fixture
async def world(
    http: httpx.AsyncClient,
    clock: ShiftedClock,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> dict[str, Any]:
    """One partner's bookings, all picked up at the same moment:

    * ``good``: every milestone, reported as it happens, on time: a ride, on time, covered;
    * ``declined``: the partner refused the create: a request, declined;
    * ``withdrawn``: an operator cancelled it before the partner answered: no request;
    * ``client_late``: accepted, then cancelled by the client: a request and nothing more;
    * ``no_show``: accepted, the driver never came; the client's report is resolved against the
      partner at once and the booking REFUNDED: a request, a ride, a driver no-show, a partner incident.
    """
    fake, partner_id, partner_key = await make_partner(airports=("LHR",), create_status="PENDING")
    _, client_key = await make_client()
    reservations = {name: await book(http, client_key, partner_key) for name in ("good", "client_late", "no_show")}
    reservations["withdrawn"] = await book(http, client_key, partner_key, approve=False)
    fake.create_status = "DECLINED"
    reservations["declined"] = await book(http, client_key, partner_key, approve=False)
    fake.create_status = "PENDING"
    assert (await row_of(db, reservations["declined"]))["status"] == "DECLINED"
    await cancel_now(db, clock, reservations["withdrawn"], request_of(Actor.OPERATOR))
    assert (await row_of(db, reservations["withdrawn"]))["cancelled_by"] == "operator"
    late = await http.delete(
        BOOKING,
        params={"reservation_no": reservations["client_late"], "cancellation_id": 1},
        headers=bearer(client_key),
    )
    assert late.status_code == 200, late.text
    info = (await http.get(f"{REVERSE}/info/{reservations['good']}", headers=bearer(partner_key))).json()
    pickup_at = datetime.fromisoformat(info["booking_details"]["pickup_datetime"])
    good = Ride(http, clock, reservations["good"], 0, client_key, partner_id, partner_key, pickup_at)
    good.at(-30 * MIN)
    await recorded(good, "DRIVER_DEPARTED_TO_PICKUP", -31 * MIN)
    good.at(1 * MIN)
    await recorded(good, "DRIVER_ARRIVED_AT_PICKUP", 0 * MIN)
    good.at(10 * MIN)
    await recorded(good, "DRIVER_DEPARTED_TO_DROPOFF", 9 * MIN)
    good.at(50 * MIN)
    dns = await report(http, client_key, reservations["no_show"], {"type": "DRIVER_NO_SHOW", "description": "nobody"})
    assert dns.status_code == 201 and dns.json()["resolution"]["responsible"] == "partner", dns.text
    assert (await row_of(db, reservations["no_show"]))["status"] == "REFUNDED"
    good.at(70 * MIN)
    await recorded(good, "DRIVER_ARRIVED_AT_DROPOFF", 69 * MIN)
    return {"partner_id": partner_id, "pickup_at": pickup_at}


async def test_declines_withdrawals_late_client_cancels_and_driver_no_shows(
    world: dict[str, Any], db: Database, clock: ShiftedClock, service: LiveServer
) -> None:
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    clock.advance(pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))
    as_of = pickup_at + timedelta(hours=12, minutes=1)
    (card,) = (await quality.compute(db, as_of, partner_id)).cards
    assert card["counts"] == {
        "requests": 4,  # good, declined, client_late, no_show: the operator's withdrawal is no request
        "declined": 1,
        "partner_cancelled": 0,  # the client's cancel after acceptance is not the partner's
        "driver_no_shows": 1,
        "rides": 2,  # good (COMPLETED) and no_show (REFUNDED after APPROVED)
        "on_time": 1,
        "covered": 1,
        "partner_incidents": 1,
        "ratings": 0,
    }
    # reliability (4 - 1 - 0 - 1 + 19.4)/24 = 0.8917; on_time (1 + 17)/22 = 0.8182; coverage (1 + 16)/22
    # = 0.7727; incident_free (2 - 1 + 19.6)/22 = 0.9364; rating 0.875:
    # 31.2083 + 20.4545 + 11.5909 + 14.0455 + 8.75 = 86.0492 -> 86
    assert card["components"] == {
        "reliability": 0.8917,
        "on_time": 0.8182,
        "coverage": 0.7727,
        "incident_free": 0.9364,
        "rating": 0.875,
    }
    assert (card["score"], card["tier"]) == (86, "PROVISIONAL")
    assert card["rates"] == {"decline": 0.25, "on_time": 0.5, "coverage": 0.5, "incident": 0.5}
    assert card["rating"] == {"count": 0, "average": None, "bayesian": 4.5}


async def test_the_window_includes_its_start_and_excludes_its_end(
    world: dict[str, Any], db: Database, clock: ShiftedClock, service: LiveServer
) -> None:
    """[as_of - 12 h - 90 days, as_of - 12 h): a pickup exactly at the start counts, one exactly at the
    end does not, one a second before the start does not."""
    partner_id, pickup_at = world["partner_id"], world["pickup_at"]
    clock.advance(pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))
    at_start = pickup_at + timedelta(hours=12, days=90)
    requests = [
        (await quality.compute(db, as_of, partner_id)).cards[0]["counts"]["requests"]
        for as_of in (pickup_at + timedelta(hours=12), at_start, at_start + timedelta(seconds=1))
    ]
    assert requests == [0, 4, 0]


async def test_a_late_arrival_re_sent_backdated_stays_late(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """The first report of an event is the record: a partner that reported its driver 20 minutes late,
    as it happened, cannot make the ride on time by sending the arrival again with an earlier time."""
    ride = await approved_ride(http, clock, make_client, make_partner)
    ride.at(-30 * MIN)
    await recorded(ride, "DRIVER_DEPARTED_TO_PICKUP", -31 * MIN)
    ride.at(20 * MIN + timedelta(seconds=10))
    await recorded(ride, "DRIVER_ARRIVED_AT_PICKUP", 20 * MIN)
    ride.at(21 * MIN)
    again = await ride.event("DRIVER_ARRIVED_AT_PICKUP", ride.pickup_at + MIN)
    assert again.status_code == 200, again.text  # a repeat: accepted, nothing changes
    ride.at(22 * MIN)
    await recorded(ride, "DRIVER_DEPARTED_TO_DROPOFF", 22 * MIN - timedelta(seconds=5))
    ride.at(60 * MIN)
    await recorded(ride, "DRIVER_ARRIVED_AT_DROPOFF", 60 * MIN - timedelta(seconds=5))
    clock.advance(ride.pickup_at + timedelta(hours=13) - clock.now())
    await scheduled.complete_rides(svc_of(service))
    (card,) = (await quality.compute(db, ride.pickup_at + timedelta(hours=12, minutes=1), ride.partner_id)).cards
    counts = card["counts"]
    assert (counts["rides"], counts["covered"], counts["on_time"]) == (1, 1, 0)
    milestones = (await ride.booking())["ride"]["events"]
    arrived = [m for m in milestones if m["type"] == "DRIVER_ARRIVED_AT_PICKUP"]
    assert len(arrived) == 1 and datetime.fromisoformat(arrived[0]["occurred_at"]) == ride.pickup_at + 20 * MIN


async def test_each_airport_is_scored_on_its_own_and_the_whole_is_their_sum(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """The per-airport split: two bookings at Heathrow (one cancelled by the partner after accepting),
    one at Luton; each airport's scorecard is the formula over its own counts, the whole over the sum."""
    _, partner_id, partner_key = await make_partner(airports=("LHR", "LTN"), create_status="PENDING")
    _, client_key = await make_client()
    heathrow = [await book(http, client_key, partner_key) for _ in range(2)]
    found = await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "LTN"}), headers=bearer(client_key)
    )
    assert found.status_code == 200, found.text
    created = await http.post(
        BOOKING,
        json=booking_body(found.json()["search_id"], found.json()["vehicles"][0]["vehicle_id"]),
        headers=bearer(client_key),
    )
    assert created.status_code == 200, created.text
    luton = created.json()["booking"]["reservation_no"]
    cancel = {"reservation_no": heathrow[0], "status": "CANCELLED", "cancel_reason": "no car"}
    assert (await http.put(f"{REVERSE}/update", json=cancel, headers=bearer(partner_key))).status_code == 200
    pickups = [(await row_of(db, no))["pickup_at"] for no in (*heathrow, luton)]
    as_of = max(pickups) + timedelta(hours=12, minutes=1)
    result = await quality.compute(db, as_of, partner_id)
    (whole,) = result.cards
    split = result.airports[partner_id]
    assert sorted(split) == ["LHR", "LTN"]
    assert [
        (c["counts"]["requests"], c["counts"]["partner_cancelled"]) for c in (whole, split["LHR"], split["LTN"])
    ] == [
        (3, 1),
        (2, 1),
        (1, 0),
    ]
    # reliability: (3 - 1 + 19.4)/23, (2 - 1 + 19.4)/22, (1 + 19.4)/21
    assert [c["components"]["reliability"] for c in (whole, split["LHR"], split["LTN"])] == [0.9304, 0.9273, 0.9714]
    assert all(c["partner_id"] == partner_id and c["as_of"] == whole["as_of"] for c in split.values())
