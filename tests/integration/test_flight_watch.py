"""The flight watch through a flight's life (docs/rules/flights.md), on both databases, with the injected clock
moved from booking to landing: a real test partner receives the flight notice, a real receiver the client
events. A delay moves the pickup with the booked offset kept (notice + ``booking.pickup_time_changed``), the
schedule leaves the flight alone until 6 h before, landing ends the watch; a cancelled flight or one beyond
the partner's limit disrupts the booking (``booking.flight_disrupted``, no notice, cancelling costs 0.00);
the partner's Error to a notice is recorded and undoes nothing; bookings on one flight share one call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from starlette.applications import Starlette
from starlette.routing import Route

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_flight_provider import FakeAeroDataBox
from tests.helpers import booking_body, future_local, search_body
from tests.servers import LiveServer
from tests.webhook_receiver import Receiver
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.tables import bookings, flight_watches, hosted_capacity, partners
from transfers.deliveries import webhook_dispatcher
from transfers.errors import Unavailable
from transfers.flights import repository as flight_repository
from transfers.flights import watch as flight_watch
from transfers.flights.aerodatabox import AeroDataBoxProvider
from transfers.flights.sandbox import SandboxProvider
from transfers.operators.booking_story import load_detail
from transfers.services import Services
from transfers.webhooks.delivery import WebhookDispatcher
from transfers_sdk import Booking as SdkBooking
from transfers_sdk.webhooks import BookingEvent, parse_event

SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
ENDPOINTS = "/api/v1/booking-api/webhook-endpoints"
QUOTE = "/api/v1/booking-api/booking/cancellation-quote"


@pytest.fixture
def svc(service: LiveServer) -> Services:
    found: Services = service.app.state.services
    return found


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    made = Receiver()
    server = await LiveServer(made.app()).start()
    made.url = server.url
    yield made
    await server.stop()


@pytest.fixture
async def hooks(svc: Services) -> AsyncIterator[WebhookDispatcher]:
    made = webhook_dispatcher(svc)
    yield made
    await made.aclose()


def generous(settings: Settings) -> Settings:
    """The service's settings with a budget no other test's watches can use up."""
    return settings.model_copy(update={"flight_provider_max_calls_per_minute": 100_000})


async def book(http: httpx.AsyncClient, key: str, flight: str, *, days: int = 3) -> dict[str, Any]:
    pickup = (datetime.now().astimezone() + timedelta(days=days)).strftime("%Y-%m-%d 14:30")
    found = await http.post(SEARCH, json=search_body(pickup_datetime=pickup), headers=bearer(key))
    assert found.status_code == 200, found.text
    body = booking_body(found.json()["search_id"], "1", travel_details={"flight_number": flight})
    created = await http.post(BOOKING, json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    return booking


async def get(http: httpx.AsyncClient, key: str, reservation_no: str) -> dict[str, Any]:
    answer = await http.get(BOOKING, params={"reservation_no": reservation_no}, headers=bearer(key))
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def subscribe(http: httpx.AsyncClient, key: str, receiver: Receiver) -> None:
    created = await http.post(ENDPOINTS, json={"url": receiver.hook_url, "events": ["*"]}, headers=bearer(key))
    assert created.status_code == 201, created.text
    receiver.secrets.append(created.json()["secret"])


async def watch_of(db: Database, reservation_no: str) -> dict[str, Any]:
    async with db.read() as conn:
        row = (
            (
                await conn.execute(
                    select(flight_watches)
                    .join(bookings, bookings.c.flight_watch_id == flight_watches.c.id)
                    .where(bookings.c.reservation_no == reservation_no)
                )
            )
            .mappings()
            .one()
        )
    return dict(row)


async def run_pass(svc: Services, clock: ShiftedClock) -> SandboxProvider:
    provider = SandboxProvider(clock)
    await flight_watch.watch_pass(svc.db, provider, clock, generous(svc.settings), limit=10_000)
    return provider


async def events_for(
    hooks: WebhookDispatcher, receiver: Receiver, reservation_no: str, kind: str, count: int = 1
) -> list[dict[str, Any]]:
    def seen() -> list[dict[str, Any]]:
        return [
            d.body
            for d in receiver.received
            if d.body["type"] == kind and d.body["data"]["booking"]["reservation_no"] == reservation_no
        ]

    for _ in range(40):
        if len(seen()) >= count:
            break
        await hooks.run_once()
        await asyncio.sleep(0.05)
    return seen()


async def notices_for(svc: Services, partner: Any, reservation_no: str, count: int = 1) -> list[Any]:
    def seen() -> list[Any]:
        return [
            c
            for c in partner.calls("/booking/update")
            if c.body.get("reason") == "FLIGHT_UPDATE" and c.body.get("reservation_no") == reservation_no
        ]

    for _ in range(20):
        if len(seen()) >= count:
            break
        assert svc.dispatcher is not None
        await svc.dispatcher.run_once(limit=200)
    return seen()


def minutes_between(later: str, earlier: str) -> float:
    return (datetime.fromisoformat(later) - datetime.fromisoformat(earlier)).total_seconds() / 60


async def test_a_late_flight_moves_the_pickup_tells_the_partner_and_the_client_then_lands(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    hooks: WebhookDispatcher,
) -> None:
    partner, _, _ = await make_partner()
    _, key = await make_client()
    await subscribe(http, key, receiver)
    booking = await book(http, key, "zz 1045")
    number = booking["reservation_no"]
    assert booking["flight_number"] == "ZZ1045"  # normalised
    assert booking["flight"]["status"] == "SCHEDULED" and booking["flight"]["number"] == "ZZ1045"
    assert booking["original_pickup_datetime"] == booking["pickup_datetime"]
    assert minutes_between(booking["free_wait_until"], booking["pickup_datetime"]) == 60

    await run_pass(svc, clock)  # the check at creation: the news is known from the first check
    moved = await get(http, key, number)
    assert minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == 45
    assert moved["original_pickup_datetime"] == booking["pickup_datetime"]
    assert minutes_between(moved["free_wait_until"], moved["pickup_datetime"]) == 60
    assert moved["flight"]["delay_minutes"] == 45 and moved["flight"]["status"] == "SCHEDULED"
    assert moved["flight"]["checked_at"] is not None

    (notice,) = await notices_for(svc, partner, number)
    assert notice.body["status"] == "AMENDED" and notice.body["changes"] == {
        "pickup_datetime": moved["pickup_datetime"]
    }
    assert notice.body["trip"]["date"] == moved["pickup_datetime"]
    (event,) = await events_for(hooks, receiver, number, "booking.pickup_time_changed")
    assert event["data"]["previous_pickup_datetime"] == booking["pickup_datetime"]
    assert event["data"]["reason"] == "FLIGHT_DELAY"
    assert event["data"]["booking"]["pickup_datetime"] == moved["pickup_datetime"]
    # the SDK reads the new fields and the event's extras
    typed = SdkBooking.from_json(moved)
    assert typed.flight is not None and typed.flight.delay_minutes == 45 and typed.flight.status == "SCHEDULED"
    assert typed.original_pickup_datetime == datetime.fromisoformat(booking["pickup_datetime"])
    assert typed.free_wait_until == datetime.fromisoformat(moved["free_wait_until"])
    parsed = parse_event(event)
    assert isinstance(parsed, BookingEvent) and parsed.reason == "FLIGHT_DELAY"
    assert parsed.previous_pickup_datetime == datetime.fromisoformat(booking["pickup_datetime"])

    # nothing is due until 6 h before the (estimated) arrival: another pass does not ask
    watch = await watch_of(svc.db, number)
    arrival = datetime.fromisoformat(moved["flight"]["estimated_arrival"])
    assert watch["next_check_at"] == arrival - timedelta(hours=6)
    called = watch["called_at"]
    await run_pass(svc, clock)
    assert (await watch_of(svc.db, number))["called_at"] == called

    clock.advance(watch["next_check_at"] - clock.now() + timedelta(seconds=1))  # 6 h before: checked, no news
    before = clock.now()
    await run_pass(svc, clock)
    again = await get(http, key, number)
    assert again["pickup_datetime"] == moved["pickup_datetime"]
    slot = (await watch_of(svc.db, number))["next_check_at"] - before
    assert timedelta(minutes=30) <= slot < timedelta(minutes=31)  # then every 30 minutes

    clock.advance(arrival - clock.now() + timedelta(minutes=1))  # landed
    await run_pass(svc, clock)
    landed = await get(http, key, number)
    assert landed["flight"]["status"] == "LANDED" and landed["flight"]["actual_arrival"] is not None
    assert landed["pickup_datetime"] == moved["pickup_datetime"]
    assert (await watch_of(svc.db, number))["next_check_at"] is None  # the watch is over
    assert len(await notices_for(svc, partner, number)) == 1  # one notice for one move
    assert len(await events_for(hooks, receiver, number, "booking.pickup_time_changed")) == 1

    detail = await load_detail(svc.db, number)
    assert detail is not None
    flight_lines = [t.reason or "" for t in detail.transitions if t.actor == "system:flights"]
    assert any("pickup moved" in line for line in flight_lines)
    assert any("LANDED" in line for line in flight_lines)


@pytest.mark.parametrize("flight", ["ZZ9001", "ZZ9002"])
async def test_a_cancelled_or_diverted_flight_disrupts_and_cancelling_is_free(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    receiver: Receiver,
    hooks: WebhookDispatcher,
    flight: str,
) -> None:
    partner, _, partner_key = await make_partner()
    _, key = await make_client()
    await subscribe(http, key, receiver)
    booking = await book(http, key, flight, days=1)  # inside a fee tier would apply if the policy had one
    number = booking["reservation_no"]
    await run_pass(svc, clock)
    disrupted = await get(http, key, number)
    assert disrupted["pickup_datetime"] == booking["pickup_datetime"]  # nothing moves, nothing is cancelled
    assert disrupted["status"] == booking["status"]
    assert disrupted["flight"]["status"] == ("CANCELLED" if flight == "ZZ9001" else "DIVERTED")
    (event,) = await events_for(hooks, receiver, number, "booking.flight_disrupted")
    assert event["data"]["booking"]["flight"]["status"] == disrupted["flight"]["status"]
    quote = await http.get(QUOTE, params={"reservation_no": number}, headers=bearer(key))
    assert quote.status_code == 200 and quote.json()["fee"] == "0.00", quote.text
    await run_pass(svc, clock)  # said once
    assert len(await events_for(hooks, receiver, number, "booking.flight_disrupted")) == 1
    assert await notices_for(svc, partner, number, count=0) == []
    assert (await watch_of(svc.db, number))["next_check_at"] is None
    # the partner was told nothing, but its booking info shows the flight
    info = await http.get(f"/api/v1/reverse/booking/info/{number}", headers=bearer(partner_key))
    assert info.status_code == 200, info.text
    details = info.json()["booking_details"]
    assert details["flight"]["status"] == disrupted["flight"]["status"]
    assert details["original_pickup_datetime"] == details["pickup_datetime"]


async def test_beyond_the_partners_limit_disrupts_within_it_follows(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, partner_id, _ = await make_partner()
    async with svc.db.write() as conn:
        await conn.execute(update(partners).where(partners.c.id == partner_id).values(follow_flight_minutes=30))
    _, key = await make_client()
    late = await book(http, key, "ZZ1045")
    early = await book(http, key, "ZZ2020")
    await run_pass(svc, clock)
    beyond = await get(http, key, late["reservation_no"])
    assert beyond["pickup_datetime"] == late["pickup_datetime"] and beyond["flight"]["delay_minutes"] == 45
    quote = await http.get(QUOTE, params={"reservation_no": late["reservation_no"]}, headers=bearer(key))
    assert quote.json()["fee"] == "0.00"
    followed = await get(http, key, early["reservation_no"])
    assert minutes_between(followed["pickup_datetime"], early["pickup_datetime"]) == -20
    (notice,) = await notices_for(svc, partner, early["reservation_no"])
    assert notice.body["changes"]["pickup_datetime"] == followed["pickup_datetime"]


async def test_the_partners_error_to_a_notice_is_recorded_and_the_pickup_stays_moved(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    partner, _, _ = await make_partner(amend_status="Error", amend_message="We do not follow flights")
    _, key = await make_client()
    booking = await book(http, key, "ZZ1030")
    await run_pass(svc, clock)
    await notices_for(svc, partner, booking["reservation_no"])
    moved = await get(http, key, booking["reservation_no"])
    assert minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == 30
    detail = await load_detail(svc.db, booking["reservation_no"])
    assert detail is not None
    assert any("flight notice not taken" in (t.reason or "") for t in detail.transitions)


async def test_bookings_on_one_flight_share_one_call_and_keep_their_own_offsets(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    first = await book(http, key, "ZZ1015", days=5)
    second = await book(http, key, "ZZ 1015", days=5)
    assert (await watch_of(svc.db, first["reservation_no"]))["id"] == (
        await watch_of(svc.db, second["reservation_no"])
    )["id"]
    provider = await run_pass(svc, clock)
    assert provider.calls >= 1
    for booked in (first, second):
        moved = await get(http, key, booked["reservation_no"])
        assert minutes_between(moved["pickup_datetime"], booked["pickup_datetime"]) == 15


async def test_untracked_and_street_pickups_are_not_watched(
    http: httpx.AsyncClient, svc: Services, make_client: ClientFactory, make_partner: PartnerFactory
) -> None:
    await make_partner()
    _, key = await make_client()
    odd = await book(http, key, "✈️ ABC12345")
    assert odd["flight"]["status"] == "UNTRACKED" and odd["flight"]["number"] == "✈️ABC12345"
    async with svc.db.read() as conn:
        watch_id = (
            await conn.execute(
                select(bookings.c.flight_watch_id).where(bookings.c.reservation_no == odd["reservation_no"])
            )
        ).scalar_one()
    assert watch_id is None


async def test_flights_check_now_answers_the_flight_of_one_booking(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "zz2030")
    flight = await flight_watch.check_now(svc.db, SandboxProvider(clock), clock, booking["reservation_no"].lower())
    assert flight is not None and flight["number"] == "ZZ2030"
    assert (flight["status"], flight["delay_minutes"]) == ("SCHEDULED", -30)
    moved = await get(http, key, booking["reservation_no"])
    assert moved["flight"] == flight
    assert minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == -30


async def test_a_failing_provider_is_logged_retried_and_moves_nothing(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """AeroDataBox's adapter against a local server in its shape that fails: 500, then garbage, then a 429 with
    Retry-After. The pass never raises, the pickup never moves, the watch is retried at the next slot."""
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "BA1045")
    backend = FakeAeroDataBox()
    app = Starlette(routes=[Route("/flights/number/{number}/{date}", backend.by_number)])
    server = await LiveServer(app).start()
    try:
        provider = AeroDataBoxProvider(server.url, "k-123", timeout_seconds=1.0)
        for mode in ("500", "garbage", "429"):
            backend.mode = mode
            async with svc.db.write() as conn:
                await conn.execute(
                    update(flight_watches)
                    .where(flight_watches.c.id == (await watch_of(svc.db, booking["reservation_no"]))["id"])
                    .values(next_check_at=clock.now(), lease_until=None)
                )
            await flight_watch.watch_pass(svc.db, provider, clock, generous(svc.settings), limit=10_000)
            watch = await watch_of(svc.db, booking["reservation_no"])
            assert watch["last_error"] and watch["lease_until"] is None and watch["next_check_at"] > clock.now()
            if mode == "429":
                assert watch["next_check_at"] >= clock.now() + timedelta(seconds=16)
        assert watch["failures"] == 3
        unchanged = await get(http, key, booking["reservation_no"])
        assert unchanged["pickup_datetime"] == booking["pickup_datetime"]
        assert unchanged["flight"]["checked_at"] is None
        with pytest.raises(Unavailable):
            await flight_watch.check_now(svc.db, provider, clock, booking["reservation_no"])
        await provider.aclose()
    finally:
        backend.release.set()
        await server.stop()


async def test_a_hosted_seat_follows_the_pickup_across_midnight(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_hosted: Any,
) -> None:
    """The hosted partner's capacity day counts from the current pickup: 23:30 + 45 minutes is tomorrow."""
    partner_id = await make_hosted(airports=("NCL",), name="Hosted Flights Newcastle")
    _, key = await make_client(balance="500.00")
    point = {"type": "POINT", "lat": 54.9783, "lng": -1.6178, "name": "Newcastle"}
    found = await http.post(
        SEARCH,
        json=search_body(
            pickup_location={"type": "AIRPORT", "iata_code": "NCL"},
            dropoff_location=point,
            pickup_datetime=future_local(days=10, hour=23, minute=30),
        ),
        headers=bearer(key),
    )
    assert found.status_code == 200, found.text
    (vehicle, *_) = [v for v in found.json()["vehicles"] if v["company"] == "Hosted Flights Newcastle"]
    body = booking_body(found.json()["search_id"], vehicle["vehicle_id"], travel_details={"flight_number": "ZZ1045"})
    created = await http.post(BOOKING, json=body, headers=bearer(key))
    assert created.status_code == 200, created.text
    booking = created.json()["booking"]

    async def seats() -> dict[str, int]:
        async with svc.db.read() as conn:
            rows = await conn.execute(
                select(hosted_capacity.c.local_date, hosted_capacity.c.booked).where(
                    hosted_capacity.c.partner_id == partner_id
                )
            )
            return {r[0]: r[1] for r in rows}

    booked_day = booking["pickup_datetime"][:10]
    assert await seats() == {booked_day: 1}
    await run_pass(svc, clock)
    moved = await get(http, key, booking["reservation_no"])
    new_day = moved["pickup_datetime"][:10]
    assert new_day != booked_day and minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == 45
    assert await seats() == {booked_day: 0, new_day: 1}


