"""A hosted partner's accepted booking on a chosen flight, checked by the sandbox flight provider
(docs/rules/flights.md#sandbox-provider: ``ZZ1045`` 45 min late, ``ZZ9001`` cancelled, ``ZZ1240`` beyond the
default 180-minute limit): the pages that show a flight's news open on it."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy import select, update

from tests.conftest import bearer
from tests.helpers import booking_body, search_body
from tests.ride_pages.helpers import BOOKING, GLASGOW, PARTNER_REFERENCE, PASSENGER, SEARCH, Ride, accept
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, clients
from transfers.flights import watch as flight_watch
from transfers.flights.sandbox import SandboxProvider
from transfers.services import Services


async def book_flight(
    http: httpx.AsyncClient, key: str, company: str, db: Database, partner_id: int, flight_number: str
) -> Ride:
    """A GLA -> Glasgow booking of ``company`` (a hosted partner) at 14:30 local, on ``flight_number``."""
    body = search_body(pickup_location={"type": "AIRPORT", "iata_code": "GLA"}, dropoff_location=GLASGOW)
    found = (await http.post(SEARCH, json=body, headers=bearer(key))).json()
    vehicle = next(v for v in found["vehicles"] if v["company"] == company)
    created = await http.post(
        BOOKING,
        json=booking_body(
            found["search_id"],
            vehicle["vehicle_id"],
            passenger=PASSENGER,
            travel_details={"flight_number": flight_number, "extra_requests": None},
        ),
        headers=bearer(key),
    )
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]
    no = booking["reservation_no"]
    async with db.write() as conn:
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


async def accepted_on_flight(
    svc: Services,
    http: httpx.AsyncClient,
    key: str,
    company: str,
    partner_id: int,
    flight_number: str,
    clock: ShiftedClock,
) -> Ride:
    """Booked, accepted with a driver, the clock 3 h before the pickup, and the flight checked now."""
    ride = await book_flight(http, key, company, svc.db, partner_id, flight_number)
    await accept(svc, ride)
    clock.offset += ride.pickup_at - timedelta(hours=3) - clock.now()
    await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, ride.reservation_no)
    return ride
