"""The reverse API's driver events and positions over real HTTP (docs/rules/ride.md): what is recorded,
what it does to the booking, and every rule's refusal (a 422 naming it, nothing written)."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.ride.conftest import EVENTS, POSITIONS, Ride, approved_ride
from transfers.api.responses import booking_not_found_body
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, client_events, ride_events, ride_positions

SUCCESS = {"status": "Success", "message": "Event recorded."}
REPEAT = {"status": "Success", "message": "Event already recorded."}


async def rows_of(db: Database, reservation_no: str) -> tuple[list[str], int, list[str]]:
    """The booking's recorded event types, its position count and its client events' types (by sequence)."""
    async with db.read() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
        types = (
            await conn.execute(
                select(ride_events.c.type).where(ride_events.c.booking_id == booking_id).order_by(ride_events.c.id)
            )
        ).scalars()
        count = (await conn.execute(select(func.count()).where(ride_positions.c.booking_id == booking_id))).scalar_one()
        events = (
            await conn.execute(
                select(client_events.c.type)
                .where(client_events.c.booking_id == booking_id)
                .order_by(client_events.c.sequence)
            )
        ).scalars()
        return list(types), int(count), list(events)


async def test_a_whole_ride_moves_the_stage_and_completes_at_the_drop_off(ride: Ride, db: Database) -> None:
    first = (await ride.booking())["ride"]
    assert re.fullmatch(r"https?://[^/]+/t/[A-Za-z0-9_-]{22}", first.pop("tracking_url"))  # the traveller's page
    assert first == {"stage": "NOT_STARTED", "events": [], "position": None, "rating_url": None}
    answer = await ride.event("DRIVER_DEPARTED_TO_PICKUP", lat=51.5, lng=-0.2)
    assert (answer.status_code, answer.json()) == (200, SUCCESS)
    accepted = await ride.positions(
        ride.position(ago=3, heading=270, speed_kmh=42.5), ride.position(51.48, -0.44, ago=1)
    )
    assert accepted.json() == {"status": "Success", "message": "Positions recorded.", "accepted": 2}
    shown = (await ride.booking())["ride"]
    assert shown["stage"] == "EN_ROUTE_TO_PICKUP"
    assert shown["position"]["lat"] == 51.48 and shown["position"]["heading"] is None
    # A late batch with an older position keeps the newer one shown.
    await ride.positions(ride.position(50.0, 1.0, ago=30))
    assert (await ride.booking())["ride"]["position"]["lat"] == 51.48

    ride.at(timedelta(minutes=2))
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).json() == SUCCESS
    assert (await ride.booking())["ride"]["stage"] == "AT_PICKUP"
    ride.at(timedelta(minutes=20))
    assert (await ride.event("DRIVER_DEPARTED_TO_DROPOFF")).json() == SUCCESS
    assert (await ride.booking())["ride"]["stage"] == "ON_BOARD"
    ride.at(timedelta(minutes=70))
    assert (await ride.event("DRIVER_ARRIVED_AT_DROPOFF", lat=51.5074, lng=-0.1278)).json() == SUCCESS

    booking = await ride.booking()
    assert booking["status"] == "COMPLETED"
    assert booking["ride"]["stage"] == "DROPPED_OFF"
    assert booking["ride"]["position"] is None  # the ride is over
    assert [e["type"] for e in booking["ride"]["events"]] == [
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
        "DRIVER_ARRIVED_AT_DROPOFF",
    ]
    assert booking["ride"]["events"][0]["lat"] == 51.5 and booking["ride"]["events"][1]["lat"] is None
    types, positions, events = await rows_of(db, ride.reservation_no)
    assert len(types) == 4 and positions == 3
    # One driver event per recorded event, and the completion after the drop-off's event.
    assert events[-5:] == [
        "booking.driver_event",
        "booking.driver_event",
        "booking.driver_event",
        "booking.driver_event",
        "booking.status_changed",
    ]
    # Positions are accepted while the ride is on only.
    late = await ride.positions(ride.position())
    assert late.status_code == 422 and "while the ride is on" in late.json()["message"]


async def test_events_are_ordered_by_occurred_at_and_a_late_one_is_evidence(ride: Ride) -> None:
    now = ride.clock.now()
    assert (await ride.event("DRIVER_DEPARTED_TO_DROPOFF", now - timedelta(minutes=1))).json() == SUCCESS
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP", now - timedelta(minutes=9))).json() == SUCCESS
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP", now - timedelta(minutes=30))).json() == SUCCESS
    shown = (await ride.booking())["ride"]
    assert shown["stage"] == "ON_BOARD"
    assert [e["type"] for e in shown["events"]] == [
        "DRIVER_DEPARTED_TO_PICKUP",
        "DRIVER_ARRIVED_AT_PICKUP",
        "DRIVER_DEPARTED_TO_DROPOFF",
    ]


async def test_a_repeat_answers_success_and_changes_nothing(ride: Ride, db: Database) -> None:
    first = ride.clock.now() - timedelta(minutes=2)
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP", first)).json() == SUCCESS
    before = await ride.booking()
    again = await ride.event("DRIVER_DEPARTED_TO_PICKUP", first + timedelta(minutes=1), lat=1.0, lng=2.0)
    assert (again.status_code, again.json()) == (200, REPEAT)
    assert await ride.booking() == before
    types, _, events = await rows_of(db, ride.reservation_no)
    assert types == ["DRIVER_DEPARTED_TO_PICKUP"] and events.count("booking.driver_event") == 1


async def test_two_identical_events_at_once_are_recorded_once(ride: Ride, db: Database) -> None:
    when = ride.clock.now() - timedelta(seconds=30)
    answers = await asyncio.gather(*(ride.event("DRIVER_ARRIVED_AT_PICKUP", when) for _ in range(6)))
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert sorted(a.json()["message"] for a in answers) == ["Event already recorded."] * 5 + ["Event recorded."]
    types, _, events = await rows_of(db, ride.reservation_no)
    assert types == ["DRIVER_ARRIVED_AT_PICKUP"] and events.count("booking.driver_event") == 1


async def test_the_database_refuses_a_second_row_of_a_type(ride: Ride, db: Database) -> None:
    """The UNIQUE constraint itself, below the use case's own check: a second insert writes nothing."""
    from transfers.bookings.ride_field import Milestone, RideEventType
    from transfers.ride import repository as ride_repo

    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).json() == SUCCESS
    async with db.write() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == ride.reservation_no))
        ).scalar_one()
        now = ride.clock.now()
        event = Milestone(RideEventType.DRIVER_DEPARTED_TO_PICKUP, now, None, None, now)
        assert await ride_repo.insert_event(conn, booking_id, event, actor="test") is False
    assert (await rows_of(db, ride.reservation_no))[0] == ["DRIVER_DEPARTED_TO_PICKUP"]


