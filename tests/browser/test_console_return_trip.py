"""The console's booking page of a return trip's leg (docs/rules/return-trips.md#legs): the trip, which leg, and
a link to the other leg's page, which links back."""

from __future__ import annotations

import httpx
from playwright.async_api import expect

from tests.browser.conftest import ConsoleAs
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer


async def test_each_leg_links_to_the_other(
    console_as: ConsoleAs,
    console_url: str,
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client(balance="500.00")
    await make_partner(airports=("EDI",))
    async with httpx.AsyncClient(base_url=service.url, timeout=30) as http:
        body = search_body(
            pickup_location={"type": "AIRPORT", "iata_code": "EDI"},
            dropoff_location={"type": "POINT", "lat": 55.9533, "lng": -3.1883, "name": "Edinburgh"},
            return_datetime=future_local(days=13, hour=17, minute=0),
        )
        found = (await http.post("/api/v1/booking-api/search", json=body, headers=bearer(key))).json()
        pair = (
            await http.post(
                "/api/v1/booking-api/booking",
                json=booking_body(found["search_id"], return_vehicle_id=found["return_vehicles"][0]["vehicle_id"]),
                headers=bearer(key),
            )
        ).json()
    out, back = pair["booking"], pair["return_booking"]
    console = await console_as("support")
    page = console.page
    await page.goto(f"{console_url}/bookings/{out['reservation_no']}")
    row = page.get_by_role("row").filter(has_text="Return trip")
    await expect(row).to_contain_text(out["trip"]["id"])
    await expect(row).to_contain_text("way out (leg 1)")
    await row.get_by_role("link", name=back["reservation_no"]).click()
    await page.wait_for_url(f"{console_url}/bookings/{back['reservation_no']}")
    back_row = page.get_by_role("row").filter(has_text="Return trip")
    await expect(back_row).to_contain_text("way back (leg 2)")
    await expect(back_row.get_by_role("link", name=out["reservation_no"])).to_have_attribute(
        "href", f"/console/bookings/{out['reservation_no']}"
    )
