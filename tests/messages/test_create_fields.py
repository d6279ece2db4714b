"""The create's ``passenger.language`` and ``messages`` (docs/rules/messages.md#settings) over real HTTP, on
the session's database (on PostgreSQL the single create and the return pair take the one-statement path,
on SQLite the general one): the language kept normalized or as absent (never an error, whatever is
sent), the switches kept as the channels switched off, every malformed ``messages`` 1023 in its place in
the order of the codes with nothing written, both legs of a return trip carrying both, and neither in
the BookingResource."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, row_of, search_body
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import bookings
from transfers_sdk import AsyncTransfersClient, ValidationFailed

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


async def _search(http: httpx.AsyncClient, key: str, **more: Any) -> dict[str, Any]:
    response = await http.post(SEARCH, json=search_body(**more), headers=bearer(key))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def _passenger(language: Any = None, *, drop: bool = False) -> dict[str, Any]:
    passenger: dict[str, Any] = {
        "name": "Ada",
        "surname": "Lovelace",
        "phone": "+447911123456",
        "email": "ada@example.com",
    }
    if not drop:
        passenger["language"] = language
    return passenger


async def _count(db: Database, client_id: int) -> int:
    async with db.read() as conn:
        return int(
            (
                await conn.execute(select(func.count()).select_from(bookings).where(bookings.c.client_id == client_id))
            ).scalar_one()
        )


LANGUAGES: list[tuple[Any, str | None]] = [
    ("de", "de"),
    ("pt-br", "pt-BR"),
    ("ZH-hant-TW", "zh-Hant-TW"),
    (" fr-CA ", "fr-CA"),
    ("ja", "ja"),
    ("xx", None),
    ("english", None),
    ("x-klingon", None),
    ("de-" + "a" * 197, None),  # 200 characters
    ("日本語", None),
    ("de\u202e", None),
    ("", None),
    (None, None),
    (123, None),
    (True, None),
    (["de"], None),
    ({"tag": "de"}, None),
]


async def test_the_passenger_language_is_kept_normalized_or_as_absent(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="5000.00")
    await make_partner()
    search_id = (await _search(http, key))["search_id"]
    cases: list[tuple[dict[str, Any], str | None]] = [(_passenger(v), kept) for v, kept in LANGUAGES]
    cases.append((_passenger(drop=True), None))
    for passenger, kept in cases:
        response = await http.post(BOOKING, json=booking_body(search_id, passenger=passenger), headers=bearer(key))
        assert response.status_code == 200, (passenger, response.text)
        booking = response.json()["booking"]
        row = await row_of(db, booking["reservation_no"])
        assert row["passenger_language"] == kept, passenger
        assert row["message_channels"] is None
        # not in the BookingResource: the passenger is shown as before
        assert set(booking["passenger"]) == {"name", "surname", "email", "phone"}
        assert "messages" not in booking and "language" not in booking


SWITCHES: list[tuple[Any, dict[str, bool] | None]] = [
    ({"email": False}, {"email": False}),
    ({"sms": False}, {"sms": False}),
    ({"email": False, "sms": False}, {"email": False, "sms": False}),
    ({"email": True, "sms": False}, {"sms": False}),
    ({"email": True, "sms": True}, None),  # true never switches on: nothing off
    ({"email": None}, None),
    ({}, None),
    (None, None),
]


async def test_the_switches_keep_the_channels_switched_off(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="5000.00")
    await make_partner()
    search_id = (await _search(http, key))["search_id"]
    for switches, kept in SWITCHES:
        response = await http.post(
            BOOKING,
            json=booking_body(search_id, messages=switches, passenger=_passenger("pt-BR")),
            headers=bearer(key),
        )
        assert response.status_code == 200, (switches, response.text)
        row = await row_of(db, response.json()["booking"]["reservation_no"])
        assert (row["message_channels"], row["passenger_language"]) == (kept, "pt-BR"), switches


BAD_SWITCHES: list[Any] = [
    True,
    False,
    123,
    "email",
    "",
    [],
    [{"email": False}],
    {"e-mail": False},
    {"email": False, "fax": False},
    {"EMAIL": False},
    {"email": "false"},
    {"email": 0},
    {"sms": 1},
    {"sms": []},
    {"email": {"on": False}},
    {"x" * 200: False},
]


@pytest.mark.parametrize("switches", BAD_SWITCHES)
async def test_a_malformed_messages_is_1023_and_writes_nothing(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory, switches: Any
) -> None:
    client_id, key = await make_client(balance="5000.00")
    await make_partner()
    search_id = (await _search(http, key))["search_id"]
    response = await http.post(BOOKING, json=booking_body(search_id, messages=switches), headers=bearer(key))
    assert response.status_code == 422, response.text
    assert response.json() == {"status": "Error", "code": 1023, "message": "MESSAGES_INVALID"}
    assert await _count(db, client_id) == 0


async def test_1023_comes_after_the_extras_before_1022_and_1101(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    client_id, key = await make_client(balance="1.00")
    await make_partner()
    found = await _search(http, key, return_datetime=future_local(days=17, hour=18, minute=0))
    sid = found["search_id"]
    bad = {"sms": "no"}
    cases = [
        (booking_body(sid, passenger=None, messages=bad), 1005),
        (booking_body(sid, suitcase=99, messages=bad), 1015),
        (booking_body(sid, extra_services="seat", messages=bad), 1018),
        (booking_body(sid, extra_services=[{"id": 1, "quantity": 0}], messages=bad), 1021),
        (booking_body(sid, messages=bad), 1023),
        (booking_body(sid, messages=bad, return_vehicle_id=99), 1023),
        (booking_body(sid, messages={"sms": False}, return_vehicle_id=99), 1022),
        (booking_body(sid, messages={"sms": False}), 1101),  # everything valid: the balance last
    ]
    for body, code in cases:
        assert (await http.post(BOOKING, json=body, headers=bearer(key))).json()["code"] == code, body
    assert await _count(db, client_id) == 0


async def test_both_legs_of_a_return_trip_carry_them(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="5000.00")
    await make_partner()
    found = await _search(http, key, return_datetime=future_local(days=17, hour=18, minute=0))
    body = booking_body(
        found["search_id"],
        return_vehicle_id=int(found["return_vehicles"][0]["vehicle_id"]),
        passenger=_passenger("nl-be"),
        messages={"email": False, "sms": True},
    )
    response = await http.post(BOOKING, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    answer = response.json()
    for leg in (answer["booking"], answer["return_booking"]):
        row = await row_of(db, leg["reservation_no"])
        assert (row["passenger_language"], row["message_channels"]) == ("nl-BE", {"email": False})
        assert set(leg["passenger"]) == {"name", "surname", "email", "phone"}

    plain = booking_body(found["search_id"], return_vehicle_id=int(found["return_vehicles"][0]["vehicle_id"]))
    response = await http.post(BOOKING, json=plain, headers=bearer(key))
    assert response.status_code == 200, response.text
    for leg in (response.json()["booking"], response.json()["return_booking"]):
        row = await row_of(db, leg["reservation_no"])
        assert (row["passenger_language"], row["message_channels"]) == (None, None)


async def test_the_openapi_document_shows_both_fields(http: httpx.AsyncClient) -> None:
    doc = (await http.get("/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    passenger = schemas["PassengerIn"]["properties"]
    assert "language" in passenger and "language" not in schemas["PassengerIn"].get("required", [])
    assert "BCP 47" in str(passenger["language"])
    create = schemas["CreateBookingRequest"]["properties"]
    assert "messages" in create and "1023" in str(create["messages"])
    switches = schemas["MessageSwitches"]
    assert set(switches["properties"]) == {"email", "sms"} and switches.get("additionalProperties") is False


async def test_the_sdk_sends_the_language_and_the_switches(
    service: LiveServer, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    _, key = await make_client(balance="500.00")
    await make_partner()
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(search_body())
        with pytest.raises(ValidationFailed) as refused:
            await api.create_booking(
                found.search_id,
                found.vehicles[0].vehicle_id,
                _passenger("de"),
                {"flight_number": "BA117"},
                messages={"sms": "off"},  # type: ignore[dict-item]
            )
        assert refused.value.code == 1023
        booked = await api.create_booking(
            found.search_id,
            found.vehicles[0].vehicle_id,
            _passenger("DE-at"),
            {"flight_number": "BA117"},
            messages={"sms": False},
        )
    row = await row_of(db, booked.reservation_no)
    assert (row["passenger_language"], row["message_channels"]) == ("de-AT", {"sms": False})
