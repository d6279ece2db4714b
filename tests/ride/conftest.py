"""A booking APPROVED by a test partner, and the clock moved next to its pickup, for the ride's tests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from transfers.clock import ShiftedClock

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
REVERSE = "/api/v1/reverse/booking"
EVENTS = f"{REVERSE}/events"
POSITIONS = f"{REVERSE}/positions"


@dataclass
class Ride:
    """One APPROVED booking: the client's and the partner's keys, its pickup (UTC)."""

    http: httpx.AsyncClient
    clock: ShiftedClock
    reservation_no: str
    client_id: int
    client_key: str
    partner_id: int
    partner_key: str
    pickup_at: datetime

    def at(self, delta: timedelta) -> None:
        """Move the clock to pickup + ``delta``."""
        self.clock.advance(self.pickup_at + delta - self.clock.now())

    async def event(self, kind: str, occurred_at: datetime | str | None = None, **more: Any) -> httpx.Response:
        when = occurred_at if occurred_at is not None else self.clock.now() - timedelta(seconds=5)
        body = {
            "reservation_no": self.reservation_no,
            "type": kind,
            "occurred_at": when.isoformat() if isinstance(when, datetime) else when,
            **more,
        }
        return await self.http.post(EVENTS, json=body, headers=bearer(self.partner_key))

    async def positions(self, *items: dict[str, Any]) -> httpx.Response:
        body = {"reservation_no": self.reservation_no, "positions": list(items)}
        return await self.http.post(POSITIONS, json=body, headers=bearer(self.partner_key))

    def position(self, lat: float = 51.47, lng: float = -0.45, ago: float = 1.0, **more: Any) -> dict[str, Any]:
        return {"lat": lat, "lng": lng, "at": (self.clock.now() - timedelta(seconds=ago)).isoformat(), **more}

    async def booking(self) -> dict[str, Any]:
        answer = await self.http.get(
            BOOKING, params={"reservation_no": self.reservation_no}, headers=bearer(self.client_key)
        )
        assert answer.status_code == 200, answer.text
        booking: dict[str, Any] = answer.json()
        return booking


async def approved_ride(
    http: httpx.AsyncClient,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    *,
    iata: str = "LHR",
    pickup: dict[str, Any] | None = None,
) -> Ride:
    client_id, client_key = await make_client()
    _, partner_id, partner_key = await make_partner(airports=(iata,), create_status="PENDING")
    body = search_body(pickup_location=pickup or {"type": "AIRPORT", "iata_code": iata})
    if pickup is not None:
        body["dropoff_location"] = {"type": "AIRPORT", "iata_code": iata}
    found = await http.post(SEARCH, json=body, headers=bearer(client_key))
    assert found.status_code == 200, found.text
    search = found.json()
    vehicle = search["vehicles"][0]
    created = await http.post(
        BOOKING, json=booking_body(search["search_id"], vehicle["vehicle_id"]), headers=bearer(client_key)
    )
    assert created.status_code == 200, created.text
    reservation_no = created.json()["booking"]["reservation_no"]
    approve = {
        "reservation_no": reservation_no,
        "status": "APPROVED",
        "driver_info": {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"},
    }
    approved = await http.put(f"{REVERSE}/update", json=approve, headers=bearer(partner_key))
    assert approved.status_code == 200, approved.text
    info = (await http.get(f"{REVERSE}/info/{reservation_no}", headers=bearer(partner_key))).json()
    pickup_at = datetime.fromisoformat(info["booking_details"]["pickup_datetime"])
    return Ride(http, clock, reservation_no, client_id, client_key, partner_id, partner_key, pickup_at)


@pytest.fixture
async def ride(
    http: httpx.AsyncClient, clock: ShiftedClock, make_client: ClientFactory, make_partner: PartnerFactory
) -> Ride:
    """An APPROVED booking at Heathrow, the clock 30 minutes before its pickup."""
    found = await approved_ride(http, clock, make_client, make_partner)
    found.at(-timedelta(minutes=30))
    return found
