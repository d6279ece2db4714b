"""Reading (GET) and cancelling (DELETE) a booking: every code of docs/rules/errors.md#get-codes,
docs/rules/errors.md#cancel-codes, docs/rules/accounts.md#payment, docs/rules/booking.md,
the exact BookingResource shape, the refund and the partner notification. Partners serve NCE."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import delete, func, insert, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import FakePartner
from tests.helpers import booking_body, future_local, ledger_of, row_of, search_body
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.tables import booking_transitions, bookings, cancellation_reasons, outbox, wallets
from transfers.errors import Code

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
IATA = "NCE"
NICE = ZoneInfo("Europe/Paris")
CANCELLED = {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
BOOKING_KEYS = {
    "reservation_no",
    "status",
    "pickup_location",
    "dropoff_location",
    "pickup_datetime",
    "flight_number",
    "passengers",
    "passenger",
    "vehicle",
    "price",
    "distance_km",
    "booking_type",
    "is_cancelable",
    "extra_services",
    "driver",
    "meeting_point",
    "created_at",
    "cancellation_policy",
    "cancellation",
    "amendment",  # docs/rules/cancellation.md
    "ride",  # docs/rules/ride.md#ride-field
    "original_pickup_datetime",  # docs/rules/flights.md#booking-fields
    "free_wait_until",
    "flight",
    "trip",  # docs/rules/return-trips.md#legs
}
DRIVER = {"name": "Jo Driver", "phone": "+33612345679", "plate": "AB-123-CD"}


def error(code: int) -> dict[str, Any]:
    return {"status": "Error", "code": code, "message": Code(code).name}


async def book(http: httpx.AsyncClient, key: str, **overrides: Any) -> dict[str, Any]:
    pickup = future_local(tz=NICE)
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": IATA},
        pickup_datetime=pickup,
        dropoff_location={"type": "POINT", "lat": 43.6959, "lng": 7.2716, "name": "Promenade"},
    )
    found = await http.post(SEARCH, json=body, headers=bearer(key))
    assert found.status_code == 200, found.text
    created = await http.post(
        BOOKING, json=booking_body(found.json()["search_id"], "1", **overrides), headers=bearer(key)
    )
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    booking["_requested_pickup"] = pickup
    return booking


async def get(http: httpx.AsyncClient, key: str, **params: Any) -> httpx.Response:
    return await http.get(BOOKING, params=params, headers=bearer(key))


async def cancel(http: httpx.AsyncClient, key: str, **params: Any) -> httpx.Response:
    return await http.delete(BOOKING, params=params, headers=bearer(key))


async def balance_of(db: Database, client_id: int) -> Decimal:
    async with db.read() as conn:
        value = (await conn.execute(select(wallets.c.balance).where(wallets.c.client_id == client_id))).scalar_one()
    return Decimal(value)


async def updates_queued(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(outbox.c.payload)
                .join(bookings, bookings.c.id == outbox.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no, outbox.c.kind == "booking.update")
                .order_by(outbox.c.id)
            )
        ).all()
    return [dict(payload) for (payload,) in rows]


async def transitions_of(db: Database, reservation_no: str) -> list[tuple[str | None, str]]:
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(booking_transitions.c.from_status, booking_transitions.c.to_status)
                .join(bookings, bookings.c.id == booking_transitions.c.booking_id)
                .where(bookings.c.reservation_no == reservation_no)
                .order_by(booking_transitions.c.id)
            )
        ).all()
    return [(a, b) for a, b in rows]


async def untouched(db: Database, booking: dict[str, Any], client_id: int, balance: Decimal) -> None:
    """The booking kept its status, its ledger has only the debit, no partner update was queued."""
    reservation_no = booking["reservation_no"]
    assert (await row_of(db, reservation_no))["status"] == booking["status"]
    assert [kind for kind, _ in await ledger_of(db, reservation_no)] == ["debit_booking"]
    assert await updates_queued(db, reservation_no) == []
    assert await balance_of(db, client_id) == balance


async def deliver_outbox(service: LiveServer, partner: FakePartner, path: str) -> list[Any]:
    """Runs the dispatcher (other tests may have left due messages) until ``partner`` saw ``path``."""
    dispatcher = service.app.state.services.dispatcher
    for _ in range(20):
        if partner.calls(path):
            break
        await dispatcher.run_once(limit=200)
    return partner.calls(path)


# ---- GET ---------------------------------------------------------------------------------------


async def test_get_without_a_reservation_number(http: httpx.AsyncClient, make_client: ClientFactory) -> None:
    _, key = await make_client()
    for params in ({}, {"reservation_no": ""}):
        response = await get(http, key, **params)
        assert (response.status_code, response.json()) == (422, error(1400)), params
    response = await http.get(BOOKING + "?reservation_no", headers=bearer(key))
    assert (response.status_code, response.json()) == (422, error(1400))


@pytest.mark.parametrize(
    "reservation_no",
    [
        "TB-NOSUCH00",
        " ",
        "X" * 255,
        "X" * 256,
        "X" * 5000,
        "😀",
        "\u202eTB-1",
        "\x00",
        "TB-\x00ABC",
        "%",
        "_",
        "TB-%",
        "' OR '1'='1",
        "../../etc/passwd",
        "TB-1;DROP TABLE bookings",
    ],
)
async def test_get_unknown_reservation(
    http: httpx.AsyncClient, make_client: ClientFactory, reservation_no: str
) -> None:
    _, key = await make_client()
    response = await get(http, key, reservation_no=reservation_no)
    assert (response.status_code, response.json()) == (422, error(1401))


async def test_another_clients_booking_is_exactly_as_invisible_as_a_missing_one(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    _, owner_key = await make_client()
    _, other_key = await make_client()
    await make_partner(airports=(IATA,))
    booking = await book(http, owner_key)
    reservation_no = booking["reservation_no"]
    foreign = await get(http, other_key, reservation_no=reservation_no)
    unknown = await get(http, other_key, reservation_no="TB-ZZZZZZZZZZ")
    assert foreign.status_code == unknown.status_code == 422
    assert foreign.content == unknown.content
    assert foreign.content == b'{"status":"Error","code":1401,"message":"BOOKING_INFO_RESERVATION_NOT_FOUND"}'
    assert reservation_no not in foreign.text
    for prefix in (reservation_no[:-1], reservation_no + " ", reservation_no + "\x00"):
        assert (await get(http, owner_key, reservation_no=prefix)).json() == error(1401)
    assert (await get(http, owner_key, reservation_no=reservation_no)).status_code == 200


def check_shape(booking: dict[str, Any], requested_pickup: str) -> None:
    assert set(booking) == BOOKING_KEYS
    assert re.fullmatch(r"TB-[0-9A-Z]{10}", booking["reservation_no"])
    assert booking["status"] in (
        "PENDING",
        "PENDING_APPROVAL",
        "APPROVED",
        "CANCELLED",
        "DECLINED",
        "FAILED",
        "COMPLETED",
        "REFUNDED",
    )
    for side in ("pickup_location", "dropoff_location"):
        assert set(booking[side]) == {"name", "type"}
        assert isinstance(booking[side]["name"], str) and booking[side]["name"]
    assert booking["pickup_location"]["type"] == "AIRPORT" and "Nice" in booking["pickup_location"]["name"]
    assert booking["dropoff_location"] == {"name": "Promenade", "type": "POINT"}
    pickup = datetime.fromisoformat(booking["pickup_datetime"])
    local = datetime.strptime(requested_pickup, "%Y-%m-%d %H:%M")
    assert pickup.replace(tzinfo=None) == local  # written in the airport's local time...
    assert pickup.utcoffset() == local.replace(tzinfo=NICE).utcoffset()  # ...with the airport's offset
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", booking["pickup_datetime"])
    assert booking["flight_number"] == "BA117"
    assert set(booking["passengers"]) == {"adult", "children", "infant"}
    assert all(type(v) is int for v in booking["passengers"].values())
    assert booking["passengers"] == {"adult": 2, "children": 0, "infant": 0}
    assert booking["passenger"] == {
        "name": "Ada",
        "surname": "Lovelace",
        "email": "ada@example.com",
        "phone": "+447911123456",
    }
    assert booking["vehicle"] == {"make": "Toyota", "model": "Corolla", "type": "SEDAN"}
    assert set(booking["price"]) == {"total", "currency", "fx"}
    assert isinstance(booking["price"]["total"], str) and re.fullmatch(r"\d+\.\d\d", booking["price"]["total"])
    assert booking["price"]["currency"] == "EUR"
    assert type(booking["distance_km"]) is int and booking["distance_km"] >= 0
    assert booking["booking_type"] == "ONEWAY"
    assert type(booking["is_cancelable"]) is bool
    assert isinstance(booking["extra_services"], list) and all(isinstance(e, str) for e in booking["extra_services"])
    assert booking["driver"] is None or (
        set(booking["driver"]) == {"name", "phone", "plate"}
        and all(isinstance(v, str) for v in booking["driver"].values())
    )
    assert booking["meeting_point"] is None or isinstance(booking["meeting_point"], str)
    created = datetime.fromisoformat(booking["created_at"])
    assert booking["created_at"].endswith("+00:00") and created.utcoffset() == timedelta(0)
    assert abs(created - datetime.now(UTC)) < timedelta(minutes=5)
    # docs/rules/ride.md#ride-field: before the driver reports anything
    ride = dict(booking["ride"])
    assert re.fullmatch(
        r"https?://[^/]+/t/[A-Za-z0-9_-]{22}", ride.pop("tracking_url")
    )  # docs/rules/ride.md#tracking-page
    assert ride == {"stage": "NOT_STARTED", "events": [], "position": None, "rating_url": None}


async def test_get_answers_the_booking_resource_exactly(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client()
    await make_partner(airports=(IATA,))
    created = await book(http, key, extra_services=[{"id": 1, "quantity": 2}, {"id": 2}])
    requested = created.pop("_requested_pickup")
    response = await get(http, key, reservation_no=created["reservation_no"])
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    booking = response.json()
    check_shape(booking, requested)
    assert booking == created
    assert booking["status"] == "PENDING_APPROVAL" and booking["is_cancelable"] is True
    assert booking["price"]["total"] == "62.50"
    assert booking["extra_services"] == ["Child seat x 2", "Meet & greet"]
    # docs/rules/flights.md#booking-fields: nothing moved yet; the airport's free wait; the flight not checked yet
    assert booking["original_pickup_datetime"] == booking["pickup_datetime"]
    assert booking["free_wait_until"] > booking["pickup_datetime"]
    assert booking["flight"]["number"] == booking["flight_number"]
    assert booking["flight"]["checked_at"] is None
    assert booking["driver"] is None and booking["meeting_point"] is None


async def test_get_an_approved_booking_shows_driver_and_meeting_point(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=(IATA,), create_status="APPROVED", driver=DRIVER)
    created = await book(http, key)
    requested = created.pop("_requested_pickup")
    booking = (await get(http, key, reservation_no=created["reservation_no"])).json()
    check_shape(booking, requested)
    assert booking["trip"] is None  # a single booking
    assert booking["status"] == "APPROVED" and booking["is_cancelable"] is True
    assert booking["driver"] == DRIVER
    assert booking["meeting_point"] == "Arrivals, by the pharmacy"


# ---- DELETE: the codes in their order ------------------------------------------------------------


async def test_cancel_permission_is_checked_first(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00", can_cancel=False)
    await make_partner(airports=(IATA,))
    booking = await book(http, key)  # creating is still allowed
    for params in (
        {},
        {"reservation_no": ""},
        {"reservation_no": "TB-NOSUCH000"},
        {"cancellation_id": "abc"},
        {"reservation_no": booking["reservation_no"]},
        {"reservation_no": booking["reservation_no"], "cancellation_id": 1},
    ):
        response = await cancel(http, key, **params)
        assert (response.status_code, response.json()) == (422, error(1205)), params
    await untouched(db, booking, client_id, Decimal("60.00"))


@pytest.mark.parametrize(
    "params",
    [{}, {"reservation_no": ""}, {"cancellation_id": 1}, {"reservation_no": "", "cancellation_id": "abc", "note": "x"}],
)
async def test_cancel_without_a_reservation_number(
    http: httpx.AsyncClient, make_client: ClientFactory, params: dict[str, Any]
) -> None:
    _, key = await make_client()
    response = await cancel(http, key, **params)
    assert (response.status_code, response.json()) == (422, error(1200))


@pytest.mark.parametrize("reservation_no", ["TB-NOSUCH000", "X" * 255, "X" * 256, "\x00", "TB-\x00", "😀", "%"])
async def test_cancel_unknown_reservation(
    http: httpx.AsyncClient, make_client: ClientFactory, reservation_no: str
) -> None:
    _, key = await make_client()
    for cancellation_id in (1, None, "abc"):  # 1201 comes before 1202 and 1203
        params: dict[str, Any] = {"reservation_no": reservation_no}
        if cancellation_id is not None:
            params["cancellation_id"] = cancellation_id
        response = await cancel(http, key, **params)
        assert (response.status_code, response.json()) == (422, error(1201)), params


async def test_cancelling_another_clients_booking_is_not_found(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    owner_id, owner_key = await make_client(balance="100.00")
    _, other_key = await make_client()
    await make_partner(airports=(IATA,))
    booking = await book(http, owner_key)
    foreign = await cancel(http, other_key, reservation_no=booking["reservation_no"], cancellation_id=1)
    unknown = await cancel(http, other_key, reservation_no="TB-ZZZZZZZZZZ", cancellation_id=1)
    assert foreign.status_code == unknown.status_code == 422
    assert foreign.content == unknown.content
    assert foreign.json() == error(1201)
    await untouched(db, booking, owner_id, Decimal("60.00"))


@pytest.fixture(scope="module")
async def target(
    http: httpx.AsyncClient, db: Database, clock: ShiftedClock, settings: Settings, make_client: ClientFactory
) -> tuple[int, str, dict[str, Any]]:
    """One cancellable booking that the refusal cases below share (a refusal changes nothing)."""
    factory = PartnerFactory(db, clock, settings)
    try:
        await factory(airports=(IATA,))
        client_id, key = await make_client(balance="100.00")
        booking = await book(http, key)
    finally:
        await factory.close()
    assert booking["status"] == "PENDING_APPROVAL"
    return client_id, key, booking


@pytest.mark.parametrize(
    ("cancellation_id", "code"),
    [
        (None, 1202),
        ("", 1202),
        ("abc", 1203),
        ("1.5", 1203),
        ("1.0", 1203),
        ("-1", 1203),
        ("0", 1203),
        ("99999", 1203),
        (99999, 1203),
        ("true", 1203),
        ("True", 1203),
        (" 1", 1203),
        ("1 ", 1203),
        ("+1", 1203),
        ("１", 1203),
        ("1e0", 1203),
        ("0x1", 1203),
        ("9" * 40, 1203),
        ("1\x00", 1203),
        ("null", 1203),
        ("[1]", 1203),
    ],
)
async def test_cancellation_id_codes(
    http: httpx.AsyncClient, db: Database, target: tuple[int, str, dict[str, Any]], cancellation_id: Any, code: int
) -> None:
    client_id, key, booking = target
    params: dict[str, Any] = {"reservation_no": booking["reservation_no"]}
    if cancellation_id is not None:
        params["cancellation_id"] = cancellation_id
    response = await cancel(http, key, **params)
    assert (response.status_code, response.json()) == (422, error(code))
    await untouched(db, booking, client_id, Decimal("60.00"))


async def test_an_inactive_reason_is_invalid(
    http: httpx.AsyncClient, db: Database, target: tuple[int, str, dict[str, Any]]
) -> None:
    client_id, key, booking = target
    async with db.write() as conn:
        reason_id = (
            await conn.execute(
                insert(cancellation_reasons)
                .values(
                    name="Retired reason",
                    description=None,
                    position=99,
                    active=False,
                )
                .returning(cancellation_reasons.c.id)
            )
        ).scalar_one()
    try:
        response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=reason_id)
        assert (response.status_code, response.json()) == (422, error(1203))
        await untouched(db, booking, client_id, Decimal("60.00"))
    finally:
        async with db.write() as conn:
            await conn.execute(delete(cancellation_reasons).where(cancellation_reasons.c.id == reason_id))


async def test_pending_booking_cannot_be_cancelled(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=(IATA,))
    found = (
        await http.post(
            SEARCH,
            json=search_body(
                pickup_location={"type": "AIRPORT", "iata_code": IATA}, pickup_datetime=future_local(tz=NICE)
            ),
            headers=bearer(key),
        )
    ).json()
    partner.mode, partner.status_code = "status", 503  # down after answering the search
    created = await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))
    booking = created.json()["booking"]
    assert booking["status"] == "PENDING" and booking["is_cancelable"] is False
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1)
    assert (response.status_code, response.json()) == (422, error(1204))
    await untouched(db, booking, client_id, Decimal("60.00"))


async def test_declined_booking_cannot_be_cancelled(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=(IATA,), create_status="DECLINED")
    booking = await book(http, key)
    assert booking["status"] == "DECLINED" and booking["is_cancelable"] is False
    assert await balance_of(db, client_id) == Decimal("100.00")  # refunded by the decline
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1)
    assert (response.status_code, response.json()) == (422, error(1204))
    assert await ledger_of(db, booking["reservation_no"]) == [
        ("debit_booking", Decimal("-40.00")),
        ("credit_refund", Decimal("40.00")),
    ]
    assert await balance_of(db, client_id) == Decimal("100.00")
    assert await updates_queued(db, booking["reservation_no"]) == []


@pytest.mark.parametrize("create_status", ["PENDING", "APPROVED"])
async def test_a_booking_whose_pickup_has_passed_cannot_be_cancelled(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
    create_status: str,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=(IATA,), create_status=create_status, driver=DRIVER)
    booking = await book(http, key)
    assert booking["status"] in ("PENDING_APPROVAL", "APPROVED") and booking["is_cancelable"] is True
    pickup = datetime.fromisoformat(booking["pickup_datetime"])
    clock.advance(pickup - datetime.now(UTC) + timedelta(minutes=1))
    read = (await get(http, key, reservation_no=booking["reservation_no"])).json()
    assert read["status"] == booking["status"] and read["is_cancelable"] is False
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1)
    assert (response.status_code, response.json()) == (422, error(1204))
    await untouched(db, booking, client_id, Decimal("60.00"))


async def test_a_booking_a_minute_before_pickup_can_still_be_cancelled(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=(IATA,))
    booking = await book(http, key)
    pickup = datetime.fromisoformat(booking["pickup_datetime"])
    clock.advance(pickup - datetime.now(UTC) - timedelta(minutes=1))
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=2)
    assert (response.status_code, response.json()) == (200, CANCELLED)
    assert await balance_of(db, client_id) == Decimal("100.00")


# ---- DELETE: success, refund, partner notification ---------------------------------------------


async def test_cancel_refunds_exactly_once_and_tells_the_partner(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=(IATA,))
    booking = await book(http, key, extra_services=[{"id": 2, "quantity": 3}])
    reservation_no = booking["reservation_no"]
    assert await balance_of(db, client_id) == Decimal("47.50")
    response = await cancel(http, key, reservation_no=reservation_no, cancellation_id="2", note="flight moved")
    assert response.status_code == 200
    assert response.content == b'{"status":"Success","message":"Booking cancelled successfully.","data":[]}'
    assert await balance_of(db, client_id) == Decimal("100.00")
    for cancellation_id in (1, 2, 3):  # again, with any reason: refused, no second refund
        again = await cancel(http, key, reservation_no=reservation_no, cancellation_id=cancellation_id)
        assert (again.status_code, again.json()) == (422, error(1204))
    # an already-cancelled booking still answers 1202/1203 before 1204
    assert (await cancel(http, key, reservation_no=reservation_no)).json() == error(1202)
    assert (await cancel(http, key, reservation_no=reservation_no, cancellation_id="x")).json() == error(1203)
    assert await ledger_of(db, reservation_no) == [
        ("debit_booking", Decimal("-52.50")),
        ("credit_refund", Decimal("52.50")),
    ]
    assert await balance_of(db, client_id) == Decimal("100.00")
    assert await transitions_of(db, reservation_no) == [
        (None, "PENDING"),
        ("PENDING", "PENDING_APPROVAL"),
        ("PENDING_APPROVAL", "CANCELLED"),
    ]
    row = await row_of(db, reservation_no)
    assert (row["status"], row["cancellation_reason_id"], row["cancel_note"]) == ("CANCELLED", 2, "flight moved")
    read = (await get(http, key, reservation_no=reservation_no)).json()
    assert read["status"] == "CANCELLED" and read["is_cancelable"] is False and read["price"]["total"] == "52.50"

    expected = {
        "reservation_no": reservation_no,
        "status": "CANCELLED",
        "cancel_reason": "Flight cancelled",
        "note": "flight moved",
    }
    assert await updates_queued(db, reservation_no) == [expected]
    assert partner.calls("/booking/update") == []  # only through the outbox, not within the request
    (update,) = await deliver_outbox(service, partner, "/booking/update")
    assert update.method == "PUT" and update.body == expected and update.signature_ok


async def test_cancel_of_an_approved_booking_without_a_note(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=(IATA,), create_status="APPROVED", driver=DRIVER)
    booking = await book(http, key)
    assert booking["status"] == "APPROVED"
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=5)
    assert (response.status_code, response.json()) == (200, CANCELLED)
    assert await balance_of(db, client_id) == Decimal("100.00")
    read = (await get(http, key, reservation_no=booking["reservation_no"])).json()
    assert read["status"] == "CANCELLED" and read["driver"] is None and read["meeting_point"] is None
    (update,) = await deliver_outbox(service, partner, "/booking/update")
    assert update.body == {
        "reservation_no": booking["reservation_no"],
        "status": "CANCELLED",
        "cancel_reason": "Other",
        "note": None,
    }


@pytest.mark.parametrize(
    ("note", "kept"),
    [
        ("a" * 1000, "a" * 1000),
        ("b" * 1001, "b" * 1000),
        ("é" * 1500, "é" * 1000),
        ("  trimmed  ", "trimmed"),
        ("   ", None),
        ("", None),
        ("nul\x00byte", "nulbyte"),
        # docs/rules/booking.md#text: cleaned of controls and bidirectional overrides, lines kept
        ("😀 \u202e RTL", "😀  RTL"),
        ("a\u2066b\x1b[0m\x85c\r\nd", "ab[0mc\r\nd"),
        ("'; DROP TABLE bookings; --", "'; DROP TABLE bookings; --"),
    ],
)
async def test_cancel_note_is_kept_up_to_1000_characters(
    http: httpx.AsyncClient,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    note: str,
    kept: str | None,
) -> None:
    _, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=(IATA,))
    booking = await book(http, key)
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1, note=note)
    assert (response.status_code, response.json()) == (200, CANCELLED)
    assert (await row_of(db, booking["reservation_no"]))["cancel_note"] == kept
    (queued,) = await updates_queued(db, booking["reservation_no"])
    assert queued["note"] == kept
    (update,) = await deliver_outbox(service, partner, "/booking/update")
    assert update.body["note"] == kept


async def test_reverse_api_client_cancels_without_wallet_movement(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
) -> None:
    client_id, key = await make_client(balance="0.00", pay_type="reverse_api")
    await make_partner(airports=(IATA,))
    booking = await book(http, key)
    response = await cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1)
    assert (response.status_code, response.json()) == (200, CANCELLED)
    assert await ledger_of(db, booking["reservation_no"]) == []
    assert await balance_of(db, client_id) == Decimal("0.00")
    assert (await row_of(db, booking["reservation_no"]))["status"] == "CANCELLED"


async def test_concurrent_cancels_refund_once(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    import asyncio

    client_id, key = await make_client(balance="100.00")
    await make_partner(airports=(IATA,))
    booking = await book(http, key)
    answers = await asyncio.gather(
        *(cancel(http, key, reservation_no=booking["reservation_no"], cancellation_id=1) for _ in range(8))
    )
    assert sorted(a.status_code for a in answers) == [200] + [422] * 7
    assert all(a.json() == error(1204) for a in answers if a.status_code == 422)
    assert await balance_of(db, client_id) == Decimal("100.00")
    assert len(await ledger_of(db, booking["reservation_no"])) == 2
    assert len(await updates_queued(db, booking["reservation_no"])) == 1
    async with db.read() as conn:
        cancels = (
            await conn.execute(
                select(func.count())
                .select_from(booking_transitions)
                .join(bookings, bookings.c.id == booking_transitions.c.booking_id)
                .where(
                    bookings.c.reservation_no == booking["reservation_no"],
                    booking_transitions.c.to_status == "CANCELLED",
                )
            )
        ).scalar_one()
    assert cancels == 1
