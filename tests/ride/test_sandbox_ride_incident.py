"""The sandbox docs' same-day incident (docs/integrators/sandbox.md#incidents, docs/rules/incidents.md#report):
the sandbox partner's RIDE plays the whole ride days before the pickup on the compressed clock (the injected
clock, no sleeps), so the booking is COMPLETED early and a client's report is accepted at once; the same
report before the ride ended was refused."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, select

from tests.conftest import bearer
from tests.ride.conftest import Ride
from tests.ride.test_sandbox_ride import as_sandbox, driver_of
from tests.servers import LiveServer
from transfers.db.engine import Database
from transfers.db.tables import bookings, incidents

INCIDENTS = "/api/v1/booking-api/booking/incidents"


async def test_an_incident_right_after_a_sandbox_ride_days_before_its_pickup(
    ride: Ride, service: LiveServer, db: Database
) -> None:
    ride.at(-timedelta(days=3))
    await as_sandbox(db, ride.partner_id)
    body = {"type": "DRIVER_LATE", "description": "The driver arrived 40 minutes after the pickup time."}
    params = {"reservation_no": ride.reservation_no}
    before = await ride.http.post(INCIDENTS, params=params, json=body, headers=bearer(ride.client_key))
    assert (before.status_code, before.json()["code"]) == (422, "INCIDENT_NOT_ALLOWED")
    driver, reverse = await driver_of(ride, service, service.app.state.services)
    try:
        await driver.ride()
    finally:
        await reverse.aclose()
    assert (await ride.booking())["status"] == "COMPLETED"
    reported = await ride.http.post(INCIDENTS, params=params, json=body, headers=bearer(ride.client_key))
    assert reported.status_code == 201, reported.text
    assert (reported.json()["type"], reported.json()["status"]) == ("DRIVER_LATE", "OPEN")
    async with db.read() as conn:
        count = (
            await conn.execute(
                select(func.count())
                .select_from(incidents.join(bookings, bookings.c.id == incidents.c.booking_id))
                .where(bookings.c.reservation_no == ride.reservation_no)
            )
        ).scalar_one()
    assert count == 1