async def test_a_no_show_completes_with_its_stage_and_refuses_the_drop_off(ride: Ride, db: Database) -> None:
    ride.at(timedelta(minutes=-5))
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).json() == SUCCESS
    ride.at(timedelta(minutes=61))  # an airport pickup: the free wait is 60 minutes
    answer = await ride.event("CUSTOMER_NO_SHOW", ride.pickup_at + timedelta(minutes=60))
    assert answer.json() == SUCCESS
    booking = await ride.booking()
    assert booking["status"] == "COMPLETED" and booking["ride"]["stage"] == "CUSTOMER_NO_SHOW"
    for kind in ("DRIVER_DEPARTED_TO_DROPOFF", "DRIVER_ARRIVED_AT_DROPOFF"):
        refused = await ride.event(kind)
        assert refused.status_code == 422
        assert refused.json() == {"status": "Error", "message": f"{kind} is refused after a CUSTOMER_NO_SHOW"}
    assert (await ride.event("CUSTOMER_NO_SHOW")).json() == REPEAT
    assert (await ride.booking())["ride"]["stage"] == "CUSTOMER_NO_SHOW"
    types, _, _ = await rows_of(db, ride.reservation_no)
    assert types == ["DRIVER_ARRIVED_AT_PICKUP", "CUSTOMER_NO_SHOW"]


async def test_a_no_show_before_the_free_wait_ends_is_refused(ride: Ride, db: Database) -> None:
    ride.at(timedelta(minutes=-5))
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).json() == SUCCESS
    ride.at(timedelta(minutes=59, seconds=30))
    refused = await ride.event("CUSTOMER_NO_SHOW")
    assert refused.status_code == 422
    message = refused.json()["message"]
    assert message.startswith("CUSTOMER_NO_SHOW: occurred_at must be at or after free_wait_until")
    assert (ride.pickup_at + timedelta(minutes=60)).isoformat() in message
    assert (await ride.booking())["status"] == "APPROVED"
    assert (await rows_of(db, ride.reservation_no))[0] == ["DRIVER_ARRIVED_AT_PICKUP"]


