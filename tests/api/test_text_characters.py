"""docs/rules/booking.md#text beyond the create and the search (tests/api/test_booking_validation.py and
tests/api/test_search_validation.py): an amendment's names and requests, an incident's description, and
what a partner says through the reverse API (its driver's name, phone and plate, the meeting point, a
cancellation's reason) refuse each class of character with their own codes and words, and write nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import ONE_LINE_ONLY, REFUSED_CHARACTERS
from tests.ride.conftest import BOOKING, REVERSE, Ride, approved_ride
from transfers.clock import ShiftedClock

INCIDENTS = "/api/v1/booking-api/booking/incidents"
DRIVER = {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"}
ONE_LINE = {**REFUSED_CHARACTERS, **ONE_LINE_ONLY}


@pytest.fixture
async def ride(
    http: httpx.AsyncClient, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> Ride:
    """An APPROVED booking whose pickup is days ahead (amendable: its policy is free until pickup)."""
    return await approved_ride(http, clock, make_client, make_partner)


async def amend(ride: Ride, body: dict[str, Any]) -> httpx.Response:
    return await ride.http.patch(
        BOOKING, params={"reservation_no": ride.reservation_no}, json=body, headers=bearer(ride.client_key)
    )


@pytest.mark.parametrize("value", list(ONE_LINE.values()), ids=list(ONE_LINE))
async def test_an_amendments_name_and_flight_refuse_each_class(ride: Ride, value: str) -> None:
    for body, code in (
        ({"passenger": {"name": value}}, 1006),
        ({"passenger": {"surname": value}}, 1007),
        ({"travel_details": {"flight_number": value}}, 1013),
    ):
        answer = await amend(ride, body)
        assert (answer.status_code, answer.json()["code"]) == (422, code), (body, answer.text)
    assert (await ride.booking())["amendment"] is None


@pytest.mark.parametrize("value", list(REFUSED_CHARACTERS.values()), ids=list(REFUSED_CHARACTERS))
async def test_an_amendments_requests_refuse_each_class_but_keep_lines(ride: Ride, value: str) -> None:
    answer = await amend(ride, {"travel_details": {"extra_requests": value}})
    assert (answer.status_code, answer.json()["code"]) == (422, 1012), answer.text
    assert (await ride.booking())["amendment"] is None


async def test_an_amendments_requests_may_span_lines(ride: Ride) -> None:
    answer = await amend(ride, {"travel_details": {"extra_requests": "Child seat\r\nCall on arrival\tthanks"}})
    assert answer.status_code == 202, answer.text


@pytest.mark.parametrize("value", list(REFUSED_CHARACTERS.values()), ids=list(REFUSED_CHARACTERS))
async def test_an_incidents_description_refuses_each_class(ride: Ride, value: str) -> None:
    ride.at(timedelta(hours=1))
    answer = await ride.http.post(
        INCIDENTS,
        params={"reservation_no": ride.reservation_no},
        json={"type": "DRIVER_LATE", "description": f"The driver {value} was late"},
        headers=bearer(ride.client_key),
    )
    assert (answer.status_code, answer.json()["code"]) == (422, "INVALID_INCIDENT"), answer.text
    assert "may not contain control characters or bidirectional overrides (U+" in answer.json()["message"]
    listed = await ride.http.get(
        INCIDENTS, params={"reservation_no": ride.reservation_no}, headers=bearer(ride.client_key)
    )
    assert listed.json()["data"] == []


async def test_an_incidents_description_may_span_lines(ride: Ride) -> None:
    ride.at(timedelta(hours=1))
    answer = await ride.http.post(
        INCIDENTS,
        params={"reservation_no": ride.reservation_no},
        json={"type": "DRIVER_LATE", "description": "Waited 40 min.\nNo call.\r\n\tThe client"},
        headers=bearer(ride.client_key),
    )
    assert answer.status_code == 201, answer.text


@pytest.mark.parametrize("value", list(ONE_LINE.values()), ids=list(ONE_LINE))
async def test_the_reverse_apis_driver_refuses_each_class(ride: Ride, value: str) -> None:
    before = await ride.booking()
    for field in ("name", "phone", "plate"):
        update = {
            "reservation_no": ride.reservation_no,
            "status": "APPROVED",
            "driver_info": {**DRIVER, field: value},
        }
        answer = await ride.http.put(f"{REVERSE}/update", json=update, headers=bearer(ride.partner_key))
        assert answer.status_code == 422, answer.text
        message = answer.json()["message"]
        assert answer.json()["status"] == "Error" and message.startswith(f"driver_info.{field}: "), message
        assert "may not contain control characters or bidirectional overrides (U+" in message
    assert await ride.booking() == before


@pytest.mark.parametrize("value", list(REFUSED_CHARACTERS.values()), ids=list(REFUSED_CHARACTERS))
async def test_the_reverse_apis_free_texts_refuse_each_class(ride: Ride, value: str) -> None:
    before = await ride.booking()
    for update in (
        {"status": "APPROVED", "driver_info": DRIVER, "meeting_point": f"Arrivals {value} hall"},
        {"status": "CANCELLED", "cancel_reason": f"No {value} driver"},
    ):
        body = {"reservation_no": ride.reservation_no, **update}
        answer = await ride.http.put(f"{REVERSE}/update", json=body, headers=bearer(ride.partner_key))
        assert answer.status_code == 422, answer.text
        assert "may not contain control characters or bidirectional overrides" in answer.json()["message"]
    assert await ride.booking() == before


async def test_the_reverse_apis_meeting_point_may_span_lines(ride: Ride) -> None:
    body = {
        "reservation_no": ride.reservation_no,
        "status": "APPROVED",
        "driver_info": {**DRIVER, "name": "\u0639\u0644\u064a\u061c"},  # a right-to-left name keeps its mark
        "meeting_point": "Arrivals hall\nBy the Costa Coffee",
    }
    answer = await ride.http.put(f"{REVERSE}/update", json=body, headers=bearer(ride.partner_key))
    assert answer.status_code == 200, answer.text
    assert (await ride.booking())["meeting_point"] == "Arrivals hall\nBy the Costa Coffee"
