"""Every create-booking code (docs/rules/errors.md#create-codes, docs/rules/accounts.md#payment,
docs/rules/booking.md) with ugly inputs, the order of the
checks, that a refused request writes nothing, and what a successful one charges.

One test partner serves ORY for the whole module (no other module uses ORY), and one search of
one wallet client is reused by every table case: refused requests never consume it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import FakePartner
from tests.helpers import (
    ONE_LINE_ONLY,
    REFUSED_CHARACTERS,
    booking_body,
    future_local,
    ledger_of,
    row_of,
    search_body,
    with_path,
)
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.tables import bookings, idempotency_keys, ledger_entries, outbox, wallets
from transfers.errors import Code

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IATA = "ORY"
PARIS = ZoneInfo("Europe/Paris")
DROP = object()  # marker: remove the field
HUGE = "x" * 60_000  # the largest a body may be is 64 KiB (PAYLOAD_TOO_LARGE beyond)
SEDAN, VAN = "1", "2"  # the fake partner's offers, sorted by price: sedan 40.00, van 70.00
CHILD_SEAT, MEET = 1, 2  # the sedan's extras: PER_ITEM 5.00 and PER_BOOKING 12.50; the van has none


@dataclass(frozen=True)
class Caller:
    client_id: int
    key: str
    search_id: str


def error(code: int) -> dict[str, Any]:
    return {"status": "Error", "code": code, "message": Code(code).name}


async def search_at_ory(http: httpx.AsyncClient, key: str) -> dict[str, Any]:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": IATA},
        dropoff_location={"type": "POINT", "lat": 48.8566, "lng": 2.3522, "name": "Hôtel de Ville"},
        pickup_datetime=future_local(tz=PARIS),
    )
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    assert [v["vehicle_id"] for v in found["vehicles"]] == [SEDAN, VAN]
    assert [e["id"] for e in found["vehicles"][0]["extra_services"]] == [CHILD_SEAT, MEET]
    return found


async def footprint(db: Database, client_id: int) -> tuple[int, int, int, int, Decimal]:
    """(bookings, ledger entries, outbox rows, idempotency rows, balance) of one client."""
    async with db.read() as conn:
        n_bookings = (
            await conn.execute(select(func.count()).select_from(bookings).where(bookings.c.client_id == client_id))
        ).scalar_one()
        n_ledger = (
            await conn.execute(
                select(func.count())
                .select_from(ledger_entries.join(wallets, wallets.c.id == ledger_entries.c.wallet_id))
                .where(wallets.c.client_id == client_id)
            )
        ).scalar_one()
        n_outbox = (
            await conn.execute(
                select(func.count())
                .select_from(outbox.join(bookings, bookings.c.id == outbox.c.booking_id))
                .where(bookings.c.client_id == client_id)
            )
        ).scalar_one()
        n_keys = (
            await conn.execute(
                select(func.count()).select_from(idempotency_keys).where(idempotency_keys.c.client_id == client_id)
            )
        ).scalar_one()
        balance = (await conn.execute(select(wallets.c.balance).where(wallets.c.client_id == client_id))).scalar_one()
    return n_bookings, n_ledger, n_outbox, n_keys, Decimal(balance)


@pytest.fixture(scope="module")
async def partner(db: Database, clock: ShiftedClock, settings: Settings) -> AsyncIterator[FakePartner]:
    factory = PartnerFactory(db, clock, settings)
    fake, _, _ = await factory(airports=(IATA,), name="ORY validation partner")
    yield fake
    await factory.close()


@pytest.fixture(scope="module")
async def caller(http: httpx.AsyncClient, make_client: ClientFactory, partner: FakePartner) -> Caller:
    client_id, key = await make_client(balance="100000.00")
    return Caller(client_id, key, (await search_at_ory(http, key))["search_id"])


async def refused(http: httpx.AsyncClient, db: Database, client_id: int, key: str, body: Any, code: int) -> None:
    """Posts ``body``, expects exactly the 422 of ``code``, and that nothing was written."""
    before = await footprint(db, client_id)
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 422, response.text
    assert response.json() == error(code)
    assert await footprint(db, client_id) == before


async def booked(http: httpx.AsyncClient, key: str, body: Any) -> dict[str, Any]:
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["status"] == "Success" and set(answer) == {"status", "booking"}
    booking: dict[str, Any] = answer["booking"]
    return booking


def ugly_text(path: str, required: int) -> list[tuple[str, Any, int]]:
    """Cases every required free-text field refuses with its REQUIRED code."""
    return [
        (path, DROP, required),
        (path, None, required),
        (path, "", required),
        (path, "   ", required),
        (path, "\t\n", required),
        (path, 42, required),
        (path, 4.2, required),
        (path, True, required),
        (path, False, required),
        (path, ["Ada"], required),
        (path, {"v": "Ada"}, required),
        (path, HUGE, required),
        (path, "A\x00da", required),
        (path, "\x00", required),
    ]


def refused_characters(path: str, code: int, *, multiline: bool = False) -> list[tuple[str, Any, int]]:
    chosen = REFUSED_CHARACTERS if multiline else {**REFUSED_CHARACTERS, **ONE_LINE_ONLY}
    return [(path, value, code) for value in chosen.values()]


# (path in the body, value or DROP, expected code); the rest of the body is valid.
CASES: list[tuple[str, Any, int]] = [
    # 1001 / 1002: search_id
    ("search_id", DROP, 1001),
    ("search_id", None, 1001),
    ("search_id", "", 1001),
    ("search_id", "s_no_such_search", 1002),
    ("search_id", "   ", 1002),
    ("search_id", 123, 1002),
    ("search_id", 0, 1002),
    ("search_id", True, 1002),
    ("search_id", False, 1002),
    ("search_id", 1.5, 1002),
    ("search_id", [], 1002),
    ("search_id", ["s_x"], 1002),
    ("search_id", {"id": "s_x"}, 1002),
    ("search_id", HUGE, 1002),
    ("search_id", "😀" * 10, 1002),
    ("search_id", "\u202es_x\u200f", 1002),
    ("search_id", "s_\x00x", 1002),
    ("search_id", "' OR '1'='1", 1002),
    ("search_id", "%", 1002),
    ("search_id", "s_%", 1002),
    # 1003 / 1004: vehicle_id (a JSON integer or the digits the search wrote, nothing else)
    ("vehicle_id", DROP, 1003),
    ("vehicle_id", None, 1003),
    ("vehicle_id", "01", 1004),
    ("vehicle_id", " 1", 1004),
    ("vehicle_id", "1 ", 1004),
    ("vehicle_id", "+1", 1004),
    ("vehicle_id", "1.0", 1004),
    ("vehicle_id", "1e0", 1004),
    ("vehicle_id", "１", 1004),
    ("vehicle_id", "١", 1004),
    ("vehicle_id", 1.0, 1004),
    ("vehicle_id", 1.5, 1004),
    ("vehicle_id", True, 1004),
    ("vehicle_id", False, 1004),
    ("vehicle_id", 0, 1004),
    ("vehicle_id", "0", 1004),
    ("vehicle_id", -1, 1004),
    ("vehicle_id", "-1", 1004),
    ("vehicle_id", 999, 1004),
    ("vehicle_id", "999", 1004),
    ("vehicle_id", 3, 1004),
    ("vehicle_id", "", 1004),
    ("vehicle_id", "abc", 1004),
    ("vehicle_id", [1], 1004),
    ("vehicle_id", {"id": 1}, 1004),
    ("vehicle_id", 2**31, 1004),
    ("vehicle_id", 2**63, 1004),
    ("vehicle_id", 10**30, 1004),
    ("vehicle_id", "9" * 40, 1004),
    ("vehicle_id", HUGE, 1004),
    ("vehicle_id", "1\x00", 1004),
    # 1005: passenger
    ("passenger", DROP, 1005),
    ("passenger", None, 1005),
    ("passenger", "Ada Lovelace", 1005),
    ("passenger", [], 1005),
    ("passenger", [{"name": "Ada"}], 1005),
    ("passenger", 1, 1005),
    ("passenger", True, 1005),
    # 1006 / 1007: name, surname
    *ugly_text("passenger.name", 1006),
    ("passenger.name", "x" * 201, 1006),
    *ugly_text("passenger.surname", 1007),
    ("passenger.surname", "x" * 201, 1007),
    *refused_characters("passenger.name", 1006),
    *refused_characters("passenger.surname", 1007),
    # 1008 / 1009: phone
    ("passenger.phone", DROP, 1008),
    ("passenger.phone", None, 1008),
    ("passenger.phone", "", 1008),
    ("passenger.phone", 447911123456, 1009),
    ("passenger.phone", True, 1009),
    ("passenger.phone", [], 1009),
    ("passenger.phone", {"n": "+447911123456"}, 1009),
    ("passenger.phone", ["+447911123456"], 1009),
    ("passenger.phone", "447911123456", 1009),
    ("passenger.phone", "+0447911123456", 1009),
    ("passenger.phone", "07911 123456", 1009),  # no country code: never guessed for a passenger
    ("passenger.phone", "(0)7911 123456", 1009),
    ("passenger.phone", "+44 7911 CALLME", 1009),  # letters: never read as a keypad's digits
    ("passenger.phone", "+44 7911 123456 ext 2", 1009),
    ("passenger.phone", "+44 7911 123456 x", 1009),
    ("passenger.phone", "+44 7911 123456" + "-" * 18, 1009),  # 33 characters
    ("passenger.phone", "+44 +7911 123456", 1009),
    ("passenger.phone", "0 044 7911 123456", 1009),
    ("passenger.phone", "000447911123456", 1009),
    ("passenger.phone", "00", 1009),
    ("passenger.phone", "() - .", 1009),
    ("passenger.phone", "+44\u00a07911\u00a0123456", 1009),  # only ASCII spaces inside
    ("passenger.phone", "+44_7911_123456", 1009),
    ("passenger.phone", "+44 7911 123456;", 1009),
    ("passenger.phone", "+447911123456\x00", 1009),
    ("passenger.phone", "\u200f+447911123456", 1009),
    ("passenger.phone", "++447911123456", 1009),
    ("passenger.phone", "+", 1009),
    ("passenger.phone", "+1", 1009),
    ("passenger.phone", "+4479", 1009),  # the pattern allows it; shorter than 6 does not
    ("passenger.phone", "+1234567890123456", 1009),  # 16 digits: longer than E.164
    ("passenger.phone", "+447700900123", 1009),  # pattern-valid, not a real number
    ("passenger.phone", "+999999999", 1009),
    ("passenger.phone", "+12345678", 1009),
    ("passenger.phone", "+４４7911123456", 1009),  # full-width digits
    ("passenger.phone", "+4４7911123456", 1009),
    ("passenger.phone", "+44791112345٦", 1009),  # non-ASCII digits
    ("passenger.phone", "+" + "1" * 60_000, 1009),
    ("passenger.phone", "tel:+447911123456", 1009),
    # 1010 / 1011: email
    ("passenger.email", DROP, 1010),
    ("passenger.email", None, 1010),
    ("passenger.email", "", 1010),
    ("passenger.email", "ada", 1011),
    ("passenger.email", "ada@", 1011),
    ("passenger.email", "@example.com", 1011),
    ("passenger.email", "ada@@example.com", 1011),
    ("passenger.email", "ada lovelace@example.com", 1011),
    ("passenger.email", "ada@localhost", 1011),
    ("passenger.email", "ada@example", 1011),
    ("passenger.email", "ada@example.com ", 1011),
    ("passenger.email", "ada@example.com\x00", 1011),
    ("passenger.email", "a\u200f@example.com", 1011),
    ("passenger.email", "ada@ex_ample.com", 1011),
    ("passenger.email", "ada@example..com", 1011),
    ("passenger.email", "a@" + "b" * 60_000 + ".com", 1011),
    ("passenger.email", 42, 1011),
    ("passenger.email", True, 1011),
    ("passenger.email", ["ada@example.com"], 1011),
    ("passenger.email", {"email": "ada@example.com"}, 1011),
    # 1012 / 1013: travel details, flight number
    ("travel_details", DROP, 1012),
    ("travel_details", None, 1012),
    ("travel_details", "BA117", 1012),
    ("travel_details", [], 1012),
    ("travel_details", [{"flight_number": "BA117"}], 1012),
    ("travel_details", 117, 1012),
    ("travel_details", False, 1012),
    ("travel_details.extra_requests", 5, 1012),
    ("travel_details.extra_requests", True, 1012),
    ("travel_details.extra_requests", ["a"], 1012),
    ("travel_details.extra_requests", {"a": 1}, 1012),
    ("travel_details.extra_requests", "x" * 1001, 1012),
    ("travel_details.extra_requests", HUGE, 1012),
    ("travel_details.extra_requests", "a\x00b", 1012),
    *refused_characters("travel_details.extra_requests", 1012, multiline=True),
    *ugly_text("travel_details.flight_number", 1013),
    ("travel_details.flight_number", "x" * 65, 1013),
    *refused_characters("travel_details.flight_number", 1013),
    # 1014 - 1017: luggage (the sedan takes 2 suitcases and 2 small bags)
    ("suitcase", DROP, 1014),
    ("suitcase", None, 1014),
    ("suitcase", -1, 1015),
    ("suitcase", 3, 1015),
    ("suitcase", 99, 1015),
    ("suitcase", 10**30, 1015),
    ("suitcase", "1", 1015),
    ("suitcase", "", 1015),
    ("suitcase", True, 1015),
    ("suitcase", False, 1015),
    ("suitcase", 1.0, 1015),
    ("suitcase", 1.5, 1015),
    ("suitcase", [], 1015),
    ("suitcase", {}, 1015),
    ("small_bags", DROP, 1016),
    ("small_bags", None, 1016),
    ("small_bags", -1, 1017),
    ("small_bags", 3, 1017),
    ("small_bags", 2**63, 1017),
    ("small_bags", "0", 1017),
    ("small_bags", True, 1017),
    ("small_bags", 0.0, 1017),
    ("small_bags", 2.5, 1017),
    ("small_bags", [1], 1017),
    # 1018 - 1021: extra services
    ("extra_services", "child seat", 1018),
    ("extra_services", 1, 1018),
    ("extra_services", True, 1018),
    ("extra_services", {"id": CHILD_SEAT}, 1018),
    ("extra_services", [CHILD_SEAT], 1018),
    ("extra_services", ["child-seat"], 1018),
    ("extra_services", [None], 1018),
    ("extra_services", [[]], 1018),
    ("extra_services", [[{"id": CHILD_SEAT}]], 1018),
    ("extra_services", [{"id": CHILD_SEAT}, "x"], 1018),
    ("extra_services", [{"id": CHILD_SEAT}, {"id": CHILD_SEAT}], 1018),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": 1}, {"id": CHILD_SEAT, "quantity": 2}], 1018),
    ("extra_services", [{"id": CHILD_SEAT}] * 100, 1018),
    ("extra_services", [{}], 1019),
    ("extra_services", [{"quantity": 1}], 1019),
    ("extra_services", [{"id": None}], 1019),
    ("extra_services", [{"ID": CHILD_SEAT}], 1019),
    ("extra_services", [{"id": MEET}, {"quantity": 2}], 1019),
    ("extra_services", [{"id": 999}], 1020),
    ("extra_services", [{"id": 3}], 1020),
    ("extra_services", [{"id": 0}], 1020),
    ("extra_services", [{"id": -1}], 1020),
    ("extra_services", [{"id": str(CHILD_SEAT)}], 1020),
    ("extra_services", [{"id": ""}], 1020),
    ("extra_services", [{"id": "child-seat"}], 1020),
    ("extra_services", [{"id": True}], 1020),
    ("extra_services", [{"id": float(CHILD_SEAT)}], 1020),
    ("extra_services", [{"id": [CHILD_SEAT]}], 1020),
    ("extra_services", [{"id": 10**30}], 1020),
    ("extra_services", [{"id": MEET}, {"id": 999}], 1020),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": 0}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": -1}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": "2"}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": True}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": False}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": 1.5}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": 2.0}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": 10**30}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": []}], 1021),
    ("extra_services", [{"id": CHILD_SEAT, "quantity": ""}], 1021),
    ("extra_services", [{"id": MEET, "quantity": 1}, {"id": CHILD_SEAT, "quantity": 0}], 1021),
]


@pytest.mark.parametrize(("path", "value", "code"), CASES, ids=[f"{c[2]}-{c[0]}-{i}" for i, c in enumerate(CASES)])
async def test_validation_code(
    http: httpx.AsyncClient, db: Database, caller: Caller, path: str, value: Any, code: int
) -> None:
    body = with_path(booking_body(caller.search_id, SEDAN), path, value, delete=value is DROP)
    await refused(http, db, caller.client_id, caller.key, body, code)


async def test_an_extra_of_another_vehicle_is_not_offered(
    http: httpx.AsyncClient, db: Database, caller: Caller
) -> None:
    body = booking_body(caller.search_id, VAN, extra_services=[{"id": CHILD_SEAT}])
    await refused(http, db, caller.client_id, caller.key, body, 1020)


async def test_luggage_capacity_is_the_chosen_vehicles(http: httpx.AsyncClient, db: Database, caller: Caller) -> None:
    await refused(http, db, caller.client_id, caller.key, booking_body(caller.search_id, VAN, suitcase=8), 1015)
    await refused(http, db, caller.client_id, caller.key, booking_body(caller.search_id, VAN, small_bags=8), 1017)
    van = await booked(http, caller.key, booking_body(caller.search_id, VAN, suitcase=7, small_bags=7))
    sedan = await booked(http, caller.key, booking_body(caller.search_id, SEDAN, suitcase=2, small_bags=0))
    assert (van["vehicle"]["model"], sedan["vehicle"]["model"]) == ("Vito", "Corolla")
    assert (
        (await row_of(db, van["reservation_no"]))["suitcase"],
        (await row_of(db, sedan["reservation_no"]))["small_bags"],
    ) == (7, 0)


async def test_a_search_of_another_client_does_not_exist(
    http: httpx.AsyncClient, db: Database, caller: Caller, make_client: ClientFactory
) -> None:
    other_id, other_key = await make_client(balance="1000.00")
    await refused(http, db, other_id, other_key, booking_body(caller.search_id, SEDAN), 1002)
    unknown = await http.post(BOOKING, json=booking_body("s_" + "A" * 32, SEDAN), headers=bearer(other_key))
    foreign = await http.post(BOOKING, json=booking_body(caller.search_id, SEDAN), headers=bearer(other_key))
    assert foreign.content == unknown.content  # nothing tells the two apart


async def test_an_expired_search_does_not_exist(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner, clock: ShiftedClock
) -> None:
    client_id, key = await make_client(balance="1000.00")
    search_id = (await search_at_ory(http, key))["search_id"]
    clock.advance(timedelta(minutes=29))
    still = await booked(http, key, booking_body(search_id, SEDAN))  # 30 minutes of validity
    assert still["status"] in ("PENDING_APPROVAL", "APPROVED")
    clock.advance(timedelta(minutes=2))
    await refused(http, db, client_id, key, booking_body(search_id, SEDAN), 1002)
    await refused(http, db, client_id, key, booking_body(search_id, VAN), 1002)


@pytest.mark.parametrize("vehicle_id", [SEDAN, int(SEDAN)])
async def test_vehicle_id_as_the_search_wrote_it_or_as_a_number(
    http: httpx.AsyncClient, db: Database, caller: Caller, vehicle_id: Any
) -> None:
    booking = await booked(http, caller.key, booking_body(caller.search_id, vehicle_id))
    assert booking["vehicle"] == {"make": "Toyota", "model": "Corolla", "type": "SEDAN"}
    assert booking["price"] == {"total": "40.00", "currency": "EUR", "fx": None}


# ---- order of the checks -------------------------------------------------------------------

# One way to break each check, in the order of the 7.2 table.
BREAKERS: list[tuple[int, str, Any]] = [
    (1001, "search_id", DROP),
    (1002, "search_id", "s_unknown"),
    (1003, "vehicle_id", DROP),
    (1004, "vehicle_id", 999),
    (1005, "passenger", DROP),
    (1006, "passenger.name", DROP),
    (1007, "passenger.surname", ""),
    (1008, "passenger.phone", None),
    (1009, "passenger.phone", "+4479"),
    (1010, "passenger.email", DROP),
    (1011, "passenger.email", "nope"),
    (1012, "travel_details", "BA117"),
    (1013, "travel_details.flight_number", None),
    (1014, "suitcase", DROP),
    (1015, "suitcase", 99),
    (1016, "small_bags", None),
    (1017, "small_bags", -1),
    (1018, "extra_services", "all"),
    (1019, "extra_services", [{"quantity": 1}]),
    (1020, "extra_services", [{"id": 999}]),
    (1021, "extra_services", [{"id": CHILD_SEAT, "quantity": 0}]),
]


def broken_from(search_id: str, first: int) -> dict[str, Any]:
    """A body where every check from BREAKERS[first] onwards fails (applied last to first, so a
    parent is removed only after its children were broken)."""
    body = booking_body(search_id, SEDAN)
    for _, path, value in reversed(BREAKERS[first:]):
        body = with_path(body, path, value, delete=value is DROP)
    return body


@pytest.mark.parametrize("first", range(len(BREAKERS)), ids=[str(b[0]) for b in BREAKERS])
async def test_first_failing_check_in_table_order_wins(
    http: httpx.AsyncClient, db: Database, caller: Caller, first: int
) -> None:
    await refused(http, db, caller.client_id, caller.key, broken_from(caller.search_id, first), BREAKERS[first][0])


@pytest.mark.parametrize(
    ("extras", "code"),
    [
        ([{"id": CHILD_SEAT, "quantity": 0}, {"id": 999}, {}, "x"], 1018),
        ([{"id": CHILD_SEAT, "quantity": 0}, {"id": 999}, {}], 1019),
        ([{"id": CHILD_SEAT, "quantity": 0}, {"id": 999}], 1020),
        ([{"id": CHILD_SEAT, "quantity": "2"}, {"id": CHILD_SEAT, "quantity": 0}], 1018),  # duplicate id
    ],
)
async def test_table_order_across_the_items_of_extra_services(
    http: httpx.AsyncClient, db: Database, caller: Caller, extras: list[Any], code: int
) -> None:
    body = booking_body(caller.search_id, SEDAN, extra_services=extras)
    await refused(http, db, caller.client_id, caller.key, body, code)


async def test_bad_extra_requests_is_a_travel_details_failure_ahead_of_the_flight_number(
    http: httpx.AsyncClient,
    db: Database,
    caller: Caller,
) -> None:
    body = booking_body(caller.search_id, SEDAN, travel_details={"flight_number": None, "extra_requests": 42})
    await refused(http, db, caller.client_id, caller.key, body, 1012)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"search_id": None},
        {"anything": "at all"},
        {"search_id": "s_x", "vehicle_id": "x", "passenger": 1, "suitcase": -5, "extra_services": "x"},
    ],
)
async def test_creation_permission_is_checked_before_the_body(
    http: httpx.AsyncClient, db: Database, caller: Caller, make_client: ClientFactory, body: dict[str, Any]
) -> None:
    client_id, key = await make_client(can_create=False)
    await refused(http, db, client_id, key, body, 1100)


async def test_creation_permission_with_a_valid_body_and_a_non_json_one(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    partner: FakePartner,
) -> None:
    client_id, key = await make_client(can_create=False)
    search_id = (await search_at_ory(http, key))["search_id"]  # searching needs no permission
    await refused(http, db, client_id, key, booking_body(search_id, SEDAN), 1100)
    for raw in (b"", b"[]", b"{not json", b"null"):
        before = await footprint(db, client_id)
        response = await http.post(BOOKING, content=raw, headers={**bearer(key), "Content-Type": "application/json"})
        assert (response.status_code, response.json()) == (422, error(1100)), raw
        assert await footprint(db, client_id) == before
    assert len(await partner_creates_for(db, client_id)) == 0


async def partner_creates_for(db: Database, client_id: int) -> list[Any]:
    async with db.read() as conn:
        return list(
            (
                await conn.execute(
                    select(outbox.c.id)
                    .join(bookings, bookings.c.id == outbox.c.booking_id)
                    .where(bookings.c.client_id == client_id)
                )
            ).all()
        )


async def test_non_object_bodies_are_malformed_for_a_permitted_client(
    http: httpx.AsyncClient, db: Database, caller: Caller
) -> None:
    for raw in (b"", b"[]", b"null", b"42", b'"x"', b"{not json", b'{"a": NaN}', b"\xff\xfe"):
        before = await footprint(db, caller.client_id)
        response = await http.post(
            BOOKING, content=raw, headers={**bearer(caller.key), "Content-Type": "application/json"}
        )
        assert response.status_code == 400, raw
        assert response.json()["code"] == "MALFORMED_JSON"
        assert await footprint(db, caller.client_id) == before


@pytest.mark.parametrize("path", ["search_id", "passenger.name", "passenger.phone", "travel_details.extra_requests"])
async def test_a_100_kb_field_is_refused_before_parsing(
    http: httpx.AsyncClient, db: Database, caller: Caller, path: str
) -> None:
    body = with_path(booking_body(caller.search_id, SEDAN), path, "😀" * 25_000)  # 100 kB of UTF-8
    before = await footprint(db, caller.client_id)
    response = await http.post(BOOKING, json=body, headers=bearer(caller.key))
    assert response.status_code == 413
    assert response.json()["code"] == "PAYLOAD_TOO_LARGE" and response.json()["status"] == "Error"
    assert await footprint(db, caller.client_id) == before


# ---- the wallet: 1101 only once every field is valid ------------------------------------------


async def test_insufficient_balance_comes_after_every_field(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="39.99")
    search_id = (await search_at_ory(http, key))["search_id"]
    for first in range(len(BREAKERS)):
        await refused(http, db, client_id, key, broken_from(search_id, first), BREAKERS[first][0])
    await refused(http, db, client_id, key, booking_body(search_id, SEDAN), 1101)
    await refused(http, db, client_id, key, booking_body(search_id, SEDAN, extra_services=[{"id": MEET}]), 1101)
    assert await footprint(db, client_id) == (0, 1, 0, 0, Decimal("39.99"))  # only the opening top-up


async def test_a_balance_exactly_the_price_books_and_empties_the_wallet(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    partner: FakePartner,
) -> None:
    client_id, key = await make_client(balance="52.50")
    search_id = (await search_at_ory(http, key))["search_id"]
    body = booking_body(search_id, SEDAN, extra_services=[{"id": MEET, "quantity": 4}])
    booking = await booked(http, key, body)
    assert booking["price"]["total"] == "52.50"
    assert (await footprint(db, client_id))[4] == Decimal("0.00")
    await refused(http, db, client_id, key, booking_body(search_id, SEDAN), 1101)


async def test_reverse_api_client_books_without_any_wallet_movement(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    partner: FakePartner,
) -> None:
    client_id, key = await make_client(balance="0.00", pay_type="reverse_api")
    search_id = (await search_at_ory(http, key))["search_id"]
    before = await footprint(db, client_id)
    booking = await booked(
        http, key, booking_body(search_id, SEDAN, extra_services=[{"id": CHILD_SEAT, "quantity": 2}])
    )
    assert booking["price"] == {"total": "50.00", "currency": "EUR", "fx": None}
    after = await footprint(db, client_id)
    assert after[0] == before[0] + 1 and after[2] == before[2] + 1  # one booking, its partner message
    assert (after[1], after[4]) == (before[1], Decimal("0.00"))  # no ledger entry, balance untouched
    assert await ledger_of(db, booking["reservation_no"]) == []
    assert (await row_of(db, booking["reservation_no"]))["pay_type"] == "reverse_api"


# ---- what a successful booking charges and stores -------------------------------------------


async def test_mass_assignment_is_ignored(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, partner: FakePartner
) -> None:
    client_id, key = await make_client(balance="100.00")
    victim_id, _ = await make_client(balance="100.00")
    search_id = (await search_at_ory(http, key))["search_id"]
    body = booking_body(
        search_id,
        SEDAN,
        price={"total": "0.01", "currency": "EUR"},
        total="0.01",
        net_total=0,
        status="APPROVED",
        client_id=victim_id,
        reservation_no="TB-HACKED000",
        pay_type="reverse_api",
        is_cancelable=False,
        driver={"name": "x", "phone": "+447400123456", "plate": "X"},
        created_at="2000-01-01T00:00:00+00:00",
        partner_id=1,
        id=1,
    )
    body["passenger"]["id"] = 7
    body["travel_details"]["status"] = "CANCELLED"
    booking = await booked(http, key, body)
    assert booking["price"] == {"total": "40.00", "currency": "EUR", "fx": None}
    assert booking["status"] == "PENDING_APPROVAL"  # computed: the partner answered PENDING
    assert booking["reservation_no"] != "TB-HACKED000" and booking["reservation_no"].startswith("TB-")
    assert booking["driver"] is None and booking["is_cancelable"] is True
    assert booking["created_at"] != "2000-01-01T00:00:00+00:00"
    row = await row_of(db, booking["reservation_no"])
    assert (row["client_id"], row["pay_type"], row["total"], row["net_total"]) == (
        client_id,
        "wallet",
        Decimal("40.00"),
        Decimal("40.00"),
    )
    assert await ledger_of(db, booking["reservation_no"]) == [("debit_booking", Decimal("-40.00"))]
    assert (await footprint(db, client_id))[4] == Decimal("60.00")
    assert (await footprint(db, victim_id))[:2] == (0, 1)
    assert (await http.get(BOOKING, params={"reservation_no": "TB-HACKED000"}, headers=bearer(key))).json() == error(
        1401
    )


@pytest.mark.parametrize(
    ("extras", "total", "labels", "sent"),
    [
        (None, "40.00", [], []),
        ([], "40.00", [], []),
        ([{"id": MEET}], "52.50", ["Meet & greet"], [{"id": "meet", "quantity": 1}]),
        ([{"id": MEET, "quantity": 1}], "52.50", ["Meet & greet"], [{"id": "meet", "quantity": 1}]),
        ([{"id": MEET, "quantity": 7}], "52.50", ["Meet & greet"], [{"id": "meet", "quantity": 7}]),
        ([{"id": MEET, "quantity": None}], "52.50", ["Meet & greet"], [{"id": "meet", "quantity": 1}]),
        ([{"id": CHILD_SEAT}], "45.00", ["Child seat"], [{"id": "child-seat", "quantity": 1}]),
        ([{"id": CHILD_SEAT, "quantity": 3}], "55.00", ["Child seat x 3"], [{"id": "child-seat", "quantity": 3}]),
        ([{"id": CHILD_SEAT, "quantity": 20}], "140.00", ["Child seat x 20"], [{"id": "child-seat", "quantity": 20}]),
        (
            [{"id": MEET, "quantity": 2}, {"id": CHILD_SEAT, "quantity": 2}],
            "62.50",
            ["Meet & greet", "Child seat x 2"],
            [{"id": "meet", "quantity": 2}, {"id": "child-seat", "quantity": 2}],
        ),
    ],
)
async def test_extras_are_charged_and_named_by_their_pricing_type(
    http: httpx.AsyncClient,
    db: Database,
    caller: Caller,
    partner: FakePartner,
    extras: Any,
    total: str,
    labels: list[str],
    sent: list[dict[str, Any]],
) -> None:
    body = booking_body(caller.search_id, SEDAN)
    if extras is not None:
        body["extra_services"] = extras
    booking = await booked(http, caller.key, body)
    assert booking["price"] == {"total": total, "currency": "EUR", "fx": None}
    assert booking["extra_services"] == labels
    assert await ledger_of(db, booking["reservation_no"]) == [("debit_booking", -Decimal(total))]
    (create,) = [c for c in partner.calls("/booking/create") if c.body["reservation_no"] == booking["reservation_no"]]
    assert create.body["extras"] == sent
    assert create.body["price"] == {"total": total, "currency": "EUR"}


@pytest.mark.parametrize(
    ("field", "value", "stored"),
    [
        ("passenger.name", "  Ada  ", "Ada"),
        ("passenger.name", "Zoë 😀", "Zoë 😀"),
        ("passenger.name", "\u05e2\u05d3\u05d4\u200f", "\u05e2\u05d3\u05d4\u200f"),  # Hebrew with an RTL mark
        ("passenger.name", "x" * 200, "x" * 200),
        ("passenger.surname", "O'Brien-Łukasiewicz", "O'Brien-Łukasiewicz"),
        ("passenger.email", "ADA@EXAMPLE.COM", "ADA@example.com"),
        ("passenger.email", "ü@exämple.com", "ü@exämple.com"),
        ("passenger.phone", "+33612345678", "+33612345678"),
        ("passenger.phone", "+14155552671", "+14155552671"),
        # as people type them (docs/rules/booking.md#phone-numbers): stored as E.164
        ("passenger.phone", "+44 7911 123456", "+447911123456"),
        ("passenger.phone", "0044 (0)7911-123456", "+447911123456"),
        ("passenger.phone", "+44 (0)7911 123456", "+447911123456"),
        ("passenger.phone", "+44-7911-123456", "+447911123456"),
        ("passenger.phone", "+44.7911.123.456", "+447911123456"),
        ("passenger.phone", "+44(0)7911123456", "+447911123456"),
        ("passenger.phone", " +447911123456 ", "+447911123456"),
        ("passenger.phone", "+447911123456\n", "+447911123456"),
        ("passenger.phone", "+1 (415) 555-2671", "+14155552671"),
        ("passenger.phone", "0033 6 12 34 56 78", "+33612345678"),
        ("passenger.phone", "+33 (0)6 12 34 56 78", "+33612345678"),
        ("passenger.phone", "+39 06 1234 5678", "+390612345678"),  # Italy keeps its 0
        ("passenger.phone", "+49 30/1234567", "+49301234567"),
        ("travel_details.flight_number", " AF 1234 ", "AF1234"),  # normalised: docs/rules/flights.md#flight-number
        ("travel_details.extra_requests", "  ", None),
        ("travel_details.extra_requests", "Two child seats 👶👶", "Two child seats 👶👶"),
        ("travel_details.extra_requests", "y" * 1000, "y" * 1000),
        # docs/rules/booking.md#text: a free text keeps its lines and tabs; right-to-left names keep their marks
        ("travel_details.extra_requests", "Line one\r\nLine two\tend", "Line one\r\nLine two\tend"),
        ("passenger.surname", "\u05db\u05d4\u05df\u200f", "\u05db\u05d4\u05df\u200f"),
        ("passenger.name", "\u0639\u0644\u064a\u061c", "\u0639\u0644\u064a\u061c"),
    ],
)
async def test_accepted_ugly_but_valid_values(
    http: httpx.AsyncClient, db: Database, caller: Caller, field: str, value: Any, stored: Any
) -> None:
    booking = await booked(http, caller.key, with_path(booking_body(caller.search_id, SEDAN), field, value))
    row = await row_of(db, booking["reservation_no"])
    column = {
        "passenger.name": "passenger_name",
        "passenger.surname": "passenger_surname",
        "passenger.email": "passenger_email",
        "passenger.phone": "passenger_phone",
        "travel_details.flight_number": "flight_number",
        "travel_details.extra_requests": "extra_requests",
    }[field]
    assert row[column] == stored
    if field.startswith("passenger."):
        assert booking["passenger"][field.split(".")[1]] == stored


async def test_optional_fields_may_be_absent(http: httpx.AsyncClient, caller: Caller) -> None:
    body = booking_body(caller.search_id, SEDAN, suitcase=0, small_bags=0)
    del body["travel_details"]["extra_requests"]
    body.pop("extra_services", None)
    booking = await booked(http, caller.key, body)
    assert booking["extra_services"] == [] and booking["flight_number"] == "BA117"
