"""The Python SDK (``transfers_sdk``) against the real service over HTTP, and its retries against a
tiny scripted server.

The service runs on this test's event loop, so the blocking ``TransfersClient`` is always driven
from a worker thread (``asyncio.to_thread``), never directly.
"""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import future_local
from tests.servers import LiveServer, serving
from transfers.clients import service as client_service
from transfers.clients.models import ClientStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers_sdk import (
    Airport,
    ApiError,
    AsyncTransfersClient,
    AuthenticationError,
    Booking,
    BookingStatus,
    ClientSuspended,
    IdempotencyConflict,
    InvalidRequest,
    NetworkError,
    Point,
    RateLimited,
    ServerError,
    TransfersClient,
    TransfersError,
    UnexpectedResponse,
    ValidationFailed,
    WaitTimedOut,
)

MADRID = ZoneInfo("Europe/Madrid")
REVERSE_UPDATE = "/api/v1/reverse/booking/update"
VALENCIA = Point(39.4699, -0.3763, "Plaza del Ayuntamiento, Valencia")
SEVILLE = Point(37.3891, -5.9845, "Catedral de Sevilla")
BILBAO = Point(43.2630, -2.9350, "Museo Guggenheim, Bilbao")
PASSENGER = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}
TRAVEL = {"flight_number": "IB3170", "extra_requests": "Two large skis"}
DRIVER = {"name": "Lucia Driver", "phone": "+34600111222", "plate": "4321 XYZ"}


async def approve_later(http: httpx.AsyncClient, partner_key: str, reservation_no: str, delay: float = 0.3) -> None:
    await asyncio.sleep(delay)
    body = {
        "reservation_no": reservation_no,
        "status": "APPROVED",
        "driver_info": DRIVER,
        "meeting_point": "Arrivals hall, exit B",
    }
    response = await http.put(REVERSE_UPDATE, json=body, headers=bearer(partner_key))
    assert response.status_code == 200, response.text


# ---- against the real service ---------------------------------------------------------------------