async def test_a_no_show_at_a_street_pickup_waits_15_minutes(
    http: httpx.AsyncClient, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    ride = await approved_ride(
        http,
        clock,
        make_client,
        make_partner,
        iata="LGW",
        pickup={"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"},
    )
    ride.at(timedelta(minutes=-1))
    assert (await ride.event("DRIVER_ARRIVED_AT_PICKUP")).json() == SUCCESS
    ride.at(timedelta(minutes=16))
    assert (await ride.event("CUSTOMER_NO_SHOW", ride.pickup_at + timedelta(minutes=14))).status_code == 422
    assert (await ride.event("CUSTOMER_NO_SHOW", ride.pickup_at + timedelta(minutes=15))).json() == SUCCESS


@pytest.mark.parametrize(
    ("recorded", "message"),
    [
        ((), "CUSTOMER_NO_SHOW needs a recorded DRIVER_ARRIVED_AT_PICKUP"),
        (
            ("DRIVER_ARRIVED_AT_PICKUP", "DRIVER_DEPARTED_TO_DROPOFF"),
            "CUSTOMER_NO_SHOW is refused once the passenger is on board or dropped off",
        ),
    ],
)
async def test_a_no_show_needs_an_arrival_and_no_passenger_on_board(
    ride: Ride, recorded: tuple[str, ...], message: str
) -> None:
    for kind in recorded:
        assert (await ride.event(kind)).json() == SUCCESS
    ride.at(timedelta(hours=2))
    refused = await ride.event("CUSTOMER_NO_SHOW")
    assert (refused.status_code, refused.json()) == (422, {"status": "Error", "message": message})


async def test_late_events_are_accepted_for_24_hours_after_completion(ride: Ride) -> None:
    assert (await ride.event("DRIVER_ARRIVED_AT_DROPOFF")).json() == SUCCESS  # order is not enforced
    assert (await ride.booking())["status"] == "COMPLETED"
    ride.at(timedelta(hours=23))
    late = await ride.event("DRIVER_DEPARTED_TO_PICKUP", ride.pickup_at - timedelta(minutes=40))
    assert late.json() == SUCCESS
    ride.at(timedelta(hours=25))
    too_late = await ride.event("DRIVER_ARRIVED_AT_PICKUP", ride.pickup_at - timedelta(minutes=10))
    assert too_late.status_code == 422
    assert "until 24 h after one became COMPLETED" in too_late.json()["message"]
    shown = (await ride.booking())["ride"]
    assert [e["type"] for e in shown["events"]] == ["DRIVER_DEPARTED_TO_PICKUP", "DRIVER_ARRIVED_AT_DROPOFF"]


def _bad_event(ride: Ride) -> list[tuple[dict[str, Any], str]]:
    now = ride.clock.now()
    base = {"reservation_no": ride.reservation_no, "type": "DRIVER_DEPARTED_TO_PICKUP", "occurred_at": now.isoformat()}
    return [
        ({**base, "lat": 91, "lng": 0}, "lat: must be a number from -90 to 90"),
        ({**base, "lat": -90.5, "lng": 0}, "lat: must be a number from -90 to 90"),
        ({**base, "lat": 0, "lng": 180.01}, "lng: must be a number from -180 to 180"),
        ({**base, "lat": True, "lng": 0}, "lat: must be a number from -90 to 90"),
        ({**base, "lat": "51.5", "lng": "0.1"}, "lat: must be a number from -90 to 90"),
        ({**base, "lat": 51.5}, "lat, lng: both or neither"),
        ({**base, "lng": 0.1, "lat": None}, "lat, lng: both or neither"),
        (
            {**base, "occurred_at": (now + timedelta(minutes=6)).isoformat()},
            "occurred_at: must be at most 5 minutes ahead of the service's clock",
        ),
        (
            {**base, "occurred_at": now.replace(tzinfo=None).isoformat()},
            "occurred_at: must carry an offset (Z or +HH:MM)",
        ),
        (
            {**base, "occurred_at": "yesterday"},
            "occurred_at: must be an ISO 8601 time with an offset, e.g. 2026-05-01T09:30:00+01:00",
        ),
        (
            {**base, "occurred_at": 1700000000},
            "occurred_at: must be an ISO 8601 time with an offset, e.g. 2026-05-01T09:30:00+01:00",
        ),
        (
            {**base, "occurred_at": (ride.pickup_at - timedelta(hours=24, seconds=1)).isoformat()},
            "occurred_at: must not be earlier than 24 h before the pickup",
        ),
        (
            {**base, "type": "DRIVER_TELEPORTED"},
            "type: must be one of DRIVER_DEPARTED_TO_PICKUP, DRIVER_ARRIVED_AT_PICKUP, DRIVER_DEPARTED_TO_DROPOFF, "
            "DRIVER_ARRIVED_AT_DROPOFF, CUSTOMER_NO_SHOW",
        ),
        ({**base, "type": None}, "type: must be one of"),
        ({**base, "type": "driver_departed_to_pickup"}, "type: must be one of"),
        ({**base, "reservation_no": 12}, "reservation_no: must be a non-empty string"),
        ({**base, "reservation_no": "ü" * 10_000}, "reservation_no: must be a non-empty string"),
    ]


async def test_each_bad_event_is_refused_naming_its_rule(ride: Ride, db: Database) -> None:
    for body, message in _bad_event(ride):
        answer = await ride.http.post(EVENTS, json=body, headers=bearer(ride.partner_key))
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["status"] == "Error" and answer.json()["message"].startswith(message), (body, answer.text)
    types, _, _ = await rows_of(db, ride.reservation_no)
    assert types == []
    assert (await ride.booking())["ride"]["stage"] == "NOT_STARTED"


def _bad_positions(ride: Ride) -> list[tuple[Any, str]]:
    good = ride.position()
    return [
        ([], "positions: must be a list of 1 to 100 positions"),
        ([good] * 101, "positions: must be a list of 1 to 100 positions"),
        ("many", "positions: must be a list of 1 to 100 positions"),
        ([good, {**good, "lat": 90.1}], "positions[1].lat: must be a number from -90 to 90"),
        ([{**good, "lng": -181}], "positions[0].lng: must be a number from -180 to 180"),
        ([{"lat": 1.0, "at": good["at"]}], "positions[0].lat, positions[0].lng: both or neither"),
        ([{"at": good["at"]}], "positions[0]: lat and lng are required"),
        ([good, 7], "positions[1]: must be an object with lat, lng and at"),
        ([{**good, "at": "2026-01-01T10:00:00"}], "positions[0].at: must carry an offset"),
        ([{**good, "at": None}], "positions[0].at: must be an ISO 8601 time"),
        (
            [{**good, "at": (ride.clock.now() + timedelta(minutes=10)).isoformat()}],
            "positions[0].at: must be at most 5 minutes ahead",
        ),
        ([{**good, "heading": 360}], "positions[0].heading: must be a number from 0 to 359, or null"),
        ([{**good, "heading": -1}], "positions[0].heading: must be a number from 0 to 359, or null"),
        ([{**good, "heading": False}], "positions[0].heading: must be a number from 0 to 359, or null"),
        ([{**good, "speed_kmh": -0.1}], "positions[0].speed_kmh: must be a number of at least 0, or null"),
        ([{**good, "speed_kmh": "fast"}], "positions[0].speed_kmh: must be a number of at least 0, or null"),
    ]


async def test_each_bad_position_batch_is_refused_whole(ride: Ride, db: Database) -> None:
    for items, message in _bad_positions(ride):
        body = {"reservation_no": ride.reservation_no, "positions": items}
        answer = await ride.http.post(POSITIONS, json=body, headers=bearer(ride.partner_key))
        assert answer.status_code == 422, (message, answer.text)
        assert answer.json()["message"].startswith(message), answer.text
    _, count, _ = await rows_of(db, ride.reservation_no)
    assert count == 0
    assert (await ride.booking())["ride"]["position"] is None


async def test_a_full_batch_of_100_is_accepted(ride: Ride, db: Database) -> None:
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).json() == SUCCESS
    items = [ride.position(51 + i / 1000, -0.4, ago=100 - i, heading=i % 360, speed_kmh=i) for i in range(100)]
    answer = await ride.positions(*items)
    assert answer.json()["accepted"] == 100
    shown = (await ride.booking())["ride"]["position"]
    assert shown["lat"] == pytest.approx(51.099) and shown["heading"] == 99 and shown["speed_kmh"] == 99.0
    assert (await rows_of(db, ride.reservation_no))[1] == 100


