"""``Book`` books what the API books (docs/rules/agency-portal.md#pages), without JavaScript, over real
HTTP against the service and a fake partner on loopback: extras with their quantities (a quantity the
API refuses is said beside the extras, nothing written), a return trip on the same form (the way out
and the way back chosen as a pair: two bookings of one trip, one debit each), a transfer to the
airport, and half a way back said beside its field."""

from __future__ import annotations

import re
from decimal import Decimal

import httpx

from tests.agency.conftest import MakeAgency, SignedIn
from tests.agency.test_agency_book import PASSENGER, count_bookings, first_offer_link, hidden, search_form
from tests.conftest import PartnerFactory, bearer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

GET_BOOKING = "/api/v1/booking-api/booking"


async def _booking(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, object]:
    answer = await http.get(GET_BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return dict(body.get("booking", body))


def _reservation(answer: httpx.Response) -> str:
    assert answer.status_code == 303, answer.text[:3000]
    return answer.headers["location"].split("/")[-1].split("?")[0]


async def test_extras_are_booked_with_their_quantities(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    offers = await web.post("/agency/book", search_form(clock))
    assert "Extras: Child seat (" in offers.text and " each)" in offers.text  # the offer says what it offers
    link = first_offer_link(offers.text)  # the Corolla: a child seat per item, meet & greet per booking
    form = await web.get(link)
    seat = re.search(r'<label for="(extra_\d+)">Child seat</label>', form.text)
    meet = re.search(r'<label for="(extra_\d+)">Meet &amp; greet</label>', form.text)
    assert seat and meet, form.text[:4000]
    assert "each: how many?" in form.text and "for the booking, whatever the number" in form.text
    # A quantity the API refuses (1021): beside the extras, the typed values kept, nothing booked.
    refused = await web.post(link, {**PASSENGER, "key": hidden(form.text, "key"), seat.group(1): "two"})
    assert refused.status_code == 422
    assert 'id="extras-error"' in refused.text and "EXTRA_SERVICE_QUANTITY_INVALID, 1021" in refused.text
    assert 'value="two"' in refused.text
    assert await count_bookings(db, agency.client_id) == 0
    booked = await web.post(
        link, {**PASSENGER, "key": hidden(form.text, "key"), seat.group(1): "2", meet.group(1): "1"}
    )
    resource = await _booking(http, agency.api_key, _reservation(booked))
    assert resource["extra_services"] == ["Child seat x 2", "Meet & greet"]
    price = resource["price"]
    assert isinstance(price, dict) and Decimal(price["total"]) > Decimal("40.00") + Decimal("10.00")


async def test_a_return_trip_is_booked_on_the_same_form(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
    db: Database,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    form = search_form(clock)
    offers = await web.post("/agency/book", {**form, "return_date": form["pickup_date"], "return_time": "20:00"})
    assert offers.status_code == 200, offers.text[:3000]
    assert "The way out:" in offers.text and "The way back:" in offers.text
    search_id = re.search(r'<form method="get" action="/agency/book/([^"/]+)" class="pair">', offers.text)
    backs = re.findall(r'name="back" value="(\d+)"', offers.text)
    outs = re.findall(r'name="vehicle" value="(\d+)"', offers.text)
    assert search_id and backs and outs and not set(backs) & set(outs)
    chosen = await web.get(f"/agency/book/{search_id.group(1)}", params={"vehicle": outs[0], "back": backs[0]})
    assert chosen.status_code == 303
    link = chosen.headers["location"]
    assert link == f"/agency/book/{search_id.group(1)}/{outs[0]}?back={backs[0]}"
    page = await web.get(link)
    assert page.status_code == 200 and "The way back" in page.text and "Book both" in page.text
    assert 'name="back" value="' + backs[0] + '"' in page.text
    answer = await web.post(
        link.split("?")[0], {**PASSENGER, "key": hidden(page.text, "key"), "back": backs[0], "return_flight": "BA118"}
    )
    out = await _booking(http, agency.api_key, _reservation(answer))
    trip = out["trip"]
    assert isinstance(trip, dict) and trip["leg"] == 1
    back = await _booking(http, agency.api_key, str(trip["other_reservation_no"]))
    assert back["trip"] == {"id": trip["id"], "leg": 2, "other_reservation_no": out["reservation_no"]}
    assert back["flight_number"] == "BA118" and back["pickup_location"]["type"] == "POINT"  # type: ignore[index]
    assert await count_bookings(db, agency.client_id) == 2
    # The same form again (a double click): the same pair, no third booking.
    again = await web.post(
        link.split("?")[0], {**PASSENGER, "key": hidden(page.text, "key"), "back": backs[0], "return_flight": "BA118"}
    )
    assert _reservation(again) == out["reservation_no"]
    assert await count_bookings(db, agency.client_id) == 2
    # "No way back" among the choices books the way out alone.
    single = await web.get(f"/agency/book/{search_id.group(1)}", params={"vehicle": outs[0], "back": "none"})
    assert single.headers["location"] == f"/agency/book/{search_id.group(1)}/{outs[0]}"


async def test_half_a_way_back_is_said_beside_its_field(
    make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn, clock: ShiftedClock
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    form = search_form(clock)
    half = await web.post("/agency/book", {**form, "return_date": form["pickup_date"]})
    assert half.status_code == 422 and 'id="return_time-error"' in half.text
    early = await web.post("/agency/book", {**form, "return_date": form["pickup_date"], "return_time": "14:45"})
    assert early.status_code == 422 and 'id="return_date-error"' in early.text
    assert "SEARCH_RETURN_DATETIME_INVALID, 1324" in early.text


async def test_a_transfer_to_the_airport(
    http: httpx.AsyncClient,
    make_agency: MakeAgency,
    make_partner: PartnerFactory,
    signed_in: SignedIn,
    clock: ShiftedClock,
) -> None:
    await make_partner()
    agency = await make_agency()
    web = await signed_in(agency.agent)
    offers = await web.post("/agency/book", search_form(clock, direction="to"))
    assert offers.status_code == 200, offers.text[:3000]
    assert "From Trafalgar Square to " in offers.text and "(LHR)" in offers.text
    link = first_offer_link(offers.text)
    form = await web.get(link)
    assert "The departing flight" in form.text
    booked = await web.post(link, {**PASSENGER, "key": hidden(form.text, "key"), "flight": "BA118"})
    resource = await _booking(http, agency.api_key, _reservation(booked))
    assert resource["pickup_location"] == {"name": "Trafalgar Square", "type": "POINT"}
    dropoff = resource["dropoff_location"]
    assert isinstance(dropoff, dict) and dropoff["type"] == "AIRPORT"
