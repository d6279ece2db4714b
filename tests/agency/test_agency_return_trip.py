"""The agency portal's booking page of a return trip's leg (docs/rules/return-trips.md#legs), as the
console shows it: the trip, which leg, and a link to the other leg's page, which links back; the way
back booked without a flight says so rather than showing an empty cell."""

from __future__ import annotations

import html
import re

import httpx

from tests.agency.conftest import MakeAgency, SignedIn
from tests.conftest import PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body


async def test_each_leg_links_to_the_other(
    http: httpx.AsyncClient, make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn
) -> None:
    await make_partner()
    agency = await make_agency()
    found = (
        await http.post(
            "/api/v1/booking-api/search",
            json=search_body(return_datetime=future_local(days=14, hour=18, minute=0)),
            headers=bearer(agency.api_key),
        )
    ).json()
    pair = (
        await http.post(
            "/api/v1/booking-api/booking",
            json=booking_body(found["search_id"], return_vehicle_id=found["return_vehicles"][0]["vehicle_id"]),
            headers=bearer(agency.api_key),
        )
    ).json()
    out, back = pair["booking"], pair["return_booking"]
    web = await signed_in(agency.agent)
    out_page = html.unescape((await web.get(f"/agency/bookings/{out['reservation_no']}")).text)
    assert f"{out['trip']['id']}, the way out (leg 1)" in out_page
    assert (
        f'<a href="/agency/bookings/{back["reservation_no"]}" id="other-leg">{back["reservation_no"]}</a>' in out_page
    )
    back_page = html.unescape((await web.get(f"/agency/bookings/{back['reservation_no']}")).text)
    assert f"{out['trip']['id']}, the way back (leg 2)" in back_page
    assert f'<a href="/agency/bookings/{out["reservation_no"]}" id="other-leg">{out["reservation_no"]}</a>' in back_page
    # no flight for the way back (the cell may carry attributes: the flight's box is id="flight")
    assert re.search(r'<th scope="row">Flight</th><td[^>]*>None given', back_page)
    assert re.search(r'<th scope="row">Flight</th><td[^>]*>BA117', out_page)


async def test_a_single_booking_shows_no_trip(
    http: httpx.AsyncClient, make_agency: MakeAgency, make_partner: PartnerFactory, signed_in: SignedIn
) -> None:
    await make_partner()
    agency = await make_agency()
    found = (await http.post("/api/v1/booking-api/search", json=search_body(), headers=bearer(agency.api_key))).json()
    booked = (
        await http.post(
            "/api/v1/booking-api/booking", json=booking_body(found["search_id"]), headers=bearer(agency.api_key)
        )
    ).json()["booking"]
    web = await signed_in(agency.agent)
    page = (await web.get(f"/agency/bookings/{booked['reservation_no']}")).text
    assert page.count('<th scope="row">') > 5 and "Return trip" not in page and 'id="other-leg"' not in page