async def test_async_client_search_book_read_list_wait_and_cancel(
    service: LiveServer,
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    _, _, partner_key = await make_partner(airports=("VLC",), create_status="PENDING")
    async with AsyncTransfersClient(service.url, key) as api:
        reasons = await api.cancellation_reasons()
        assert reasons and [r.position for r in reasons] == sorted(r.position for r in reasons)
        assert all(isinstance(r.id, int) and r.name for r in reasons)

        found = await api.search(
            pickup_datetime=future_local(tz=MADRID), pickup=Airport("VLC"), dropoff=VALENCIA, adult=2, children=1
        )
        assert found.search_id and found.distance_km is not None and found.distance_km > 0
        car = found.vehicles[0]
        assert (car.make, car.model, car.type) == ("Toyota", "Corolla", "SEDAN")
        assert car.price == Decimal("40.00") and isinstance(car.max_passengers, int)
        assert [(e.name, e.price, e.pricing_type) for e in car.extra_services] == [
            ("Child seat", Decimal("5.00"), "PER_ITEM"),
            ("Meet & greet", Decimal("12.5"), "PER_BOOKING"),
        ]
        # the plain-dict body gives the same kind of answer
        again = await api.search(
            {
                "pickup_datetime": future_local(tz=MADRID),
                "pickup_location": {"type": "AIRPORT", "iata_code": "VLC"},
                "dropoff_location": VALENCIA.to_json(),
                "travelers": {"adult": 1},
            }
        )
        assert again.search_id != found.search_id and again.vehicles

        booking = await api.create_booking(
            found.search_id,
            car.vehicle_id,
            PASSENGER,
            TRAVEL,
            suitcase=1,
            small_bags=1,
            extra_services=[{"id": car.extra_services[0].id, "quantity": 2}],
        )
        assert isinstance(booking, Booking)
        assert booking.status is BookingStatus.PENDING_APPROVAL and booking.is_cancelable and not booking.is_final
        assert booking.price.total == Decimal("50.00") and booking.price.currency == "EUR"
        assert booking.extra_services == ("Child seat x 2",)
        assert booking.passengers.adult == 2 and booking.passengers.children == 1
        assert booking.passenger.surname == "Lovelace" and booking.flight_number == "IB3170"
        assert booking.pickup_location.type == "AIRPORT" and booking.dropoff_location.name == VALENCIA.name
        assert booking.driver is None and booking.meeting_point is None
        assert booking.created_at.utcoffset() == timedelta(0)
        assert booking.pickup_datetime is not None and booking.pickup_datetime.utcoffset() is not None
        assert await api.get_booking(booking.reservation_no) == booking

        page = await api.list_bookings(limit=5)
        assert [b.reservation_no for b in page.bookings] == [booking.reservation_no] and page.next_cursor is None

        approval = asyncio.create_task(approve_later(http, partner_key, booking.reservation_no))
        approved = await api.wait_until_approved(booking.reservation_no, interval=0.05, timeout=20)
        await approval
        assert approved.status is BookingStatus.APPROVED
        assert approved.driver is not None and approved.driver.plate == DRIVER["plate"]
        assert approved.meeting_point == "Arrivals hall, exit B"

        await api.cancel_booking(booking.reservation_no, reasons[0].id, note="plans changed")
        cancelled = await api.get_booking(booking.reservation_no)
        assert cancelled.status is BookingStatus.CANCELLED and cancelled.is_final and not cancelled.is_cancelable
        # a final status ends the wait at once, whatever the interval
        assert (await api.wait_until_approved(booking.reservation_no, interval=3600)).status is BookingStatus.CANCELLED
        assert [b.status for b in (await api.list_bookings(status=[BookingStatus.CANCELLED])).bookings] == [
            BookingStatus.CANCELLED
        ]


async def test_sync_client_does_the_same_from_a_thread(
    service: LiveServer,
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    _, _, partner_key = await make_partner(airports=("SVQ",), create_status="PENDING")
    api = TransfersClient(service.url + "/api/v1/", key)  # the spec's form of the address works too
    try:

        def book() -> tuple[Booking, int]:
            found = api.search(
                pickup_datetime=datetime.now(UTC) + timedelta(days=7), pickup=Airport("SVQ"), dropoff=SEVILLE, adult=1
            )
            booking = api.create_booking(found.search_id, int(found.vehicles[0].vehicle_id), PASSENGER, TRAVEL)
            assert api.get_booking(booking.reservation_no) == booking
            return booking, api.cancellation_reasons()[-1].id

        booking, reason_id = await asyncio.to_thread(book)
        assert booking.status is BookingStatus.PENDING_APPROVAL
        approval = asyncio.create_task(approve_later(http, partner_key, booking.reservation_no))
        approved = await asyncio.to_thread(api.wait_until_approved, booking.reservation_no, interval=0.05, timeout=20)
        await approval
        assert approved.status is BookingStatus.APPROVED and approved.driver is not None

        def cancel_and_list() -> list[Booking]:
            api.cancel_booking(booking.reservation_no, reason_id)
            return list(api.iter_bookings(status="CANCELLED", page_size=1))

        listed = await asyncio.to_thread(cancel_and_list)
        assert [(b.reservation_no, b.status) for b in listed] == [(booking.reservation_no, BookingStatus.CANCELLED)]
    finally:
        api.close()


async def test_iterating_follows_the_cursor_and_filters(
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("BIO",), create_status="APPROVED", driver=DRIVER)
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=future_local(days=3, tz=MADRID), pickup=BILBAO.to_json(), dropoff=Airport("BIO"), adult=1
        )  # point to airport works too
        made = [
            (await api.create_booking(found.search_id, found.vehicles[0].vehicle_id, PASSENGER, TRAVEL))
            for _ in range(5)
        ]
        newest_first = [b.reservation_no for b in reversed(made)]
        assert [b.reservation_no async for b in api.iter_bookings(page_size=2)] == newest_first
        first = await api.list_bookings(limit=3)
        rest = await api.list_bookings(limit=3, cursor=first.next_cursor)
        assert [b.reservation_no for b in first.bookings + rest.bookings] == newest_first
        assert rest.next_cursor is None
        since = made[2].created_at
        assert [b.reservation_no async for b in api.iter_bookings(created_from=since)] == newest_first[:3]
        assert [b async for b in api.iter_bookings(status=["PENDING", "DECLINED"])] == []
        assert len([b async for b in api.iter_bookings(status=BookingStatus.APPROVED)]) == 5
        with pytest.raises(InvalidRequest) as bad:
            await api.list_bookings(status="NOPE")
        assert (bad.value.http_status, bad.value.code) == (422, "INVALID_FILTER") and bad.value.request_id
        with pytest.raises(ApiError) as cursor:
            await api.list_bookings(cursor="not-a-cursor")
        assert cursor.value.code == "INVALID_CURSOR"
        with pytest.raises(ValueError, match="timezone-aware"):
            await api.list_bookings(created_from=datetime(2026, 1, 1))  # naive: refused


async def test_typed_errors_carry_codes_and_request_ids(
    service: LiveServer,
    make_client: ClientFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, key = await make_client()
    sleeps: list[float] = []

    async def no_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    async with AsyncTransfersClient(service.url, key, sleep=no_sleep) as api:
        with pytest.raises(ValidationFailed) as missing:
            await api.create_booking("no-such-search", 1, PASSENGER, TRAVEL)
        assert (missing.value.code, missing.value.name, missing.value.http_status) == (1002, "SEARCH_NOT_EXISTS", 422)
        assert missing.value.request_id and missing.value.idempotency_key
        uuid.UUID(missing.value.idempotency_key)  # a fresh UUID was sent
        with pytest.raises(ValidationFailed) as airport:
            await api.search(pickup_datetime=future_local(), pickup=Airport("ZZZ"), dropoff=VALENCIA, adult=1)
        assert (airport.value.code, airport.value.name) == (1307, "SEARCH_PICKUP_IATA_CODE_INVALID")
        with pytest.raises(ValidationFailed) as unknown:
            await api.get_booking("TB-NOSUCHTHING")
        assert unknown.value.code == 1401
        with pytest.raises(ValidationFailed) as not_cancellable:
            await api.cancel_booking("TB-NOSUCHTHING", 1)
        assert not_cancellable.value.code == 1201
    async with AsyncTransfersClient(service.url, "tk_not-a-real-key", sleep=no_sleep) as stranger:
        with pytest.raises(AuthenticationError) as denied:
            await stranger.cancellation_reasons()
    assert isinstance(denied.value, ApiError) and isinstance(denied.value, TransfersError)
    assert (denied.value.http_status, denied.value.code) == (401, "UNAUTHENTICATED")
    assert denied.value.message and denied.value.request_id
    assert sleeps == []  # 4xx are never retried

    suspended_id, suspended_key = await make_client()
    await client_service.set_status(db, clock, suspended_id, ClientStatus.SUSPENDED, actor="tests")
    async with AsyncTransfersClient(service.url, suspended_key) as api:
        with pytest.raises(ClientSuspended) as suspended:
            await api.list_bookings()
    assert (suspended.value.http_status, suspended.value.code) == (403, "CLIENT_SUSPENDED")


async def test_idempotency_key_replays_and_refuses_reuse(
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client(balance="100.00")
    await make_partner(airports=("VLC",), create_status="APPROVED", driver=DRIVER)
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=future_local(tz=MADRID), pickup=Airport("VLC"), dropoff=VALENCIA, adult=1
        )
        vehicle = found.vehicles[0].vehicle_id
        chosen = f"order-{uuid.uuid4()}"
        first = await api.create_booking(found.search_id, vehicle, PASSENGER, TRAVEL, idempotency_key=chosen)
        replay = await api.create_booking(found.search_id, vehicle, PASSENGER, TRAVEL, idempotency_key=chosen)
        assert replay.reservation_no == first.reservation_no
        with pytest.raises(IdempotencyConflict) as reused:
            await api.create_booking(found.search_id, vehicle, PASSENGER, TRAVEL, suitcase=2, idempotency_key=chosen)
        assert (reused.value.http_status, reused.value.code) == (422, "IDEMPOTENCY_KEY_REUSED")
        assert reused.value.idempotency_key == chosen
        assert [b.reservation_no for b in (await api.list_bookings()).bookings] == [first.reservation_no]


async def test_waiting_gives_up_at_the_timeout(
    service: LiveServer,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    _, key = await make_client()
    await make_partner(airports=("SVQ",), create_status="PENDING")
    async with AsyncTransfersClient(service.url, key) as api:
        found = await api.search(
            pickup_datetime=future_local(tz=MADRID), pickup=Airport("SVQ"), dropoff=SEVILLE, adult=1
        )
        booking = await api.create_booking(found.search_id, found.vehicles[0].vehicle_id, PASSENGER, TRAVEL)
        with pytest.raises(WaitTimedOut) as timed_out:
            await api.wait_until_approved(booking.reservation_no, interval=0.05, timeout=0.3)
        assert isinstance(timed_out.value, TimeoutError)
        assert timed_out.value.booking.status is BookingStatus.PENDING_APPROVAL
        with pytest.raises(ValueError, match="interval"):
            await api.wait_until_approved(booking.reservation_no, interval=-1)
        # leave nothing waiting for the reconciliation job of later tests
        await api.cancel_booking(booking.reservation_no, 1)


# ---- retries, against a scripted server -----------------------------------------------------------

SAMPLE_BOOKING: dict[str, Any] = {
    "reservation_no": "TB-7K3M9Q2X",
    "status": "PENDING",
    "pickup_location": {"name": "Heathrow", "type": "AIRPORT"},
    "dropoff_location": {"name": "Trafalgar Square", "type": "POINT"},
    "pickup_datetime": "2026-12-01T14:30:00+00:00",
    "flight_number": "BA117",
    "passengers": {"adult": 2, "children": 0, "infant": 0},
    "passenger": {"name": "Ada", "surname": "Lovelace", "email": "ada@example.com", "phone": "+447911123456"},
    "vehicle": {"make": "Toyota", "model": "Corolla", "type": "SEDAN"},
    "price": {"total": "45.00", "currency": "EUR"},
    "distance_km": 24,
    "booking_type": "ONEWAY",
    "is_cancelable": False,
    "extra_services": [],
    "driver": None,
    "meeting_point": None,
    "created_at": "2026-11-20T10:00:00+00:00",
}
CREATED = {"status": "Success", "booking": SAMPLE_BOOKING}
CANCELLED = {"status": "Success", "message": "Booking cancelled successfully.", "data": []}
UNAVAILABLE = {"status": "Error", "code": "UNAVAILABLE", "message": "retry shortly"}
LIMITED = {"status": "Error", "code": "RATE_LIMITED", "message": "slow down"}


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Scripted:
    """Answers the scripted (status, headers, body) in turn, the last one for ever; records requests."""

    answers: list[tuple[int, dict[str, str], Any]]
    seen: list[Seen] = field(default_factory=list)

    def app(self) -> Starlette:
        async def handle(request: Request) -> Response:
            self.seen.append(
                Seen(
                    request.method,
                    request.url.path,
                    request.url.query,
                    {k.lower(): v for k, v in request.headers.items()},
                    await request.body(),
                )
            )
            status, headers, payload = self.answers[min(len(self.seen), len(self.answers)) - 1]
            content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            return Response(
                content,
                status_code=status,
                headers={"X-Request-ID": f"req-{len(self.seen)}", **headers},
                media_type="application/json",
            )

        return Starlette(routes=[Route("/{path:path}", handle, methods=["GET", "POST", "PUT", "DELETE"])])

    def keys(self) -> list[str | None]:
        return [s.headers.get("idempotency-key") for s in self.seen]


def recorder() -> tuple[list[float], Callable[[float], Any]]:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return sleeps, sleep


async def test_create_is_retried_after_503_with_the_same_key_and_bytes() -> None:
    script = Scripted([(503, {}, UNAVAILABLE), (503, {}, UNAVAILABLE), (200, {}, CREATED)])
    sleeps, sleep = recorder()
    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        booking = await api.create_booking("s-1", "1", PASSENGER, TRAVEL, suitcase=1)
    assert booking.reservation_no == "TB-7K3M9Q2X" and booking.price.total == Decimal("45.00")
    assert len(script.seen) == 3
    assert {(s.method, s.path) for s in script.seen} == {("POST", "/api/v1/booking-api/booking")}
    keys = script.keys()
    assert keys[0] is not None and keys == [keys[0]] * 3 and uuid.UUID(keys[0]).version == 4
    assert len({s.body for s in script.seen}) == 1
    assert json.loads(script.seen[0].body) == {
        "search_id": "s-1",
        "vehicle_id": "1",
        "suitcase": 1,
        "small_bags": 0,
        "passenger": PASSENGER,
        "travel_details": TRAVEL,
    }
    assert all(s.headers["authorization"] == "Bearer tk_key" for s in script.seen)
    assert all(s.headers["content-type"] == "application/json" for s in script.seen)
    # exponential backoff with jitter: the n-th wait lies in [0.5, 1] x 0.5 x 2^n seconds
    assert len(sleeps) == 2 and 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0


async def test_sync_client_retries_the_same_way() -> None:
    script = Scripted([(503, {}, UNAVAILABLE), (502, {}, b"<html>bad gateway</html>"), (200, {}, CREATED)])
    sleeps: list[float] = []
    async with serving(script.app()) as server:
        with TransfersClient(server.url, "tk_key", sleep=sleeps.append) as api:
            booking = await asyncio.to_thread(api.create_booking, "s-1", 1, PASSENGER, TRAVEL)
    assert booking.status is BookingStatus.PENDING
    assert len(script.seen) == 3 and len(set(script.keys())) == 1 and len(sleeps) == 2


async def test_429_honours_retry_after_and_keeps_the_callers_key() -> None:
    script = Scripted([(429, {"Retry-After": "0"}, LIMITED), (200, {}, CANCELLED)])
    sleeps, sleep = recorder()
    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        await api.cancel_booking("TB-7K3M9Q2X", 3, note="plans changed", idempotency_key="cancel-TB-7K3M9Q2X")
    assert sleeps == [0.0]
    assert script.keys() == ["cancel-TB-7K3M9Q2X", "cancel-TB-7K3M9Q2X"]
    assert {(s.method, s.path, s.query) for s in script.seen} == {
        ("DELETE", "/api/v1/booking-api/booking", "reservation_no=TB-7K3M9Q2X&cancellation_id=3&note=plans+changed")
    }


async def test_reads_are_retried_and_the_budget_is_bounded() -> None:
    script = Scripted(
        [
            (500, {}, {"status": "Error", "code": "INTERNAL_ERROR", "message": "boom"}),
            (503, {"Retry-After": "1"}, UNAVAILABLE),
            (200, {}, SAMPLE_BOOKING),
        ]
    )
    sleeps, sleep = recorder()
    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        assert (await api.get_booking("TB-7K3M9Q2X")).reservation_no == "TB-7K3M9Q2X"
    assert len(script.seen) == 3 and script.keys() == [None] * 3  # GET sends no Idempotency-Key
    assert sleeps[1] == 1.0

    down = Scripted([(503, {}, UNAVAILABLE)])
    sleeps, sleep = recorder()
    async with serving(down.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        with pytest.raises(ServerError) as failed:
            await api.create_booking("s-1", 1, PASSENGER, TRAVEL)
    assert len(down.seen) == 4 and len(sleeps) == 3  # 1 attempt + max_retries (3)
    assert (failed.value.http_status, failed.value.code, failed.value.request_id) == (503, "UNAVAILABLE", "req-4")
    assert failed.value.idempotency_key == down.keys()[0] and len(set(down.keys())) == 1

    async with serving(down.app()) as server, AsyncTransfersClient(server.url, "tk_key", max_retries=0) as api:
        with pytest.raises(ServerError):
            await api.cancellation_reasons()
    assert len(down.seen) == 5


async def test_a_long_retry_after_is_not_waited_out() -> None:
    script = Scripted([(429, {"Retry-After": "120"}, LIMITED)])
    sleeps, sleep = recorder()
    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        with pytest.raises(RateLimited) as limited:
            await api.cancellation_reasons()
    assert limited.value.retry_after == 120.0 and limited.value.code == "RATE_LIMITED"
    assert len(script.seen) == 1 and sleeps == []


@pytest.mark.parametrize(
    ("answer", "error", "code"),
    [
        ((422, {}, {"status": "Error", "code": 1004, "message": "VEHICLE_ID_INVALID"}), ValidationFailed, 1004),
        (
            (409, {}, {"status": "Error", "code": "IDEMPOTENCY_KEY_IN_USE", "message": "running"}),
            IdempotencyConflict,
            "IDEMPOTENCY_KEY_IN_USE",
        ),
        (
            (401, {}, {"status": "Error", "code": "UNAUTHENTICATED", "message": "no"}),
            AuthenticationError,
            "UNAUTHENTICATED",
        ),
        ((400, {}, {"status": "Error", "code": "MALFORMED_JSON", "message": "no"}), InvalidRequest, "MALFORMED_JSON"),
        (
            (400, {}, {"status": "Error", "code": "IDEMPOTENCY_KEY_INVALID", "message": "no"}),
            InvalidRequest,
            "IDEMPOTENCY_KEY_INVALID",
        ),
        ((404, {}, b"not json"), ApiError, "HTTP_404"),
        ((200, {}, b"<html>captive portal</html>"), UnexpectedResponse, None),
        ((200, {}, {"status": "Success", "booking": {"reservation_no": "TB-1"}}), UnexpectedResponse, None),
    ],
)
async def test_other_answers_are_never_retried(
    answer: tuple[int, dict[str, str], Any], error: type[TransfersError], code: object
) -> None:
    script = Scripted([answer, (200, {}, CREATED)])
    sleeps, sleep = recorder()
    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        with pytest.raises(error) as raised:
            await api.create_booking("s-1", 1, PASSENGER, TRAVEL)
    assert len(script.seen) == 1 and sleeps == []
    assert getattr(raised.value, "code", None) == code
    assert raised.value.idempotency_key == script.keys()[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_network_failures_are_retried_then_reported() -> None:
    sleeps, sleep = recorder()
    async with AsyncTransfersClient(f"http://127.0.0.1:{free_port()}", "tk_key", sleep=sleep) as api:
        with pytest.raises(NetworkError) as failed:
            await api.create_booking("s-1", 1, PASSENGER, TRAVEL)
    assert len(sleeps) == 3 and isinstance(failed.value.__cause__, httpx.ConnectError)
    assert failed.value.idempotency_key is not None

    attempts: list[httpx.Request] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        if len(attempts) == 1:
            raise httpx.ReadTimeout("the answer was lost", request=request)
        return httpx.Response(200, json=CREATED)

    with TransfersClient(
        "http://sdk.test", "tk_key", transport=httpx.MockTransport(flaky), sleep=sleeps.append
    ) as sync_api:
        assert sync_api.create_booking("s-1", 1, PASSENGER, TRAVEL).reservation_no == "TB-7K3M9Q2X"
    assert len(attempts) == 2
    assert attempts[0].headers["idempotency-key"] == attempts[1].headers["idempotency-key"]
    assert attempts[0].content == attempts[1].content


def test_arguments_are_checked_before_anything_is_sent() -> None:
    never = httpx.MockTransport(lambda request: httpx.Response(500))
    with TransfersClient("http://sdk.test", "tk_key", transport=never) as api:
        with pytest.raises(TypeError, match="not both"):
            api.search({"pickup_datetime": "x"}, adult=2)
        with pytest.raises(TypeError, match="missing pickup, dropoff"):
            api.search(pickup_datetime="2026-12-01 14:30", adult=2)
    with pytest.raises(ValueError, match="api_key"):
        TransfersClient("http://sdk.test", "")
    with pytest.raises(ValueError, match="base_url"):
        TransfersClient("sdk.test", "tk_key")


async def test_wait_until_approved_follows_the_services_retry_after(
    service: LiveServer,
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    """Without an ``interval`` the SDK waits what GET booking's ``Retry-After`` says
    (2 s in sandbox), not the 600 s it used to. The injected ``sleep`` records each pause and lets the
    partner approve during the second one: no real waiting."""
    _, key = await make_client()
    _, _, partner_key = await make_partner(airports=("SVQ",), create_status="PENDING")
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            await approve_later(http, partner_key, reservation_no, delay=0)

    async with AsyncTransfersClient(service.url, key, sleep=sleep) as api:
        found = await api.search(
            pickup_datetime=future_local(tz=MADRID), pickup=Airport("SVQ"), dropoff=SEVILLE, adult=1
        )
        booking = await api.create_booking(found.search_id, found.vehicles[0].vehicle_id, PASSENGER, TRAVEL)
        reservation_no = booking.reservation_no
        approved = await api.wait_until_approved(reservation_no, timeout=60)
    assert approved.status is BookingStatus.APPROVED
    assert pauses == [2.0, 2.0]


async def test_wait_until_approved_without_a_hint_waits_a_sane_default() -> None:
    """A service that sends no Retry-After (an older release): 15 s between reads, not 600; an
    explicit ``interval`` still wins over a hint."""
    waiting = {**SAMPLE_BOOKING, "status": "PENDING_APPROVAL"}
    script = Scripted([(200, {}, waiting), (200, {}, waiting), (200, {}, {**SAMPLE_BOOKING, "status": "APPROVED"})])
    pauses: list[float] = []

    async def sleep(seconds: float) -> None:
        pauses.append(seconds)

    async with serving(script.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        approved = await api.wait_until_approved("TB-7K3M9Q2X", timeout=300)
        assert approved.status is BookingStatus.APPROVED and pauses == [15.0, 15.0]
    hinted = Scripted([(200, {"Retry-After": "7"}, waiting), (200, {}, {**SAMPLE_BOOKING, "status": "APPROVED"})])
    async with serving(hinted.app()) as server, AsyncTransfersClient(server.url, "tk_key", sleep=sleep) as api:
        await api.wait_until_approved("TB-7K3M9Q2X", interval=1.5, timeout=300)
    assert pauses[2:] == [1.5]
