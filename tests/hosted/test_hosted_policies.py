"""docs/rules/cancellation.md with a hosted partner (docs/rules/hosted-partners.md): its rate card's cancellation
policy is the
offers' and the booking's, and an amendment is accepted in-process (no HTTP call)."""

from __future__ import annotations

import httpx

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, bearer
from tests.helpers import booking_body
from tests.hosted.conftest import HostedFactory, example_card
from tests.hosted.test_hosted_search_and_booking import BOOKING, company, search_at
from tests.servers import LiveServer

POINT = {"type": "POINT", "lat": 55.9533, "lng": -3.1883, "name": "Princes Street, Edinburgh"}
CARD_POLICY = [{"hours_before_pickup": 72, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 25.5}]


async def test_the_card_policy_is_sold_and_an_amendment_is_accepted_in_process(
    http: httpx.AsyncClient, service: LiveServer, make_client: ClientFactory, make_hosted: HostedFactory
) -> None:
    _, key = await make_client(balance="500.00")
    await make_hosted(airports=("EDI",), name="Hosted Edinburgh", card=example_card(cancellation_policy=CARD_POLICY))
    found = await search_at(http, key, "EDI", point=POINT)
    sedan = company(found, "Hosted Edinburgh")[0]
    assert sedan["cancellation_policy"]["tiers"] == CARD_POLICY
    created = await http.post(BOOKING, json=booking_body(found["search_id"], sedan["vehicle_id"]), headers=bearer(key))
    booking = created.json()["booking"]
    assert booking["cancellation_policy"]["tiers"] == CARD_POLICY
    response = await http.patch(
        BOOKING,
        params={"reservation_no": booking["reservation_no"]},
        json={"travel_details": {"flight_number": "EZY42"}},
        headers=bearer(key),
    )
    assert response.status_code == 202, response.text
    for _ in range(10):
        await svc_of(service).dispatcher.run_once(limit=200)  # type: ignore[union-attr]
        current = (
            await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
        ).json()
        if current["amendment"]["status"] != "PENDING":
            break
    assert current["amendment"]["status"] == "APPLIED" and current["flight_number"] == "EZY42"
