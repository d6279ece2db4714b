"""The agency's ``Bookings`` list and ``Wallet`` (docs/rules/agency-portal.md#pages): its own bookings
only (booked through the API here), found by reservation number, surname or flight, filtered by
status and pickup day, paged; bad filters answered beside their fields, never a 500; the wallet's
balance and statement as the API gives them, and the whole statement as CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest

from tests.agency.conftest import MakeAgency, SignedIn
from tests.conftest import PartnerFactory, bearer
from tests.helpers import booking_body, search_body

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


async def book_by_api(
    http: httpx.AsyncClient, key: str, *, surname: str = "Lovelace", flight: str = "BA117"
) -> dict[str, Any]:
    found = (await http.post(SEARCH, json=search_body(), headers=bearer(key))).json()
    vehicle = found["vehicles"][0]
    body = booking_body(
        found["search_id"],
        vehicle["vehicle_id"],
        passenger={"name": "Ada", "surname": surname, "phone": "+447911123456", "email": "ada@example.com"},
        travel_details={"flight_number": flight, "extra_requests": None},
    )
    answer = await http.post(BOOKING, json=body, headers=bearer(key))
    assert answer.status_code == 200, answer.text
    booking: dict[str, Any] = answer.json()["booking"]
    return booking


async def test_the_list_shows_only_the_agencys_bookings_and_finds_them(
    http: httpx.AsyncClient, make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn
) -> None:
    await make_partner()
    mine, theirs = await make_agency(), await make_agency()
    first = await book_by_api(http, mine.api_key, surname="Hopper", flight="U2 8001")
    second = await book_by_api(http, mine.api_key, surname="Lovelace", flight="BA117")
    other = await book_by_api(http, theirs.api_key, surname="Hopper", flight="U2 8001")
    web = await signed_in(mine.agent)
    page = (await web.get("/agency/bookings")).text
    assert first["reservation_no"] in page and second["reservation_no"] in page
    assert other["reservation_no"] not in page
    assert "LHR local time" in page and "€" in page
    for query, shown, hidden in (
        ("hop", first, second),
        ("  LOVE", second, first),
        (second["reservation_no"].lower(), second, first),
        ("u28001", first, second),
    ):
        found = (await web.get("/agency/bookings", params={"q": query})).text
        assert shown["reservation_no"] in found and hidden["reservation_no"] not in found, query
        assert other["reservation_no"] not in found
    none = (await web.get("/agency/bookings", params={"status": "CANCELLED"})).text
    assert first["reservation_no"] not in none and "No booking matches." in none


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pickup_from": "31/12/2026"}, "Pickup from must be a date like 2026-12-01."),
        ({"pickup_from": "2026-12-02", "pickup_to": "2026-12-01"}, "Pickup to must be on or after pickup from."),
        ({"status": "NOPE"}, "Choose a status from the list."),
    ],
)
async def test_bad_filters_are_answered_beside_their_fields(
    make_agency: MakeAgency, signed_in: SignedIn, params: dict[str, str], message: str
) -> None:
    web = await signed_in((await make_agency()).agent)
    answer = await web.get("/agency/bookings", params=params)
    assert answer.status_code == 422 and message in answer.text and 'class="field-error"' in answer.text


@pytest.mark.parametrize(
    "params",
    [
        {"q": "x" * 10_000},
        {"q": "%_\\'\"; DROP TABLE bookings; --"},
        {"q": "\x00"},
        {"cursor": "not-a-cursor"},
        {"cursor": "A" * 10_000},
        {"pickup_from": "9999-99-99"},
        {"q": "日本語 🚕"},
    ],
)
async def test_ugly_searches_never_break_the_page(
    make_agency: MakeAgency, signed_in: SignedIn, params: dict[str, str]
) -> None:
    web = await signed_in((await make_agency()).agent)
    answer = await web.get("/agency/bookings", params=params)
    assert answer.status_code in (200, 422)
    assert "<h1>Bookings</h1>" in answer.text


async def test_pages_follow_one_another_without_repeats(
    http: httpx.AsyncClient, make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn
) -> None:
    await make_partner()
    agency = await make_agency(balance="10000.00")
    booked = [await book_by_api(http, agency.api_key, surname=f"Page{i}") for i in range(27)]
    web = await signed_in(agency.agent)
    seen: list[str] = []
    path = "/agency/bookings"
    for _ in range(3):
        page = (await web.get(path)).text
        seen += [b["reservation_no"] for b in booked if f">{b['reservation_no']}</a>" in page]
        if 'rel="next"' not in page:
            break
        path = page.split('<a href="', page.count('<a href="'))[0]  # replaced below
        path = page.split('rel="next"')[0].rsplit('<a href="', 1)[1].split('"')[0].replace("&amp;", "&")
    assert sorted(seen) == sorted(b["reservation_no"] for b in booked)
    assert len(seen) == len(set(seen))


async def test_the_wallet_shows_the_balance_statement_and_csv(
    http: httpx.AsyncClient, make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn
) -> None:
    await make_partner()
    agency = await make_agency(balance="500.00")
    booking = await book_by_api(http, agency.api_key)
    wallet = (await http.get("/api/v1/booking-api/wallet", headers=bearer(agency.api_key))).json()
    web = await signed_in(agency.agent)
    page = (await web.get("/agency/wallet")).text
    assert f'id="balance">€{float(wallet["balance"]):,.2f}<' in page
    assert booking["reservation_no"] in page and "Booking paid" in page and "Top-up" in page
    answer = await web.get("/agency/wallet.csv")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert [r["kind"] for r in rows] == ["debit", "top_up"]
    assert rows[0]["reservation_no"] == booking["reservation_no"] and rows[0]["amount"].startswith("-")
    assert rows[0]["balance_after"] == wallet["balance"]