@pytest.mark.pg_only
async def test_concurrent_workers_never_check_one_flight_twice(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """Four passes at once on one PostgreSQL (each its own connection): every due watch is claimed by one of
    them (``FOR UPDATE SKIP LOCKED`` and the lease), so no flight is asked twice."""
    await make_partner()
    _, key = await make_client()
    for minutes in range(15, 21):
        await book(http, key, f"ZZ1{minutes:03d}", days=6)
    settings = generous(svc.settings)
    providers = [SandboxProvider(clock) for _ in range(4)]
    await asyncio.gather(*(flight_watch.watch_pass(svc.db, p, clock, settings, limit=10_000) for p in providers))
    asked = [call for p in providers for call in p.asked]
    assert len(asked) == len(set(asked))
    ours = {f"ZZ1{m:03d}" for m in range(15, 21)}
    assert ours <= {number for number, _ in asked}


async def test_the_per_minute_budget_holds_the_rest_for_the_next_minute(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    await run_pass(svc, clock)  # whatever earlier tests left due
    clock.advance(timedelta(minutes=2))  # their calls out of the budget's minute
    first = await book(http, key, "ZZ1011", days=8)
    second = await book(http, key, "ZZ1012", days=8)
    # Calls stamped ahead of this clock (earlier tests moved theirs days on; in production, a worker whose
    # clock runs fast) never count against this minute.
    async with svc.db.write() as conn:
        await conn.execute(update(flight_watches).values(called_at=clock.now() + timedelta(days=30)))
    settings = svc.settings.model_copy(update={"flight_provider_max_calls_per_minute": 1})
    provider = SandboxProvider(clock)
    await flight_watch.watch_pass(svc.db, provider, clock, settings, limit=10_000)
    assert provider.calls == 1
    await flight_watch.watch_pass(svc.db, provider, clock, settings, limit=10_000)
    assert provider.calls == 1  # the minute's budget is spent
    clock.advance(timedelta(seconds=61))
    await flight_watch.watch_pass(svc.db, provider, clock, settings, limit=10_000)
    assert provider.calls == 2
    for booked, minutes in ((first, 11), (second, 12)):
        moved = await get(http, key, booked["reservation_no"])
        assert minutes_between(moved["pickup_datetime"], booked["pickup_datetime"]) == minutes


async def test_amending_the_flight_number_restarts_the_watch(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    await make_partner()
    _, key = await make_client()
    booking = await book(http, key, "ZZ1020", days=9)
    number = booking["reservation_no"]
    await run_pass(svc, clock)
    assert minutes_between((await get(http, key, number))["pickup_datetime"], booking["pickup_datetime"]) == 20
    before = (await watch_of(svc.db, number))["id"]
    amended = await http.patch(
        BOOKING,
        params={"reservation_no": number},
        json={"travel_details": {"flight_number": "zz1-050"}},
        headers=bearer(key),
    )
    assert amended.status_code == 202, amended.text
    assert svc.dispatcher is not None
    for _ in range(20):
        if (await get(http, key, number))["amendment"]["status"] == "APPLIED":
            break
        await svc.dispatcher.run_once(limit=200)
    restarted = await get(http, key, number)
    assert restarted["flight_number"] == "ZZ1050" and restarted["flight"]["checked_at"] is None
    assert (await watch_of(svc.db, number))["id"] != before
    await run_pass(svc, clock)
    moved = await get(http, key, number)
    # the new flight is 50 minutes late: the pickup follows it from the pickup as booked (the old flight's
    # 20 minutes are gone with it)
    assert minutes_between(moved["pickup_datetime"], booking["pickup_datetime"]) == 50
    assert moved["original_pickup_datetime"] == booking["pickup_datetime"]
    assert moved["flight"]["number"] == "ZZ1050"


async def test_a_new_booking_makes_its_flights_watch_due_and_leaves_a_due_watch_as_it_is(
    svc: Services, clock: ShiftedClock
) -> None:
    """docs/rules/flights.md#watching: a booking is checked at creation, so its watch is due now; a watch
    already due is not rewritten (every booking of a busy flight would queue on that one row's lock)."""
    now = clock.now()
    arrival = now + timedelta(days=4)

    async def ensure(at: datetime) -> int:
        async with svc.db.write() as conn:
            return await flight_repository.ensure_watch(conn, "ZZ7301", "LHR", arrival, at)

    async def set_next(watch_id: int, value: datetime | None) -> None:
        async with svc.db.write() as conn:
            await conn.execute(
                update(flight_watches).where(flight_watches.c.id == watch_id).values(next_check_at=value)
            )

    async def next_check(watch_id: int) -> datetime | None:
        async with svc.db.read() as conn:
            found: datetime | None = (
                await conn.execute(select(flight_watches.c.next_check_at).where(flight_watches.c.id == watch_id))
            ).scalar_one()
        return found

    watch_id = await ensure(now)
    assert await next_check(watch_id) == now  # created due
    earlier = now - timedelta(minutes=5)
    await set_next(watch_id, earlier)
    assert await ensure(now) == watch_id
    assert await next_check(watch_id) == earlier  # already due: left as it was, not rewritten
    await set_next(watch_id, now + timedelta(hours=1))
    assert await ensure(now) == watch_id
    assert await next_check(watch_id) == now  # a later slot: brought forward to now
    await set_next(watch_id, None)
    assert await ensure(now) == watch_id
    assert await next_check(watch_id) == now  # a finished watch: due again for its new booking


async def test_a_new_flights_watch_is_made_due_and_a_second_maker_finds_the_first(
    svc: Services, clock: ShiftedClock
) -> None:
    """``new_watch`` (one direct statement on PostgreSQL, the general path on SQLite): the first booking of
    a flight makes its watch, due now; a create that read "no watch" while another made it gets the same
    watch (made due if its next check was later), never a second one."""
    now = clock.now()
    arrival = now + timedelta(days=5)
    made = await flight_repository.new_watch(svc.db, "ZZ7302", "LHR", arrival, now)
    async with svc.db.read() as conn:
        rows = (
            await conn.execute(
                select(flight_watches.c.id, flight_watches.c.next_check_at).where(flight_watches.c.number == "ZZ7302")
            )
        ).all()
    assert [(r.id, r.next_check_at) for r in rows] == [(made, now)]
    async with svc.db.write() as conn:
        await conn.execute(
            update(flight_watches).where(flight_watches.c.id == made).values(next_check_at=now + timedelta(hours=2))
        )
    later = now + timedelta(seconds=30)
    assert await flight_repository.new_watch(svc.db, "ZZ7302", "LHR", arrival, later) == made
    async with svc.db.read() as conn:
        count, due = (
            await conn.execute(
                select(func.count(), func.max(flight_watches.c.next_check_at)).where(
                    flight_watches.c.number == "ZZ7302"
                )
            )
        ).one()
    assert count == 1 and due == later
