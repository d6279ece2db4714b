"""A hosted partner's booking to open the ride pages on: booked by a client over HTTP, accepted with a
driver through the reverse API's use case (as the portal's Accept does)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from sqlalchemy import select, update

from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.bookings import reverse
from transfers.db.engine import Database
from transfers.db.tables import bookings, clients
from transfers.partners.wire import WireDriver
from transfers.services import Services

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
GLASGOW = {"type": "POINT", "lat": 55.8642, "lng": -4.2518, "name": "George Square, Glasgow"}
PASSENGER = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada.secret@example.com"}
DRIVER = WireDriver(name="Morag Campbell", phone="+447400900123", plate="SK21 ABC")
MEETING_POINT = "Arrivals hall, by the Costa Coffee"
PARTNER_REFERENCE = "PREF-NEVER-SHOWN-77"


@dataclass(frozen=True)
class Ride:
    reservation_no: str
    token: str
    pickup_at: datetime
    booking: dict[str, Any]
    client_name: str
    partner_id: int


def services_of(service: LiveServer) -> Services:
    svc: Services = service.app.state.services
    return svc


async def book_hosted(http: httpx.AsyncClient, key: str, company: str, db: Database, partner_id: int) -> Ride:
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "GLA"}, dropoff_location=GLASGOW)
    found = (await http.post(SEARCH, json=body, headers=bearer(key))).json()
    vehicle = next(v for v in found["vehicles"] if v["company"] == company)
    answer = await http.post(
        BOOKING, json=booking_body(found["search_id"], vehicle["vehicle_id"], passenger=PASSENGER), headers=bearer(key)
    )
    assert answer.status_code == 200, answer.text
    booking: dict[str, Any] = answer.json()["booking"]
    no = booking["reservation_no"]
    async with db.write() as conn:
        # A reference the partner keeps: it must never reach the traveller.
        await conn.execute(
            update(bookings).where(bookings.c.reservation_no == no).values(partner_reference=PARTNER_REFERENCE)
        )
        row = (
            await conn.execute(
                select(bookings.c.tracking_token, bookings.c.pickup_at, clients.c.name)
                .select_from(bookings.join(clients, clients.c.id == bookings.c.client_id))
                .where(bookings.c.reservation_no == no)
            )
        ).one()
    return Ride(no, row.tracking_token, row.pickup_at, booking, row.name, partner_id)


async def accept(svc: Services, ride: Ride, *, meeting_point: str = MEETING_POINT) -> None:
    update_ = reverse.ReverseUpdate(
        reservation_no=ride.reservation_no, status="APPROVED", driver_info=DRIVER, meeting_point=meeting_point
    )
    await reverse.apply_update(svc, ride.partner_id, update_)
