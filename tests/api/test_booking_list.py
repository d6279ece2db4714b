"""GET /api/v1/booking-api/bookings (beyond the original booking API): filters, keyset pagination, scoping, refusals.

Bookings are made through the API (search, then book) against test partners at Spanish airports.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from transfers.api import schemas
from transfers.clock import ShiftedClock

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
LIST = "/api/v1/booking-api/bookings"
REVERSE_UPDATE = "/api/v1/reverse/booking/update"
MADRID = ZoneInfo("Europe/Madrid")
POINTS = {
    "MAD": {"type": "POINT", "lat": 40.4169, "lng": -3.7035, "name": "Puerta del Sol, Madrid"},
    "PMI": {"type": "POINT", "lat": 39.5696, "lng": 2.6502, "name": "Catedral de Palma"},
    "AGP": {"type": "POINT", "lat": 36.7213, "lng": -4.4214, "name": "Malaga centre"},
    "ALC": {"type": "POINT", "lat": 38.3452, "lng": -0.4810, "name": "Alicante centre"},
}
# Partners of the bulk tests approve at once: bookings left PENDING_APPROVAL would pile up for the
# reconciliation job of later tests, which share this session's database.
APPROVING = {"create_status": "APPROVED", "driver": {"name": "Toni", "phone": "+34600123456", "plate": "1234 ABC"}}


async def search(http: httpx.AsyncClient, key: str, iata: str, days: int = 10) -> str:
    body = search_body(
        pickup_datetime=future_local(days=days, tz=MADRID),
        pickup_location={"type": "AIRPORT", "iata_code": iata},
        dropoff_location=POINTS[iata],
    )
    response = await http.post(SEARCH, json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    assert response.json()["vehicles"], response.text
    search_id: str = response.json()["search_id"]
    return search_id


async def book(http: httpx.AsyncClient, key: str, search_id: str) -> dict[str, Any]:
    response = await http.post(BOOKING, json=booking_body(search_id), headers=bearer(key))
    assert response.status_code == 200, response.text
    booking: dict[str, Any] = response.json()["booking"]
    return booking


async def page(http: httpx.AsyncClient, key: str, params: Any = None) -> dict[str, Any]:
    response = await http.get(LIST, params=params, headers=bearer(key))
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    schemas.BookingPage.model_validate(body)  # the published shape, extra fields forbidden
    return body


def numbers(body: dict[str, Any]) -> list[str]:
    return [b["reservation_no"] for b in body["data"]]


async def listed(http: httpx.AsyncClient, key: str, **params: Any) -> list[str]:
    return numbers(await page(http, key, {"limit": 100, **params}))


async def test_pages_are_stable_with_no_duplicates_or_gaps_while_bookings_are_created(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client(balance="5000.00")
    await make_partner(airports=("MAD",), **APPROVING)
    search_id = await search(http, key, "MAD")
    created = [(await book(http, key, search_id))["reservation_no"] for _ in range(25)]
    newest_first = created[::-1]

    first = await page(http, key, {"limit": 10})
    assert numbers(first) == newest_first[:10] and first["next_cursor"]
    newer = [(await book(http, key, search_id))["reservation_no"] for _ in range(2)]
    second = await page(http, key, {"limit": 10, "cursor": first["next_cursor"]})
    assert numbers(second) == newest_first[10:20] and second["next_cursor"]
    newer.append((await book(http, key, search_id))["reservation_no"])
    third = await page(http, key, {"limit": 10, "cursor": second["next_cursor"]})
    assert numbers(third) == newest_first[20:25]
    assert third["next_cursor"] is None  # the last page says so; no empty page after it

    seen = numbers(first) + numbers(second) + numbers(third)
    assert len(seen) == len(set(seen)) == 25 and set(seen) == set(created)
    # a fresh listing shows the newer bookings first; the default page size is 20
    fresh = await page(http, key)
    assert numbers(fresh) == (newer[::-1] + newest_first)[:20] and fresh["next_cursor"]
    stamps = [datetime.fromisoformat(b["created_at"]) for b in fresh["data"]]
    assert stamps == sorted(stamps, reverse=True)
    assert all(s.utcoffset() == timedelta(0) for s in stamps)
    # an exact page boundary: 28 bookings in pages of 14 give two pages, the second the last
    halves = await page(http, key, {"limit": 14})
    rest = await page(http, key, {"limit": 14, "cursor": halves["next_cursor"]})
    assert numbers(halves) + numbers(rest) == newer[::-1] + newest_first and rest["next_cursor"] is None


async def test_bookings_created_in_the_same_instant_page_by_id(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("MAD",), **APPROVING)
    search_id = await search(http, key, "MAD")
    instant = datetime.now(UTC) - timedelta(seconds=5)
    monkeypatch.setattr(clock, "now", lambda: instant)
    created = [(await book(http, key, search_id))["reservation_no"] for _ in range(3)]
    monkeypatch.undo()
    later = (await book(http, key, search_id))["reservation_no"]
    cursor, seen = None, []
    for _ in range(4):
        body = await page(http, key, {"limit": 1, **({"cursor": cursor} if cursor else {})})
        seen += numbers(body)
        cursor = body["next_cursor"]
    assert cursor is None
    assert seen == [later, *created[::-1]]  # ties: the later-inserted booking first


async def test_filters_by_status_pickup_and_creation_time(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    _, _, partner_key = await make_partner(airports=("PMI",), create_status="PENDING")
    soon, later = await search(http, key, "PMI", days=10), await search(http, key, "PMI", days=20)
    a, b = await book(http, key, soon), await book(http, key, soon)
    c, d = await book(http, key, later), await book(http, key, later)
    a_no, b_no, c_no, d_no = (x["reservation_no"] for x in (a, b, c, d))
    approve = {
        "reservation_no": b_no,
        "status": "APPROVED",
        "driver_info": {"name": "Toni", "phone": "+34600123456", "plate": "1234 ABC"},
    }
    assert (await http.put(REVERSE_UPDATE, json=approve, headers=bearer(partner_key))).status_code == 200
    cancel = {"reservation_no": c_no, "cancellation_id": 1}
    assert (await http.delete(BOOKING, params=cancel, headers=bearer(key))).status_code == 200

    assert await listed(http, key) == [d_no, c_no, b_no, a_no]
    assert await listed(http, key, status="APPROVED") == [b_no]
    assert await listed(http, key, status="APPROVED,CANCELLED") == [c_no, b_no]
    assert await listed(http, key, status=["APPROVED", "CANCELLED"]) == [c_no, b_no]
    assert await listed(http, key, status=["PENDING_APPROVAL,CANCELLED", "APPROVED"]) == [d_no, c_no, b_no, a_no]
    assert await listed(http, key, status="PENDING_APPROVAL") == [d_no, a_no]
    assert await listed(http, key, status="DEFAULT") == []
    approved = (await page(http, key, {"status": "APPROVED"}))["data"][0]
    assert approved["driver"] == {"name": "Toni", "phone": "+34600123456", "plate": "1234 ABC"}

    middle = (datetime.now(UTC) + timedelta(days=15)).replace(microsecond=0)
    assert await listed(http, key, pickup_from=middle.isoformat()) == [d_no, c_no]
    assert await listed(http, key, pickup_to=middle.isoformat()) == [b_no, a_no]
    in_madrid = middle.astimezone(MADRID).isoformat()  # "+01:00": httpx sends the + as %2B
    assert "+" in in_madrid and await listed(http, key, pickup_to=in_madrid) == [b_no, a_no]
    zulu = middle.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert await listed(http, key, pickup_from=zulu, status="CANCELLED") == [c_no]
    c_pickup = c["pickup_datetime"]
    assert await listed(http, key, pickup_from=c_pickup, pickup_to=c_pickup) == []  # to is exclusive
    assert await listed(http, key, pickup_from=c_pickup) == [d_no, c_no]  # from is inclusive

    assert await listed(http, key, created_from=b["created_at"]) == [d_no, c_no, b_no]
    assert await listed(http, key, created_to=c["created_at"]) == [b_no, a_no]
    assert await listed(http, key, created_from=b["created_at"], created_to=d["created_at"]) == [c_no, b_no]
    assert await listed(http, key, created_from=b["created_at"], created_to=b["created_at"]) == []

    # filters and pages compose: the cursor continues within the same filter
    first = await page(http, key, {"status": "PENDING_APPROVAL,APPROVED", "limit": 2})
    assert numbers(first) == [d_no, b_no]
    rest = await page(http, key, {"status": "PENDING_APPROVAL,APPROVED", "limit": 2, "cursor": first["next_cursor"]})
    assert numbers(rest) == [a_no] and rest["next_cursor"] is None
    for number in (a_no, d_no):  # leave nothing waiting for the reconciliation job of later tests
        assert (
            await http.delete(BOOKING, params={"reservation_no": number, "cancellation_id": 1}, headers=bearer(key))
        ).status_code == 200
    assert await listed(http, key, status="CANCELLED") == [d_no, c_no, a_no]


async def test_only_the_callers_bookings_are_listed(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, mine = await make_client()
    _, theirs = await make_client()
    _, empty = await make_client()
    await make_partner(airports=("AGP",), **APPROVING)
    my_search, their_search = await search(http, mine, "AGP"), await search(http, theirs, "AGP")
    own = [(await book(http, mine, my_search))["reservation_no"] for _ in range(2)]
    foreign = [(await book(http, theirs, their_search))["reservation_no"] for _ in range(3)]
    assert await listed(http, mine) == own[::-1]
    assert await listed(http, theirs) == foreign[::-1]
    for status in (None, "APPROVED", "PENDING_APPROVAL,PENDING,APPROVED,CANCELLED,DECLINED"):
        assert not set(await listed(http, mine, **({"status": status} if status else {}))) & set(foreign)
    assert await page(http, empty) == {"data": [], "next_cursor": None}
    # a cursor is bound to the client it was issued to
    their_cursor = (await page(http, theirs, {"limit": 1}))["next_cursor"]
    refused = await http.get(LIST, params={"cursor": their_cursor}, headers=bearer(mine))
    assert refused.status_code == 422 and refused.json()["code"] == "INVALID_CURSOR"
    assert foreign[-1] not in refused.text and foreign[-2] not in refused.text

    unauthenticated = await http.get(LIST)
    assert unauthenticated.status_code == 401 and unauthenticated.json()["code"] == "UNAUTHENTICATED"
    wrong_key = await http.get(LIST, params={"status": "BOGUS"}, headers=bearer("tk_nope"))
    assert wrong_key.status_code == 401  # authentication comes before the filters


@pytest.mark.parametrize(
    "params",
    [
        {"status": "BOGUS"},
        {"status": "approved"},  # values are exact, like every enum of the API
        {"status": ["APPROVED", "CANCELED"]},
        {"status": ""},
        {"status": "APPROVED,"},  # empty values are not statuses either
        {"pickup_from": "yesterday"},
        {"pickup_from": "2026-12-01T00:00:00"},  # no offset: ambiguous across airports
        {"pickup_to": "2026-12-01"},
        {"pickup_to": ""},
        {"created_from": "2026-13-01T00:00:00Z"},
        {"created_to": "2026-12-01T00:00:00 01:00"},  # a raw "+" in a URL arrives as a space
        {"pickup_from": "2026-12-02T00:00:00Z", "pickup_to": "2026-12-01T00:00:00Z"},
        {"limit": ""},
        {"limit": "0"},
        {"limit": "101"},
        {"limit": "-1"},
        {"limit": "1.5"},
        {"limit": "ten"},
        {"limit": "٣"},
        {"limit": " 5"},
        {"status": "APPROVED, CANCELLED"},
        {"pickup_from": " 2026-12-01T00:00:00Z"},
    ],
)
async def test_bad_filters_answer_invalid_filter(
    http: httpx.AsyncClient, make_client: ClientFactory, params: dict[str, Any]
) -> None:
    _, key = await make_client()
    response = await http.get(LIST, params=params, headers=bearer(key))
    assert response.status_code == 422, response.text
    body = response.json()
    assert set(body) == {"status", "code", "message"}
    assert body["status"] == "Error" and body["code"] == "INVALID_FILTER"
    assert isinstance(body["message"], str) and body["message"]
    schemas.ServiceErrorBody.model_validate(body)


def tampered(cursor: str) -> Iterator[str]:
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    version, created, booking_id, tag = raw.split(b"|", 3)
    for changed in (
        b"|".join([version, created, str(int(booking_id) + 1).encode(), tag]),  # a later id
        b"|".join([version, created.replace(b"20", b"21", 1), booking_id, tag]),  # another instant
        b"|".join([b"2", created, booking_id, tag]),  # another version
        raw[:-1] + bytes([raw[-1] ^ 1]),  # one bit of the tag
    ):
        yield base64.urlsafe_b64encode(changed).decode().rstrip("=")
    yield cursor[:-2]  # truncated
    yield cursor + "A"  # lengthened
    yield cursor.upper()


async def test_bad_cursors_answer_invalid_cursor(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("ALC",), **APPROVING)
    search_id = await search(http, key, "ALC")
    for _ in range(3):
        await book(http, key, search_id)
    cursor = (await page(http, key, {"limit": 1}))["next_cursor"]
    assert cursor and "|" not in cursor and "=" not in cursor
    for bad in [*tampered(cursor), "x", "!!!!", "%%%", "A" * 500, "é", "", "MXwy", "bm90IGEgY3Vyc29y"]:
        response = await http.get(LIST, params={"cursor": bad, "limit": 1}, headers=bearer(key))
        assert response.status_code == 422, bad
        assert response.json() == {"status": "Error", "code": "INVALID_CURSOR", "message": response.json()["message"]}
    assert (await http.get(LIST, params={"cursor": cursor, "limit": 1}, headers=bearer(key))).status_code == 200


async def test_documented_as_beyond_the_spec(http: httpx.AsyncClient) -> None:
    doc = (await http.get("/openapi.json")).json()
    operation = doc["paths"][LIST]["get"]
    assert operation["operationId"] == "list_bookings"
    assert "Beyond the original booking API" in operation["description"]
    assert operation["security"]
    params = {p["name"]: p for p in operation["parameters"]}
    assert set(params) == {
        "status",
        "pickup_from",
        "pickup_to",
        "created_from",
        "created_to",
        "limit",
        "cursor",
        "trip_id",  # docs/rules/return-trips.md#legs
    }
    assert params["limit"]["schema"]["maximum"] == 100 and params["limit"]["schema"]["default"] == 20
    assert params["status"]["schema"]["type"] == "array"
    assert params["status"]["schema"]["items"]["pattern"].startswith("^(PENDING|PENDING_APPROVAL|APPROVED|")
    assert params["pickup_from"]["schema"]["format"] == "date-time"
    assert "422" in operation["responses"] and "401" in operation["responses"]
