"""``TransfersClient`` (blocking, ``httpx.Client``) and ``AsyncTransfersClient`` (``httpx.AsyncClient``).

Both have the same methods with the same arguments; the async ones are coroutines (and
``iter_bookings`` an async iterator). Both are context managers that close their connections.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from transfers_sdk import _calls
from transfers_sdk._account_methods import AccountMethods, AsyncAccountMethods
from transfers_sdk._calls import Call, Instant, Location, RetryPolicy
from transfers_sdk.errors import ApiError, NetworkError, TransfersError, WaitTimedOut, error_from_response
from transfers_sdk.models import (
    Booking,
    BookingPage,
    BookingStatus,
    CancellationQuote,
    CancellationReason,
    SearchResult,
)

T = TypeVar("T")

#: ``wait_until_approved`` without an ``interval`` follows the service's ``Retry-After`` (a few seconds in
#: sandbox); a service that sends none (an older release) is asked again after this many seconds.
DEFAULT_POLL_INTERVAL = 15.0
DEFAULT_TIMEOUT = 30.0


def _pause(interval: float | None, polled: _calls.Polled) -> float:
    """An explicit ``interval`` wins; else the service's hint; else ``DEFAULT_POLL_INTERVAL``."""
    if interval is not None:
        return interval
    return polled.retry_after if polled.retry_after is not None else DEFAULT_POLL_INTERVAL


def _check_wait(interval: float | None, timeout: float | None) -> float | None:
    if interval is not None and interval < 0:
        raise ValueError("interval must be zero or more seconds")
    if timeout is not None and timeout < 0:
        raise ValueError("timeout must be zero or more seconds")
    return None if timeout is None else time.monotonic() + timeout


def _settled(booking: Booking) -> bool:
    return booking.status is BookingStatus.APPROVED or booking.is_final


def _timed_out(booking: Booking) -> WaitTimedOut:
    return WaitTimedOut(f"booking {booking.reservation_no} is still {booking.status.value}", booking)


def _network_error(call: Call[Any], exc: httpx.TransportError) -> TransfersError:
    error = _calls.tag(NetworkError(f"{call.method} {call.path}: {type(exc).__name__}: {exc}"), call)
    error.__cause__ = exc
    return error