async def test_positions_are_accepted_from_two_hours_before_pickup(ride: Ride) -> None:
    ride.at(-timedelta(hours=2, seconds=10))
    early = await ride.positions(ride.position())
    assert (early.status_code, early.json()) == (
        422,
        {"status": "Error", "message": "positions are accepted from 2 h before the pickup"},
    )
    ride.at(-timedelta(hours=2))
    assert (await ride.positions(ride.position())).json()["accepted"] == 1
    # Stored, but not shown before the driver departs: the ride is not on yet.
    assert (await ride.booking())["ride"]["position"] is None


async def test_another_partners_booking_answers_the_404_body(
    ride: Ride, make_partner: PartnerFactory, db: Database
) -> None:
    _, _, other_key = await make_partner(airports=("MAN",))
    now = ride.clock.now().isoformat()
    for path, body in (
        (EVENTS, {"reservation_no": ride.reservation_no, "type": "DRIVER_DEPARTED_TO_PICKUP", "occurred_at": now}),
        (POSITIONS, {"reservation_no": ride.reservation_no, "positions": [ride.position()]}),
        (EVENTS, {"reservation_no": "TB-NOSUCH00", "type": "DRIVER_DEPARTED_TO_PICKUP", "occurred_at": now}),
    ):
        answer = await ride.http.post(path, json=body, headers=bearer(other_key))
        assert (answer.status_code, answer.json()) == (404, booking_not_found_body())
    assert await rows_of(db, ride.reservation_no) == ([], 0, await _client_events(db, ride))


