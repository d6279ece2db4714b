"""A new booking's flight is checked right after its creation, beside the create's answer
(docs/rules/flights.md#watching), on both databases, with the sandbox provider and the injected clock: no
pass of the worker runs, yet the booking's ``flight`` shows the provider's news (a late flight: the pickup
already moved, the partner's notice written, the next check 6 h before the arrival). A provider that
fails never fails the create: the failure is kept on the watch for the worker's pass to retry."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest
from sqlalchemy import func, select

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, future_local, search_body
from tests.integration.test_flight_watch import BOOKING, SEARCH, book, get, minutes_between, run_pass, watch_of
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.tables import bookings
from transfers.db.tables.bookings import outbox
from transfers.services import Services

# DATES: each flight is booked on a date no other test books it on (days 24-27 ahead). Bookings of one flight,
# airport and local date share one watch; a watch another test checked less than a minute ago is not checked
# at creation again (docs/rules/flights.md#watching), so a shared date made these tests depend on the order.


@pytest.fixture
def svc(service: LiveServer) -> Services:
    found: Services = service.app.state.services
    return found


@pytest.fixture
def checking(svc: Services) -> Iterator[Services]:
    """The service with the check at creation on (the other flight tests drive the passes themselves) and a
    budget no other test's watches can use up."""
    before = svc.settings
    svc.settings = before.model_copy(
        update={"flight_check_at_creation": True, "flight_provider_max_calls_per_minute": 100_000}
    )
    yield svc
    svc.settings = before


async def test_a_late_flight_moves_the_pickup_right_after_booking(
    http: httpx.AsyncClient,
    checking: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "ZZ1045", days=24)  # DATES
    await checking.background.drain()  # the check the create started; no watch pass runs in this test

    checked = await get(http, key, booking["reservation_no"])
    assert minutes_between(checked["pickup_datetime"], booking["pickup_datetime"]) == 45
    flight = checked["flight"]
    assert flight["delay_minutes"] == 45 and flight["status"] == "SCHEDULED"
    assert abs(datetime.fromisoformat(flight["checked_at"]) - clock.now()) < timedelta(minutes=1)
    watch = await watch_of(checking.db, booking["reservation_no"])
    assert watch["checked_at"] is not None and watch["lease_until"] is None
    assert watch["next_check_at"] == datetime.fromisoformat(flight["estimated_arrival"]) - timedelta(hours=6)
    async with checking.db.read() as conn:
        notices = (
            await conn.execute(
                select(func.count())
                .select_from(outbox.join(bookings, bookings.c.id == outbox.c.booking_id))
                .where(bookings.c.reservation_no == booking["reservation_no"], outbox.c.kind == "booking.flight_update")
            )
        ).scalar_one()
    assert notices == 1


async def test_an_on_time_flight_shows_the_providers_status_and_a_second_booking_shares_the_check(
    http: httpx.AsyncClient,
    checking: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    first = await book(http, key, "ZZ7777", days=26)
    await checking.background.drain()
    assert (await get(http, key, first["reservation_no"]))["flight"]["checked_at"] is not None
    called = (await watch_of(checking.db, first["reservation_no"]))["called_at"]
    # the same flight within the minute: not asked again at creation (a flight many bookings share is checked
    # at creation at most once a minute); its watch is due, so the worker's next pass checks the newcomer
    second = await book(http, key, "ZZ7777", days=26)
    await checking.background.drain()
    assert (await get(http, key, second["reservation_no"]))["flight"]["checked_at"] is None
    assert (await watch_of(checking.db, second["reservation_no"]))["called_at"] == called
    await run_pass(checking, clock)
    assert (await get(http, key, second["reservation_no"]))["flight"]["checked_at"] is not None
    clock.advance(timedelta(minutes=2))  # later: the next booking on it is checked at its creation again
    third = await book(http, key, "ZZ7777", days=26)
    await checking.background.drain()
    shown = (await get(http, key, third["reservation_no"]))["flight"]
    assert shown["checked_at"] is not None and shown["delay_minutes"] == 0
    assert (await watch_of(checking.db, third["reservation_no"]))["called_at"] > called


async def test_a_failing_provider_never_fails_the_create_and_is_kept_on_the_watch(
    http: httpx.AsyncClient,
    checking: Services,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    checking.settings = checking.settings.model_copy(
        update={
            "flight_provider": "aerodatabox",
            "flight_provider_url": "http://127.0.0.1:9",  # nothing listens: refused at once
            "flight_provider_key": "k",
            "flight_provider_timeout_seconds": 2,
        }
    )
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "ZZ1030", days=25)  # answered 200 whatever the provider does
    await checking.background.drain()
    shown = await get(http, key, booking["reservation_no"])
    assert shown["pickup_datetime"] == booking["pickup_datetime"] and shown["flight"]["checked_at"] is None
    watch = await watch_of(checking.db, booking["reservation_no"])
    assert watch["failures"] == 1 and watch["last_error"] and watch["next_check_at"] is not None


async def test_a_return_trips_airport_leg_is_checked_at_creation_like_a_single_booking(
    http: httpx.AsyncClient,
    checking: Services,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """docs/rules/flights.md#watching: every new booking with a tracked flight is checked at creation;
    a return trip's legs are new bookings too. The way out picks up at the airport (watched, checked:
    its late flight moves its pickup at once); the way back picks up at an address (no watch)."""
    await make_partner()
    _, key = await make_client(balance="500.00")
    body = search_body(
        pickup_datetime=future_local(days=27, hour=14, minute=30),  # DATES
        return_datetime=future_local(days=27, hour=20, minute=0),
    )
    found = await http.post(SEARCH, json=body, headers=bearer(key))
    assert found.status_code == 200, found.text
    search = found.json()
    create = booking_body(
        search["search_id"],
        return_vehicle_id=int(search["return_vehicles"][0]["vehicle_id"]),
        travel_details={"flight_number": "ZZ1045"},
    )
    created = await http.post(BOOKING, json=create, headers=bearer(key))
    assert created.status_code == 200, created.text
    out, back = created.json()["booking"], created.json()["return_booking"]
    assert out["flight"]["checked_at"] is None  # the check runs beside the answer, never in its way
    await checking.background.drain()  # the check the pair started; no watch pass runs in this test

    checked_out = await get(http, key, out["reservation_no"])
    assert minutes_between(checked_out["pickup_datetime"], out["pickup_datetime"]) == 45
    assert checked_out["flight"]["delay_minutes"] == 45 and checked_out["flight"]["checked_at"] is not None
    watch = await watch_of(checking.db, out["reservation_no"])
    assert watch["checked_at"] is not None and watch["lease_until"] is None
    checked_back = await get(http, key, back["reservation_no"])
    assert checked_back["pickup_datetime"] == back["pickup_datetime"] and checked_back["flight"] is None
