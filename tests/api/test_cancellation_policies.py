"""docs/rules/cancellation.md, policies and fees: a partner's default and per-vehicle policies in search answers,
the policy stored with the booking, the quote, the fee kept on a client cancel (at each tier
boundary, one second either side, and across a DST change), full refunds for partner
cancellations, declines and failures. Partners are real loopback HTTP servers (tests/fake_partner.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import default_vehicles
from tests.helpers import booking_body, ledger_of, row_of, search_body
from tests.servers import LiveServer
from transfers.cancellation.policy import parse_spec
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import ledger_entries
from transfers.jobs.scheduled import expire_deliveries
from transfers.partners.service import set_cancellation_policy

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
QUOTE = "/api/v1/booking-api/booking/cancellation-quote"
REVERSE_UPDATE = "/api/v1/reverse/booking/update"
LONDON = ZoneInfo("Europe/London")
LUXURY = [
    {"hours_before_pickup": 48, "fee_percent": 0},
    {"hours_before_pickup": 24, "fee_percent": 50},
    {"hours_before_pickup": 0, "fee_percent": 100},
]
SECOND = timedelta(seconds=1)


def luxury_vehicles(price: str = "56.05") -> list[dict[str, Any]]:
    """car-1 carries its own policy (LUXURY); van-1 none (the partner's default applies)."""
    vehicles = default_vehicles(price)
    vehicles[0]["cancellation_policy"] = LUXURY
    return vehicles


async def partner_with_default(
    make_partner: PartnerFactory, db: Database, clock: ShiftedClock, default: str | None, **fake: Any
) -> tuple[Any, int, str]:
    partner, partner_id, api_key = await make_partner(**fake)
    if default is not None:
        await set_cancellation_policy(db, clock, partner_id, parse_spec(default), actor="tests")
    return partner, partner_id, api_key


async def search(http: httpx.AsyncClient, key: str, pickup: str) -> dict[str, Any]:
    response = await http.post(SEARCH, json=search_body(pickup_datetime=pickup), headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def book(http: httpx.AsyncClient, key: str, pickup: str, vehicle: str = "1") -> dict[str, Any]:
    found = await search(http, key, pickup)
    created = await http.post(BOOKING, json=booking_body(found["search_id"], vehicle), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    return booking


def pickup_in(days: int) -> str:
    return (
        (datetime.now(UTC) + timedelta(days=days))
        .astimezone(LONDON)
        .replace(hour=14, minute=30)
        .strftime("%Y-%m-%d %H:%M")
    )


def move_clock_to(clock: ShiftedClock, moment: datetime) -> None:
    clock.offset = moment - datetime.now(UTC)


async def test_vehicle_policy_wins_over_the_partner_default_and_is_sold_with_the_booking(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, partner_id, _ = await partner_with_default(make_partner, db, clock, "24:0,0:100", vehicles=luxury_vehicles())
    _, key = await make_client()
    pickup = pickup_in(10)
    found = await search(http, key, pickup)
    car, van = found["vehicles"]
    pickup_at = datetime.strptime(pickup, "%Y-%m-%d %H:%M").replace(tzinfo=LONDON)
    assert car["cancellation_policy"] == {
        "tiers": LUXURY,
        "free_until": (pickup_at - timedelta(hours=48)).astimezone(LONDON).isoformat(),
    }
    assert van["cancellation_policy"] == {
        "tiers": [{"hours_before_pickup": 24, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}],
        "free_until": (pickup_at - timedelta(hours=24)).astimezone(LONDON).isoformat(),
    }
    created = await http.post(BOOKING, json=booking_body(found["search_id"], "1"), headers=bearer(key))
    booking = created.json()["booking"]
    assert booking["cancellation_policy"] == car["cancellation_policy"]
    assert booking["cancellation"] is None and booking["amendment"] is None
    # the partner's default changes later: the booking keeps what it was sold with
    await set_cancellation_policy(db, clock, partner_id, parse_spec("0:100"), actor="tests")
    again = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    assert again.json()["cancellation_policy"]["tiers"] == LUXURY
    assert (await row_of(db, booking["reservation_no"]))["cancellation_policy"] == LUXURY
    later = await search(http, key, pickup)
    assert later["vehicles"][1]["cancellation_policy"] == {
        "tiers": [{"hours_before_pickup": 0, "fee_percent": 100}],
        "free_until": None,
    }


@pytest.mark.parametrize(
    "policy",
    [
        [{"hours_before_pickup": 1.5, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}],  # fractional
        [{"hours_before_pickup": -24, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}],  # negative
        [{"hours_before_pickup": 0, "fee_percent": -5}],
        [{"hours_before_pickup": 0, "fee_percent": 100.5}],
        [{"hours_before_pickup": 0, "fee_percent": 12.345}],  # three decimals
        [{"hours_before_pickup": 8761, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}],
        [{"hours_before_pickup": h, "fee_percent": 0} for h in range(11)],  # 11 tiers
        [{"hours_before_pickup": 24, "fee_percent": 0}],  # no tier at 0 hours
        [{"hours_before_pickup": True, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 100}],
        [{"hours_before_pickup": 0, "fee_percent": "lots"}],
        "24:0,0:100",
        {"tiers": []},
        [],
    ],
)
async def test_a_malformed_policy_leaves_that_partner_out_of_the_search(
    policy: Any, http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    bad_vehicles = default_vehicles("30.00")
    bad_vehicles[1]["cancellation_policy"] = policy
    await make_partner(name="Bad policies", vehicles=bad_vehicles)
    await make_partner(name="Good policies", vehicles=luxury_vehicles())
    _, key = await make_client()
    found = await search(http, key, pickup_in(10))
    assert {v["company"] for v in found["vehicles"]} == {"Good policies"}


async def quote(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    response = await http.get(QUOTE, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def cancel(http: httpx.AsyncClient, key: str, reservation_no: str) -> None:
    response = await http.delete(
        BOOKING, params={"reservation_no": reservation_no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert response.json() == {"status": "Success", "message": "Booking cancelled successfully.", "data": []}


# (hours before pickup of the tier boundary, seconds away from it: + earlier, - later, fee %)
BOUNDARIES = [
    (48, 1, 0),
    (48, 0, 0),
    (48, -1, 50),
    (24, 1, 50),
    (24, -1, 100),
]


@pytest.mark.parametrize(("hours", "seconds", "percent"), BOUNDARIES)
async def test_fee_at_each_tier_boundary_the_quote_matches_the_cancel_and_the_ledger_explains_it(
    hours: int,
    seconds: int,
    percent: int,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner(vehicles=luxury_vehicles("56.05"))
    client_id, key = await make_client(balance="100.00")
    booking = await book(http, key, pickup_in(5))
    reservation_no = booking["reservation_no"]
    assert booking["status"] == "PENDING_APPROVAL"
    pickup_at = (await row_of(db, reservation_no))["pickup_at"]
    # ``seconds`` before (+) or after (-) the boundary; at 0, a little before it (the server reads
    # its clock a few milliseconds after this line)
    move_clock_to(clock, pickup_at - timedelta(hours=hours) + seconds * -SECOND - timedelta(milliseconds=300))
    total = Decimal("56.05")
    fee = (total * percent / 100).quantize(Decimal("0.01"), rounding="ROUND_HALF_UP")
    refund = total - fee
    quoted = await quote(http, key, reservation_no)
    next_tier = {0: 48, 50: 24, 100: None}[percent]
    assert quoted == {
        "reservation_no": reservation_no,
        "cancelable": True,
        "fee": f"{fee:.2f}",
        "refund": f"{refund:.2f}",
        "currency": "EUR",
        "valid_until": None
        if next_tier is None
        else (pickup_at - timedelta(hours=next_tier)).astimezone(LONDON).isoformat(),
    }
    await cancel(http, key, reservation_no)
    row = await row_of(db, reservation_no)
    assert (row["cancellation_fee"], row["cancellation_refund"], row["cancelled_by"]) == (fee, refund, "client")
    assert row["cancellation_fee"] + row["cancellation_refund"] == row["total"]
    shown = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert shown["status"] == "CANCELLED"
    assert shown["cancellation"] == {
        "fee": f"{fee:.2f}",
        "refund": f"{refund:.2f}",
        "cancelled_at": row["cancelled_at"].isoformat(),
        "by": "client",
    }
    ledger = await ledger_of(db, reservation_no)
    assert ledger == [("debit_booking", -total)] + ([("credit_refund", refund)] if refund else [])
    if fee and refund:
        async with db.read() as conn:
            note = (
                await conn.execute(
                    select(ledger_entries.c.note).where(
                        ledger_entries.c.booking_id == row["id"], ledger_entries.c.kind == "credit_refund"
                    )
                )
            ).scalar_one()
        assert f"cancellation fee {fee:.2f} kept of 56.05 (refund {refund:.2f})" in note
    assert client_id  # the money invariants (conftest) check balance == ledger and fee + refund = total


async def test_the_tier_is_decided_in_real_hours_across_a_dst_change(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    """London moves to BST on 2027-03-28. Pickup 14:00 local that day is 13:00 UTC; 24 real hours
    before it is 13:00 UTC = 13:00 GMT on the 27th (not 14:00 local)."""
    vehicles = default_vehicles("40.00")
    for vehicle in vehicles:
        vehicle["cancellation_policy"] = [
            {"hours_before_pickup": 24, "fee_percent": 0},
            {"hours_before_pickup": 0, "fee_percent": 100},
        ]
    await make_partner(vehicles=vehicles)
    _, key = await make_client()
    move_clock_to(clock, datetime(2027, 3, 20, 9, 0, tzinfo=UTC))
    found = await search(http, key, "2027-03-28 14:00")
    assert found["vehicles"][0]["cancellation_policy"]["free_until"] == "2027-03-27T13:00:00+00:00"
    created = await http.post(BOOKING, json=booking_body(found["search_id"], "1"), headers=bearer(key))
    reservation_no = created.json()["booking"]["reservation_no"]
    assert created.json()["booking"]["pickup_datetime"] == "2027-03-28T14:00:00+01:00"
    boundary = datetime(2027, 3, 27, 13, 0, tzinfo=UTC)
    move_clock_to(clock, boundary - SECOND)
    assert (await quote(http, key, reservation_no))["fee"] == "0.00"
    move_clock_to(clock, boundary + SECOND)
    assert (await quote(http, key, reservation_no))["fee"] == "40.00"
    await cancel(http, key, reservation_no)
    row = await row_of(db, reservation_no)
    assert (row["cancellation_fee"], row["cancellation_refund"]) == (Decimal("40.00"), Decimal("0.00"))
    assert await ledger_of(db, reservation_no) == [("debit_booking", Decimal("-40.00"))]  # nothing refunded


async def test_a_partner_cancellation_refunds_in_full_even_in_the_last_tier(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, _, partner_key = await make_partner(vehicles=luxury_vehicles("56.05"))
    _, key = await make_client()
    booking = await book(http, key, pickup_in(5))
    reservation_no = booking["reservation_no"]
    pickup_at = (await row_of(db, reservation_no))["pickup_at"]
    move_clock_to(clock, pickup_at - timedelta(hours=2))
    assert (await quote(http, key, reservation_no))["fee"] == "56.05"
    response = await http.put(
        REVERSE_UPDATE,
        headers=bearer(partner_key),
        json={"reservation_no": reservation_no, "status": "CANCELLED", "cancel_reason": "Driver unavailable"},
    )
    assert response.status_code == 200, response.text
    shown = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert shown["status"] == "CANCELLED"
    assert shown["cancellation"]["by"] == "partner"
    assert (shown["cancellation"]["fee"], shown["cancellation"]["refund"]) == ("0.00", "56.05")
    assert await ledger_of(db, reservation_no) == [
        ("debit_booking", Decimal("-56.05")),
        ("credit_refund", Decimal("56.05")),
    ]
    after = await quote(http, key, reservation_no)
    assert (after["cancelable"], after["fee"], after["refund"], after["valid_until"]) == (False, None, None, None)


async def test_declined_and_failed_bookings_are_refunded_in_full(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    declining, _, _ = await make_partner(vehicles=luxury_vehicles("56.05"), create_status="DECLINED")
    _, key = await make_client()
    declined = await book(http, key, pickup_in(1))
    assert declined["status"] == "DECLINED" and declined["cancellation"] is None
    assert await ledger_of(db, declined["reservation_no"]) == [
        ("debit_booking", Decimal("-56.05")),
        ("credit_refund", Decimal("56.05")),
    ]
    declining.create_status = "PENDING"
    found = await search(http, key, pickup_in(1))
    declining.mode, declining.status_code = "status", 503  # the create cannot be delivered
    created = await http.post(BOOKING, json=booking_body(found["search_id"], "1"), headers=bearer(key))
    failing = created.json()["booking"]
    assert failing["status"] == "PENDING"
    pickup_at = (await row_of(db, failing["reservation_no"]))["pickup_at"]
    move_clock_to(clock, pickup_at - timedelta(minutes=30))  # past the delivery deadline (1 h before pickup)
    await expire_deliveries(service.app.state.services)
    row = await row_of(db, failing["reservation_no"])
    assert row["status"] == "FAILED" and row["cancelled_at"] is None
    assert await ledger_of(db, failing["reservation_no"]) == [
        ("debit_booking", Decimal("-56.05")),
        ("credit_refund", Decimal("56.05")),
    ]


async def test_quote_codes(http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory) -> None:
    await make_partner(vehicles=luxury_vehicles())
    _, key = await make_client()
    _, other_key = await make_client()
    booking = await book(http, key, pickup_in(5))
    for params, code in (
        ({}, 1200),
        ({"reservation_no": ""}, 1200),
        ({"reservation_no": "TB-NOSUCH0000"}, 1201),
        ({"reservation_no": "x" * 300}, 1201),
    ):
        response = await http.get(QUOTE, params=params, headers=bearer(key))
        assert (response.status_code, response.json()["code"]) == (422, code), params
    foreign = await http.get(QUOTE, params={"reservation_no": booking["reservation_no"]}, headers=bearer(other_key))
    assert (foreign.status_code, foreign.json()["code"]) == (422, 1201)
    free = await quote(http, key, booking["reservation_no"])
    assert (free["cancelable"], free["fee"], free["refund"]) == (True, "0.00", "56.05")
    unauthenticated = await http.get(QUOTE, params={"reservation_no": booking["reservation_no"]})
    assert unauthenticated.status_code == 401


async def test_an_operator_cancellation_refunds_in_full_and_is_recorded_as_the_operators(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    from transfers.bookings import operator_actions

    await make_partner(vehicles=luxury_vehicles("56.05"))
    _, key = await make_client()
    booking = await book(http, key, pickup_in(5))
    reservation_no = booking["reservation_no"]
    pickup_at = (await row_of(db, reservation_no))["pickup_at"]
    move_clock_to(clock, pickup_at - timedelta(hours=3))  # a client would pay 100 % now
    await operator_actions.cancel(
        service.app.state.services,
        reservation_no,
        "Flight cancelled by the airline",
        actor="operator:support@example.com",
    )
    shown = (await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))).json()
    assert shown["status"] == "CANCELLED"
    assert {k: shown["cancellation"][k] for k in ("fee", "refund", "by")} == {
        "fee": "0.00",
        "refund": "56.05",
        "by": "operator",
    }
    assert await ledger_of(db, reservation_no) == [
        ("debit_booking", Decimal("-56.05")),
        ("credit_refund", Decimal("56.05")),
    ]
