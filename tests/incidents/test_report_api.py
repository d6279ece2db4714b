"""The client's incident calls over real HTTP (docs/rules/incidents.md#report): the exact shape, the 72 h
window on the injected clock, one per type, and every bad input answered with its code, nothing written."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import row_of
from tests.incidents.helpers import INCIDENTS, PRICE, approved_booking, at, counts, report
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


async def test_a_late_driver_is_reported_listed_and_left_open(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(minutes=40))
    answer = await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "  40 minutes late  "})
    assert answer.status_code == 201, answer.text
    incident = answer.json()
    assert set(incident) == {
        "id", "reservation_no", "type", "status", "reported_by", "description", "created_at", "resolution",
    }  # fmt: skip
    assert incident["id"].startswith("inc_") and len(incident["id"]) == 36
    assert (incident["reservation_no"], incident["type"], incident["status"]) == (reservation_no, "DRIVER_LATE", "OPEN")
    assert (incident["reported_by"], incident["description"], incident["resolution"]) == (
        "client",
        "40 minutes late",
        None,
    )
    listed = await http.get(INCIDENTS, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert listed.status_code == 200
    assert listed.json() == {"data": [incident]}
    assert (await row_of(db, reservation_no))["status"] == "APPROVED"


async def test_one_incident_per_type_and_the_second_writes_nothing(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=2))
    first = await report(http, key, reservation_no, {"type": "WRONG_VEHICLE", "description": "a small car"})
    assert first.status_code == 201
    before = await counts(db, row["id"], reservation_no)
    again = await report(http, key, reservation_no, {"type": "WRONG_VEHICLE", "description": "still a small car"})
    assert again.status_code == 409
    assert again.json()["code"] == "INCIDENT_EXISTS"
    assert await counts(db, row["id"], reservation_no) == before
    other = await report(http, key, reservation_no, {"type": "OTHER", "description": "ünïcødé ✈ and more"})
    assert other.status_code == 201 and other.json()["description"] == "ünïcødé ✈ and more"


async def test_two_reports_of_one_type_at_once_record_one(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    import asyncio

    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    body = {"type": "DRIVER_LATE", "description": "late"}
    answers = await asyncio.gather(*(report(http, key, reservation_no, body) for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [201, 409, 409, 409], [a.text for a in answers]
    assert (await counts(db, row["id"], reservation_no))["incidents"] == 1


@pytest.mark.parametrize(
    ("shift", "allowed"),
    [
        (timedelta(seconds=-1), False),
        (timedelta(), True),
        (timedelta(hours=72, seconds=-2), True),
        (timedelta(hours=72, seconds=1), False),
        (timedelta(days=30), False),
    ],
    # The shifted clock keeps running: "at pickup" is a few milliseconds after it, hence the 2 s margin at 72 h.
    ids=["before-pickup", "at-pickup", "just-before-72h", "past-72h", "a-month-later"],
)
async def test_the_window_is_from_pickup_until_72_hours_after(
    shift: timedelta,
    allowed: bool,
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], shift)
    before = await counts(db, row["id"], reservation_no)
    answer = await report(http, key, reservation_no, {"type": "DRIVER_LATE", "description": "late"})
    if allowed:
        assert answer.status_code == 201, answer.text
    else:
        assert answer.status_code == 422, answer.text
        assert answer.json()["code"] == "INCIDENT_NOT_ALLOWED"
        assert await counts(db, row["id"], reservation_no) == before


BAD_BODIES = [
    ({"type": "CUSTOMER_NO_SHOW", "description": "x"}, "INVALID_INCIDENT"),
    ({"type": "SPACESHIP", "description": "x"}, "INVALID_INCIDENT"),
    ({"type": "driver_late", "description": "x"}, "INVALID_INCIDENT"),
    ({"type": None, "description": "x"}, "INVALID_INCIDENT"),
    ({"type": 3, "description": "x"}, "INVALID_INCIDENT"),
    ({"type": ["DRIVER_LATE"], "description": "x"}, "INVALID_INCIDENT"),
    ({"description": "x"}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE"}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": ""}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": "   \x00 "}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": "x" * 2001}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": True}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": 12}, "INVALID_INCIDENT"),
    ({"type": "DRIVER_LATE", "description": "x", "refund": "10.00"}, "INVALID_INCIDENT"),
    ([{"type": "DRIVER_LATE", "description": "x"}], "MALFORMED_JSON"),
    ("DRIVER_LATE", "MALFORMED_JSON"),
]


async def test_bad_input_answers_its_code_and_writes_nothing(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    before = await counts(db, row["id"], reservation_no)
    for body, code in BAD_BODIES:
        answer = await report(http, key, reservation_no, body)
        assert answer.status_code in (400, 422), (body, answer.text)
        assert answer.json()["code"] == code, (body, answer.text)
    raw = await http.post(
        INCIDENTS, params={"reservation_no": reservation_no}, content=b"{not json", headers=bearer(key)
    )
    assert raw.status_code == 400 and raw.json()["code"] == "MALFORMED_JSON"
    assert (await report(http, key, reservation_no, {"type": "OTHER", "description": "x" * 2000})).status_code == 201
    assert (await counts(db, row["id"], reservation_no))["incidents"] == before["incidents"] + 1


async def test_the_reservation_is_checked_as_on_cancel(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    _, stranger = await make_client()
    at(clock, row["pickup_at"], timedelta(hours=1))
    body = {"type": "DRIVER_LATE", "description": "late"}
    for params, code in [({}, 1200), ({"reservation_no": ""}, 1200), ({"reservation_no": "TB-NOPE"}, 1201)]:
        answer = await http.post(INCIDENTS, params=params, json=body, headers=bearer(key))
        assert (answer.status_code, answer.json()["code"]) == (422, code), answer.text
        listed = await http.get(INCIDENTS, params=params, headers=bearer(key))
        assert (listed.status_code, listed.json()["code"]) == (422, code), listed.text
    foreign = await report(http, stranger, reservation_no, body)
    assert (foreign.status_code, foreign.json()["code"]) == (422, 1201)
    foreign_list = await http.get(INCIDENTS, params={"reservation_no": reservation_no}, headers=bearer(stranger))
    assert (foreign_list.status_code, foreign_list.json()["code"]) == (422, 1201)
    assert (await counts(db, row["id"], reservation_no))["incidents"] == 0
    unauthenticated = await http.post(INCIDENTS, params={"reservation_no": reservation_no}, json=body)
    assert unauthenticated.status_code == 401


async def test_a_cancelled_booking_takes_no_incident(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    cancelled = await http.delete(
        "/api/v1/booking-api/booking",
        params={"reservation_no": reservation_no, "cancellation_id": "1"},
        headers=bearer(key),
    )
    assert cancelled.status_code == 200, cancelled.text
    at(clock, row["pickup_at"], timedelta(hours=1))
    answer = await report(http, key, reservation_no, {"type": "DRIVER_NO_SHOW", "description": "nobody came"})
    assert (answer.status_code, answer.json()["code"]) == (422, "INCIDENT_NOT_ALLOWED")
    assert Decimal(str((await row_of(db, reservation_no))["total"])) == PRICE


async def test_hostile_input_is_never_a_500(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    key, reservation_no, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    body = {"type": "OTHER", "description": "x"}
    for number in ["TB-\x00ABC", "ТБ-юникод", "x" * 5000, reservation_no + "\x00", " " + reservation_no]:
        answer = await http.post(INCIDENTS, params={"reservation_no": number}, json=body, headers=bearer(key))
        assert answer.status_code == 422 and answer.json()["code"] in (1200, 1201), (number[:20], answer.text)
    raw = [
        b'{"type": "OTHER", "description": "\\ud800"}',  # a lone surrogate
        b'{"type": "OTHER", "description": "a\\u0000b"}',  # a NUL inside
        b'{"type": "OTHER", "description": "' + b"y" * 200_000 + b'"}',
        b'{"type": "OTHER", "description": "x", "type": "DRIVER_NO_SHOW"}',
        b"null",
        b"[]",
        b'{"type": {"$ne": 1}, "description": "x"}',
    ]
    for content in raw:
        answer = await http.post(
            INCIDENTS,
            params={"reservation_no": reservation_no},
            content=content,
            headers={**bearer(key), "Content-Type": "application/json"},
        )
        assert answer.status_code < 500, (content[:60], answer.text)
    listed = await http.get(INCIDENTS, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert listed.status_code == 200
    for incident in listed.json()["data"]:
        assert "\x00" not in incident["description"] and len(incident["description"]) <= 2000