class TransfersClient(AccountMethods):
    """Blocking client of the booking API.

    ``base_url``: the service address, e.g. ``http://127.0.0.1:8000`` (``.../api/v1`` works too).
    ``api_key``: the client key. ``max_retries``: retries of network failures, 5xx and 429 (the
    same Idempotency-Key is sent on every attempt). ``sleep``: how to wait (tests pass a fake).
    ``transport``: an ``httpx`` transport (tests, proxies).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=_calls.normalise_base_url(base_url),
            timeout=timeout,
            headers=_calls.default_headers(api_key),
            transport=transport,
            follow_redirects=False,
        )

    def __enter__(self) -> TransfersClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, call: Call[T]) -> T:
        retries = 0
        while True:
            try:
                response = self._http.request(
                    call.method, call.path, params=call.params, content=call.body, headers=_calls.request_headers(call)
                )
            except httpx.TransportError as exc:
                error, delay = _network_error(call, exc), self.retry.delay(retries, None)
            else:
                if response.is_success or not _calls.retryable_status(response.status_code):
                    return _calls.read_answer(call, response)
                error = _calls.tag(error_from_response(response), call)
                delay = self.retry.delay(retries, error.retry_after if isinstance(error, ApiError) else None)
            if delay is None:
                raise error
            self._sleep(delay)
            retries += 1

    def search(
        self,
        body: Mapping[str, Any] | None = None,
        *,
        pickup_datetime: Instant | None = None,
        pickup: Location | None = None,
        dropoff: Location | None = None,
        adult: int | None = None,
        children: int | None = None,
        infant: int | None = None,
        return_datetime: Instant | None = None,
        currency: str | None = None,
        sort: str | None = None,
    ) -> SearchResult:
        """POST /booking-api/search with a SearchRequest ``body``, or built from the keywords.

        ``pickup``/``dropoff``: ``Airport("LHR")``, ``Point(lat, lng, name)`` or the wire dict.
        ``pickup_datetime``: ``"YYYY-MM-DD HH:MM"`` or a ``datetime`` (naive: local time at the airport).
        ``return_datetime``: the same for the way back of a return trip; the answer's ``return_vehicles``
        are then its offers (docs/rules/return-trips.md#search); with a ``body``, put it in the body.
        ``currency``: the currency the offers are priced in (docs/rules/fx.md#search): one you hold a wallet
        in (default: your default wallet's); a partner's prices in another are converted, each ``Vehicle.fx``
        saying at which rate.
        ``sort``: ``"price"`` (the default: equal prices by the partner's quality score) or ``"recommended"``
        (price weighed by that score); each ``Vehicle.quality`` is its partner's (docs/rules/quality.md#ranking).
        """
        return self._run(
            _calls.search(
                body,
                pickup_datetime=pickup_datetime,
                pickup=pickup,
                dropoff=dropoff,
                adult=adult,
                children=children,
                infant=infant,
                return_datetime=return_datetime,
                currency=currency,
                sort=sort,
            )
        )

    def create_booking(
        self,
        search_id: str,
        vehicle_id: int | str,
        passenger: Mapping[str, Any],
        travel_details: Mapping[str, Any],
        suitcase: int = 0,
        small_bags: int = 0,
        extra_services: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        messages: Mapping[str, bool | None] | None = None,
    ) -> Booking:
        """POST /booking-api/booking. ``passenger``: name, surname, phone, email, and optionally language (a
        BCP 47 tag: the traveller's messages are written in it); ``travel_details``: flight_number,
        extra_requests; ``extra_services``: [{"id", "quantity"}]; ``messages``: ``{"sms": False}`` switches a
        channel of the account's messages to travellers off for this booking (docs/rules/messages.md#settings).
        Without ``idempotency_key`` a fresh one is sent (and reused by the retries)."""
        return self._run(
            _calls.create_booking(
                search_id=search_id,
                vehicle_id=vehicle_id,
                passenger=passenger,
                travel_details=travel_details,
                suitcase=suitcase,
                small_bags=small_bags,
                extra_services=extra_services,
                idempotency_key=idempotency_key,
                messages=messages,
            )
        )

    def create_trip(
        self,
        search_id: str,
        vehicle_id: int | str,
        return_vehicle_id: int | str,
        passenger: Mapping[str, Any],
        travel_details: Mapping[str, Any],
        return_travel_details: Mapping[str, Any] | None = None,
        suitcase: int = 0,
        small_bags: int = 0,
        extra_services: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        messages: Mapping[str, bool | None] | None = None,
    ) -> tuple[Booking, Booking]:
        """POST /booking-api/booking with ``return_vehicle_id`` (a ``SearchResult.return_vehicles`` id):
        (the way out, the way back), two bookings paid together or not at all (docs/rules/return-trips.md)."""
        return self._run(
            _calls.create_trip(
                search_id=search_id,
                vehicle_id=vehicle_id,
                return_vehicle_id=return_vehicle_id,
                passenger=passenger,
                travel_details=travel_details,
                return_travel_details=return_travel_details,
                suitcase=suitcase,
                small_bags=small_bags,
                extra_services=extra_services,
                idempotency_key=idempotency_key,
                messages=messages,
            )
        )

    def get_booking(self, reservation_no: str) -> Booking:
        """GET /booking-api/booking."""
        return self._run(_calls.get_booking(reservation_no))

    def cancel_booking(
        self, reservation_no: str, cancellation_id: int, note: str | None = None, idempotency_key: str | None = None
    ) -> None:
        """DELETE /booking-api/booking; ``cancellation_id`` is a ``CancellationReason.id``."""
        self._run(_calls.cancel_booking(reservation_no, cancellation_id, note, idempotency_key))

    def cancellation_reasons(self) -> list[CancellationReason]:
        """GET /booking-api/cancellation-reasons, ordered by position."""
        return self._run(_calls.cancellation_reasons())

    def cancellation_quote(self, reservation_no: str) -> CancellationQuote:
        """GET /booking-api/booking/cancellation-quote: the fee and refund of cancelling now."""
        return self._run(_calls.cancellation_quote(reservation_no))

    def amend_booking(
        self,
        reservation_no: str,
        *,
        pickup_datetime: Instant | None = None,
        passenger: Mapping[str, Any] | None = None,
        travel_details: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Booking:
        """PATCH /booking-api/booking: ask for changes (the partner confirms). Only what is given
        changes: ``pickup_datetime``, ``passenger`` (name, surname, email, phone), ``travel_details``
        (flight_number, extra_requests). Answers the booking with ``amendment.status`` ``PENDING``;
        read it later for ``APPLIED`` or ``REJECTED``. ``AmendmentInProgress`` while one is pending."""
        return self._run(
            _calls.amend_booking(
                reservation_no,
                pickup_datetime=pickup_datetime,
                passenger=passenger,
                travel_details=travel_details,
                idempotency_key=idempotency_key,
            )
        )

    def list_bookings(
        self,
        *,
        status: str | Iterable[str] | None = None,
        pickup_from: Instant | None = None,
        pickup_to: Instant | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        trip_id: str | None = None,
    ) -> BookingPage:
        """GET /booking-api/bookings (beyond the original booking API): your bookings, newest first, one page."""
        return self._run(
            _calls.list_bookings(
                status=status,
                pickup_from=pickup_from,
                pickup_to=pickup_to,
                created_from=created_from,
                created_to=created_to,
                limit=limit,
                cursor=cursor,
                trip_id=trip_id,
            )
        )

    def iter_bookings(
        self,
        *,
        status: str | Iterable[str] | None = None,
        pickup_from: Instant | None = None,
        pickup_to: Instant | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        page_size: int = 100,
    ) -> Iterator[Booking]:
        """Every booking ``list_bookings`` would show, following the cursors."""
        statuses = None if status is None else [status] if isinstance(status, str) else list(status)
        cursor: str | None = None
        while True:
            page = self.list_bookings(
                status=statuses,
                pickup_from=pickup_from,
                pickup_to=pickup_to,
                created_from=created_from,
                created_to=created_to,
                limit=page_size,
                cursor=cursor,
            )
            yield from page.bookings
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def wait_until_approved(
        self, reservation_no: str, *, interval: float | None = None, timeout: float | None = None
    ) -> Booking:
        """Poll the booking until it is APPROVED (driver known) or final (CANCELLED, DECLINED, FAILED,
        COMPLETED, REFUNDED), and return it; check ``status``. Between reads it waits what the
        service's ``Retry-After`` says (a few seconds in sandbox), ``DEFAULT_POLL_INTERVAL`` when it
        says nothing, or ``interval`` seconds when given. After ``timeout`` seconds, ``WaitTimedOut``
        (its ``booking`` is the last state read). A webhook endpoint (``create_webhook_endpoint``)
        spares the polling: the service POSTs ``booking.status_changed`` the moment it changes."""
        deadline = _check_wait(interval, timeout)
        while True:
            polled = self._run(_calls.poll_booking(reservation_no))
            booking = polled.booking
            if _settled(booking):
                return booking
            pause = _pause(interval, polled)
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _timed_out(booking)
                pause = min(pause, remaining)
            self._sleep(pause)


class AsyncTransfersClient(AsyncAccountMethods):
    """The same client for asyncio (``httpx.AsyncClient``); every method is a coroutine."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self._sleep = sleep
        self._http = httpx.AsyncClient(
            base_url=_calls.normalise_base_url(base_url),
            timeout=timeout,
            headers=_calls.default_headers(api_key),
            transport=transport,
            follow_redirects=False,
        )

    async def __aenter__(self) -> AsyncTransfersClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, call: Call[T]) -> T:
        retries = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, params=call.params, content=call.body, headers=_calls.request_headers(call)
                )
            except httpx.TransportError as exc:
                error, delay = _network_error(call, exc), self.retry.delay(retries, None)
            else:
                if response.is_success or not _calls.retryable_status(response.status_code):
                    return _calls.read_answer(call, response)
                error = _calls.tag(error_from_response(response), call)
                delay = self.retry.delay(retries, error.retry_after if isinstance(error, ApiError) else None)
            if delay is None:
                raise error
            await self._sleep(delay)
            retries += 1

    async def search(
        self,
        body: Mapping[str, Any] | None = None,
        *,
        pickup_datetime: Instant | None = None,
        pickup: Location | None = None,
        dropoff: Location | None = None,
        adult: int | None = None,
        children: int | None = None,
        infant: int | None = None,
        return_datetime: Instant | None = None,
        currency: str | None = None,
        sort: str | None = None,
    ) -> SearchResult:
        """See ``TransfersClient.search``."""
        return await self._run(
            _calls.search(
                body,
                pickup_datetime=pickup_datetime,
                pickup=pickup,
                dropoff=dropoff,
                adult=adult,
                children=children,
                infant=infant,
                return_datetime=return_datetime,
                currency=currency,
                sort=sort,
            )
        )

    async def create_booking(
        self,
        search_id: str,
        vehicle_id: int | str,
        passenger: Mapping[str, Any],
        travel_details: Mapping[str, Any],
        suitcase: int = 0,
        small_bags: int = 0,
        extra_services: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        messages: Mapping[str, bool | None] | None = None,
    ) -> Booking:
        """See ``TransfersClient.create_booking``."""
        return await self._run(
            _calls.create_booking(
                search_id=search_id,
                vehicle_id=vehicle_id,
                passenger=passenger,
                travel_details=travel_details,
                suitcase=suitcase,
                small_bags=small_bags,
                extra_services=extra_services,
                idempotency_key=idempotency_key,
                messages=messages,
            )
        )

    async def create_trip(
        self,
        search_id: str,
        vehicle_id: int | str,
        return_vehicle_id: int | str,
        passenger: Mapping[str, Any],
        travel_details: Mapping[str, Any],
        return_travel_details: Mapping[str, Any] | None = None,
        suitcase: int = 0,
        small_bags: int = 0,
        extra_services: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
        messages: Mapping[str, bool | None] | None = None,
    ) -> tuple[Booking, Booking]:
        """See ``TransfersClient.create_trip``."""
        return await self._run(
            _calls.create_trip(
                search_id=search_id,
                vehicle_id=vehicle_id,
                return_vehicle_id=return_vehicle_id,
                passenger=passenger,
                travel_details=travel_details,
                return_travel_details=return_travel_details,
                suitcase=suitcase,
                small_bags=small_bags,
                extra_services=extra_services,
                idempotency_key=idempotency_key,
                messages=messages,
            )
        )

    async def get_booking(self, reservation_no: str) -> Booking:
        return await self._run(_calls.get_booking(reservation_no))

    async def cancel_booking(
        self, reservation_no: str, cancellation_id: int, note: str | None = None, idempotency_key: str | None = None
    ) -> None:
        await self._run(_calls.cancel_booking(reservation_no, cancellation_id, note, idempotency_key))

    async def cancellation_reasons(self) -> list[CancellationReason]:
        return await self._run(_calls.cancellation_reasons())

    async def cancellation_quote(self, reservation_no: str) -> CancellationQuote:
        """See ``TransfersClient.cancellation_quote``."""
        return await self._run(_calls.cancellation_quote(reservation_no))

    async def amend_booking(
        self,
        reservation_no: str,
        *,
        pickup_datetime: Instant | None = None,
        passenger: Mapping[str, Any] | None = None,
        travel_details: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> Booking:
        """See ``TransfersClient.amend_booking``."""
        return await self._run(
            _calls.amend_booking(
                reservation_no,
                pickup_datetime=pickup_datetime,
                passenger=passenger,
                travel_details=travel_details,
                idempotency_key=idempotency_key,
            )
        )

    async def list_bookings(
        self,
        *,
        status: str | Iterable[str] | None = None,
        pickup_from: Instant | None = None,
        pickup_to: Instant | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        trip_id: str | None = None,
    ) -> BookingPage:
        return await self._run(
            _calls.list_bookings(
                status=status,
                pickup_from=pickup_from,
                pickup_to=pickup_to,
                created_from=created_from,
                created_to=created_to,
                limit=limit,
                cursor=cursor,
                trip_id=trip_id,
            )
        )

    async def iter_bookings(
        self,
        *,
        status: str | Iterable[str] | None = None,
        pickup_from: Instant | None = None,
        pickup_to: Instant | None = None,
        created_from: Instant | None = None,
        created_to: Instant | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[Booking]:
        statuses = None if status is None else [status] if isinstance(status, str) else list(status)
        cursor: str | None = None
        while True:
            page = await self.list_bookings(
                status=statuses,
                pickup_from=pickup_from,
                pickup_to=pickup_to,
                created_from=created_from,
                created_to=created_to,
                limit=page_size,
                cursor=cursor,
            )
            for booking in page.bookings:
                yield booking
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def wait_until_approved(
        self, reservation_no: str, *, interval: float | None = None, timeout: float | None = None
    ) -> Booking:
        """See ``TransfersClient.wait_until_approved``."""
        deadline = _check_wait(interval, timeout)
        while True:
            polled = await self._run(_calls.poll_booking(reservation_no))
            booking = polled.booking
            if _settled(booking):
                return booking
            pause = _pause(interval, polled)
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _timed_out(booking)
                pause = min(pause, remaining)
            await self._sleep(pause)
