"""Phone numbers as people type them (docs/rules/booking.md#phone-numbers, docs/rules/partners.md#driver-phone):
a passenger's phone with its country code in any usual spelling is stored as E.164, on create and on
an amendment; a driver's phone typed by a partner through the reverse API is read in the pickup
airport's country when it has no country code, stored as E.164, and refused with the reason when it
cannot be read (nothing changed). Both databases: the API tests run on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, row_of, search_body
from transfers.db.engine import Database
from transfers.reference.phones import PhoneUnreadable, e164, example

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
UPDATE = "/api/v1/reverse/booking/update"
PARIS = {"type": "POINT", "lat": 48.8566, "lng": 2.3522, "name": "Hôtel de Ville, Paris"}


async def new_booking(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, iata: str, **passenger: Any
) -> tuple[str, str, str]:
    """A PENDING_APPROVAL booking at ``iata``: (reservation_no, client key, partner key)."""
    _, client_key = await make_client()
    _, _, partner_key = await make_partner(airports=(iata,), create_status="PENDING")
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": iata})
    if iata == "CDG":
        body["dropoff_location"] = PARIS
    found = await http.post(SEARCH, json=body, headers=bearer(client_key))
    assert found.status_code == 200, found.text
    search = found.json()
    request = booking_body(search["search_id"], search["vehicles"][0]["vehicle_id"])
    request["passenger"].update(passenger)
    created = await http.post(BOOKING, json=request, headers=bearer(client_key))
    assert created.status_code == 200, created.text
    return created.json()["booking"]["reservation_no"], client_key, partner_key


async def approve(http: httpx.AsyncClient, partner_key: str, reservation_no: str, phone: Any) -> httpx.Response:
    body = {
        "reservation_no": reservation_no,
        "status": "APPROVED",
        "driver_info": {"name": "Sam Driver", "phone": phone, "plate": "LX71 ABC"},
        "meeting_point": "Arrivals, by the pharmacy",
    }
    return await http.put(UPDATE, json=body, headers=bearer(partner_key))


async def test_the_passengers_phone_as_typed_is_stored_as_e164_on_create_and_amend(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    no, client_key, _ = await new_booking(http, make_client, make_partner, "LHR", phone="0044 (0)7911-123456")
    assert (await row_of(db, no))["passenger_phone"] == "+447911123456"
    for typed in ("06 12 34 56 78", "+33 6 CALL ME", "０６１２３４５６７８", True):
        refused = await http.patch(
            BOOKING, params={"reservation_no": no}, json={"passenger": {"phone": typed}}, headers=bearer(client_key)
        )
        assert (refused.status_code, refused.json()["code"]) == (422, 1009), typed
    amended = await http.patch(
        BOOKING,
        params={"reservation_no": no},
        json={"passenger": {"phone": "+33 (0)6 12 34 56 78"}},
        headers=bearer(client_key),
    )
    assert amended.status_code == 202, amended.text
    assert "+33612345678" in amended.text  # the change as the partner is asked for it


@pytest.mark.parametrize(
    ("iata", "typed", "stored"),
    [
        ("LHR", "07400 123456", "+447400123456"),  # no country code: read in the airport's country
        ("LHR", "020 7946 0123", "+442079460123"),
        ("LHR", "+44 (0)7400 123-456", "+447400123456"),
        ("LHR", "0033 6 12 34 56 78", "+33612345678"),  # a French driver at Heathrow keeps France
        ("CDG", "06 12 34 56 78", "+33612345678"),
        ("CDG", "06.12.34.56.78", "+33612345678"),
        ("CDG", "+44 7400 123456", "+447400123456"),
        ("CDG", example("FR"), e164(example("FR"), region="FR")),  # the portal's placeholder
    ],
)
async def test_a_drivers_phone_is_read_in_the_pickup_airports_country(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    iata: str,
    typed: str,
    stored: str,
) -> None:
    no, client_key, partner_key = await new_booking(http, make_client, make_partner, iata)
    answer = await approve(http, partner_key, no, typed)
    assert answer.status_code == 200, answer.text
    assert (await row_of(db, no))["driver_phone"] == stored
    seen = (await http.get(BOOKING, params={"reservation_no": no}, headers=bearer(client_key))).json()
    assert seen["driver"]["phone"] == stored
    # The same number spelled another way again: the details are unchanged (no driver_updated change).
    again = await approve(http, partner_key, no, stored)
    assert again.status_code == 200
    assert (await row_of(db, no))["driver_phone"] == stored


@pytest.mark.parametrize(
    ("typed", "reason"),
    [
        ("1234", "not a valid phone number in GB"),
        ("call me", "only digits, spaces, dashes, dots and brackets"),
        ("07400 CALLME", "only digits, spaces, dashes, dots and brackets"),  # never a keypad's digits
        ("０７４００ １２３４５６", "only digits"),  # full-width digits
        ("+44 7400 123456 ext 9", "only digits"),
        ("+44 +7400 123456", "only digits"),
        ("+999 123 456", "not a valid phone number: check the country code"),
        ("+44 7400 123456" + "-" * 18, "at most 32 characters"),
        ("()-. ", "needs digits"),
    ],
)
async def test_an_unreadable_drivers_phone_is_refused_with_the_reason(
    http: httpx.AsyncClient,
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    typed: str,
    reason: str,
) -> None:
    no, _, partner_key = await new_booking(http, make_client, make_partner, "LHR")
    answer = await approve(http, partner_key, no, typed)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["status"] == "Error" and body["message"].startswith("driver_info.phone: ") and reason in body["message"]
    row = await row_of(db, no)
    assert (row["status"], row["driver_phone"]) == ("PENDING_APPROVAL", None)  # nothing changed


@pytest.mark.parametrize("typed", [None, True, 7400123456, ["07400 123456"], ""])
async def test_a_drivers_phone_of_the_wrong_type_is_refused(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory, typed: Any
) -> None:
    no, _, partner_key = await new_booking(http, make_client, make_partner, "LHR")
    answer = await approve(http, partner_key, no, typed)
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"].startswith("driver_info.phone")
    assert (await row_of(db, no))["status"] == "PENDING_APPROVAL"


def test_every_countrys_own_example_is_accepted_there() -> None:
    """The partner portal shows ``example(country)`` as its placeholder: it must be read back, for every
    country the library knows (one without metadata gets the international fallback)."""
    import phonenumbers

    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        assert e164(example(region), region=region).startswith("+"), region
    assert e164(example(None)) == "+447911123456"
    with pytest.raises(PhoneUnreadable):
        e164("07911 123456")


async def test_the_agencys_support_phone_is_stored_as_e164_and_must_carry_its_country_code(
    db: Database, make_client: ClientFactory
) -> None:
    from transfers.clients import service as clients
    from transfers.clock import SystemClock
    from transfers.db.tables import clients as clients_table

    client_id, _ = await make_client()
    clock = SystemClock()
    assert (
        await clients.set_support_phone(db, clock, client_id, "0044 (0)20 7946-0555", actor="tests") == "+442079460555"
    )
    for typed in ("020 7946 0555", "call us", True):
        with pytest.raises(PhoneUnreadable):
            await clients.set_support_phone(db, clock, client_id, typed, actor="tests")  # type: ignore[arg-type]
    with pytest.raises(clients.ClientNotFound):
        await clients.set_support_phone(db, clock, 10**9, "+442079460555", actor="tests")
    async with db.read() as conn:
        stored = (
            await conn.execute(select(clients_table.c.support_phone).where(clients_table.c.id == client_id))
        ).scalar_one()
    assert stored == "+442079460555"  # the refused ones changed nothing
    assert await clients.set_support_phone(db, clock, client_id, None, actor="tests") is None