async def _client_events(db: Database, ride: Ride) -> list[str]:
    return (await rows_of(db, ride.reservation_no))[2]


async def test_a_client_key_or_none_is_401(ride: Ride) -> None:
    body = {"reservation_no": ride.reservation_no, "type": "DRIVER_DEPARTED_TO_PICKUP", "occurred_at": "x"}
    for headers in (bearer(ride.client_key), {}):
        for path in (EVENTS, POSITIONS):
            answer = await ride.http.post(path, json=body, headers=headers)
            assert answer.status_code == 401, answer.text
            assert answer.json()["code"] == "UNAUTHENTICATED"


async def test_a_huge_body_is_413_and_broken_json_400(ride: Ride) -> None:
    huge = b'{"reservation_no": "' + b"x" * 2_000_000 + b'"}'
    headers = {**bearer(ride.partner_key), "Content-Type": "application/json"}
    for path in (EVENTS, POSITIONS):
        assert (await ride.http.post(path, content=huge, headers=headers)).status_code == 413
        broken = await ride.http.post(path, content=b'{"reservation_no": ', headers=headers)
        assert broken.status_code == 400 and broken.json()["code"] == "MALFORMED_JSON"
        listed = await ride.http.post(path, content=b"[1, 2]", headers=headers)
        assert listed.status_code == 400


async def test_events_for_a_booking_not_approved_are_refused(
    http: httpx.AsyncClient, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    ride = await approved_ride(http, clock, make_client, make_partner)
    cancelled = await http.put(
        "/api/v1/reverse/booking/update",
        json={"reservation_no": ride.reservation_no, "status": "CANCELLED", "cancel_reason": "no car"},
        headers=bearer(ride.partner_key),
    )
    assert cancelled.status_code == 200
    ride.at(-timedelta(minutes=30))
    refused = await ride.event("DRIVER_DEPARTED_TO_PICKUP")
    assert (refused.status_code, refused.json()) == (
        422,
        {"status": "Error", "message": "events are accepted for APPROVED bookings only; this booking is CANCELLED"},
    )
    assert (await ride.positions(ride.position())).status_code == 422


async def test_positions_are_deleted_30_days_after_the_ride_and_events_kept(
    ride: Ride, db: Database, service: Any
) -> None:
    from transfers.jobs import scheduled

    svc = service.app.state.services
    assert (await ride.event("DRIVER_DEPARTED_TO_PICKUP")).json() == SUCCESS
    assert (await ride.positions(ride.position(ago=2), ride.position(ago=1))).json()["accepted"] == 2
    assert (await ride.event("DRIVER_ARRIVED_AT_DROPOFF")).json() == SUCCESS
    ride.at(timedelta(days=30, hours=11))
    await scheduled.prune_ride_positions(svc)
    assert (await rows_of(db, ride.reservation_no))[1] == 2  # not yet 30 days after the ride
    ride.at(timedelta(days=30, hours=12, minutes=1))
    assert await scheduled.prune_ride_positions(svc) >= 2
    types, count, _ = await rows_of(db, ride.reservation_no)
    assert count == 0 and types == ["DRIVER_DEPARTED_TO_PICKUP", "DRIVER_ARRIVED_AT_DROPOFF"]
    assert [e["type"] for e in (await ride.booking())["ride"]["events"]] == types
