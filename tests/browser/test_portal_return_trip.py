"""The partner portal's booking page of a return trip's leg (docs/rules/return-trips.md#legs), as the console
shows it: the trip, which leg, and a link to the other leg when that leg is this partner's too (the other
company's leg is named, not linked: its page is not this partner's); the way back without a flight says so."""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import expect

from tests.browser.test_partner_portal import GLASGOW, portal_as, portal_url  # noqa: F401 (fixtures)
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.hosted.conftest import HostedFactory


async def _pair(http: httpx.AsyncClient, key: str, out_company: str, back_company: str) -> tuple[dict[str, Any], ...]:
    body = search_body(
        pickup_location={"type": "AIRPORT", "iata_code": "GLA"},
        dropoff_location=GLASGOW,
        return_datetime=future_local(days=13, hour=17, minute=0),
    )
    found = (await http.post("/api/v1/booking-api/search", json=body, headers=bearer(key))).json()
    out = next(v for v in found["vehicles"] if v["company"] == out_company)
    back = next(v for v in found["return_vehicles"] if v["company"] == back_company)
    answer = await http.post(
        "/api/v1/booking-api/booking",
        json=booking_body(found["search_id"], out["vehicle_id"], return_vehicle_id=back["vehicle_id"]),
        headers=bearer(key),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["booking"], answer.json()["return_booking"]


async def test_each_leg_links_to_the_other_when_both_are_the_partners(
    http: httpx.AsyncClient,
    portal_as: Any,  # noqa: F811
    portal_url: str,  # noqa: F811
    make_client: ClientFactory,
    make_hosted: HostedFactory,
) -> None:
    _, key = await make_client(balance="1000.00")
    mine = await make_hosted(airports=("GLA",), name="Trip Cabs")
    await make_hosted(airports=("GLA",), name="Other Cabs")
    out, back = await _pair(http, key, "Trip Cabs", "Trip Cabs")
    mixed_out, mixed_back = await _pair(http, key, "Trip Cabs", "Other Cabs")
    page = (await portal_as(mine)).page
    await page.goto(f"{portal_url}/bookings/{out['reservation_no']}")
    row = page.get_by_role("row").filter(has_text="Return trip")
    await expect(row).to_contain_text(f"{out['trip']['id']}, the way out (leg 1)")
    await row.get_by_role("link", name=back["reservation_no"]).click()
    await page.wait_for_url(f"{portal_url}/bookings/{back['reservation_no']}")
    back_row = page.get_by_role("row").filter(has_text="Return trip")
    await expect(back_row).to_contain_text("the way back (leg 2)")
    await expect(back_row.get_by_role("link", name=out["reservation_no"])).to_have_attribute(
        "href", f"/partner/bookings/{out['reservation_no']}"
    )
    await expect(page.get_by_role("row").filter(has_text="Flight")).to_contain_text("None given")
    # the other leg booked with another company: named, not linked
    await page.goto(f"{portal_url}/bookings/{mixed_out['reservation_no']}")
    mixed_row = page.get_by_role("row").filter(has_text="Return trip")
    await expect(mixed_row).to_contain_text(f"{mixed_back['reservation_no']} (booked with another transport company)")
    await expect(mixed_row.get_by_role("link")).to_have_count(0)
