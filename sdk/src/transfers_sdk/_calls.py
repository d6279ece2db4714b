"""What the sync and async clients share: each operation as a ``Call`` (method, path, query, body
bytes, Idempotency-Key, parser), the retry policy, and the reading of answers. The two clients
only differ in how they send a ``Call`` and sleep."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import InvalidOperation
from typing import Any, Generic, TypeVar

import httpx

from transfers_sdk._version import __version__
from transfers_sdk.errors import TransfersError, UnexpectedResponse, error_from_response, parse_retry_after
from transfers_sdk.models import (
    Airport,
    Booking,
    BookingPage,
    CancellationQuote,
    CancellationReason,
    Point,
    SearchResult,
)

T = TypeVar("T")
API = "/api/v1/booking-api"
Location = Airport | Point | Mapping[str, Any]
Instant = datetime | str


@dataclass(frozen=True)
class Call(Generic[T]):
    """One logical request; every retry of it sends exactly these bytes and this Idempotency-Key."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    idempotency_key: str | None = None
    # When set, reads the parsed body together with the answer's headers (instead of ``parse``).
    read: Callable[[Any, httpx.Headers], T] | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of network failures, 5xx and 429 (never of other 4xx).

    ``max_retries`` retries after the first attempt; the n-th waits ``Retry-After`` when the
    service sent one, else ``backoff * 2**n`` capped at ``max_backoff``, half of it random
    (jitter, so many clients do not retry in step). A ``Retry-After`` longer than
    ``max_retry_after`` is not waited out: the error is raised at once, carrying ``retry_after``.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def delay(self, retries_done: int, retry_after: float | None) -> float | None:
        """Seconds to wait before the next retry, or None when no retry is left."""
        if retries_done >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling: float = min(self.max_backoff, self.backoff * 2.0**retries_done)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def normalise_base_url(base_url: str) -> str:
    """``http://host:8000`` or the spec's ``http://host:8000/api/v1``: both name the same service."""
    base = base_url.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http(s) URL, not {base_url!r}")
    return base[: -len("/api/v1")] if base.endswith("/api/v1") else base


def default_headers(api_key: str) -> dict[str, str]:
    if not api_key or any(c.isspace() for c in api_key):
        raise ValueError("api_key must be the key printed by `transfers clients create`")
    return {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "User-Agent": f"transfers-sdk-python/{__version__}",
    }


def request_headers(call: Call[Any]) -> dict[str, str]:
    headers: dict[str, str] = {}
    if call.body is not None:
        headers["Content-Type"] = "application/json"
    if call.idempotency_key is not None:
        headers["Idempotency-Key"] = call.idempotency_key
    return headers


def read_answer(call: Call[T], response: httpx.Response) -> T:
    """The parsed result of a 2xx answer, or the typed error of any other."""
    if not response.is_success:
        raise tag(error_from_response(response), call)
    request_id = response.headers.get("x-request-id")
    try:
        data = response.json() if response.content else None  # 204: no body
        return call.read(data, response.headers) if call.read is not None else call.parse(data)
    except (ValueError, KeyError, TypeError, AttributeError, InvalidOperation) as exc:
        raise tag(
            UnexpectedResponse(
                f"{call.method} {call.path}: answer {response.status_code} is not the documented shape ({exc!r})",
                http_status=response.status_code,
                request_id=request_id,
            ),
            call,
        ) from exc


def tag(error: TransfersError, call: Call[Any]) -> TransfersError:
    """Attach the Idempotency-Key used, so the caller can retry the same request safely later."""
    error.idempotency_key = call.idempotency_key
    return error


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _location(value: Location) -> dict[str, Any]:
    if isinstance(value, Airport | Point):
        return value.to_json()
    return dict(value)


def _pickup_datetime(value: Instant) -> str:
    if isinstance(value, datetime):
        # naive: local time at the airport, in the documented form; aware: ISO 8601 with its offset
        return value.strftime("%Y-%m-%d %H:%M") if value.tzinfo is None else value.isoformat()
    return value


def _instant(name: str, value: Instant) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"{name} must be a timezone-aware datetime")
        return value.isoformat()
    return value


# ---- operations -----------------------------------------------------------------------------------


def search(
    body: Mapping[str, Any] | None,
    *,
    pickup_datetime: Instant | None,
    pickup: Location | None,
    dropoff: Location | None,
    adult: int | None,
    children: int | None,
    infant: int | None,
    return_datetime: Instant | None = None,
    currency: str | None = None,
    sort: str | None = None,
) -> Call[SearchResult]:
    named = {
        "pickup_datetime": pickup_datetime,
        "pickup": pickup,
        "dropoff": dropoff,
        "adult": adult,
        "children": children,
        "infant": infant,
        "return_datetime": return_datetime,
        "currency": currency,
        "sort": sort,
    }
    if body is not None:
        given = sorted(k for k, v in named.items() if v is not None)
        if given:
            raise TypeError(f"search() takes a body or keyword arguments, not both (got {', '.join(given)})")
        request = dict(body)
    else:
        missing = [k for k in ("pickup_datetime", "pickup", "dropoff", "adult") if named[k] is None]
        if missing:
            raise TypeError(f"search() is missing {', '.join(missing)}")
        assert pickup_datetime is not None and pickup is not None and dropoff is not None
        travelers: dict[str, Any] = {"adult": adult}
        if children is not None:
            travelers["children"] = children
        if infant is not None:
            travelers["infant"] = infant
        request = {
            "pickup_datetime": _pickup_datetime(pickup_datetime),
            "pickup_location": _location(pickup),
            "dropoff_location": _location(dropoff),
            "travelers": travelers,
        }
        if return_datetime is not None:  # docs/rules/return-trips.md#search: the way back, same form
            request["return_datetime"] = _pickup_datetime(return_datetime)
        if currency is not None:  # docs/rules/fx.md#search: the currency the offers are priced in
            request["currency"] = currency
        if sort is not None:  # docs/rules/quality.md#ranking: price | recommended
            request["sort"] = sort
    return Call("POST", f"{API}/search", SearchResult.from_json, body=_json(request))


def create_booking(
    *,
    search_id: str,
    vehicle_id: int | str,
    passenger: Mapping[str, Any],
    travel_details: Mapping[str, Any],
    suitcase: int,
    small_bags: int,
    extra_services: Sequence[Mapping[str, Any]] | None,
    idempotency_key: str | None,
    messages: Mapping[str, bool | None] | None = None,
) -> Call[Booking]:
    request: dict[str, Any] = {
        "search_id": search_id,
        "vehicle_id": vehicle_id,
        "suitcase": suitcase,
        "small_bags": small_bags,
        "passenger": dict(passenger),
        "travel_details": dict(travel_details),
    }
    if extra_services is not None:
        request["extra_services"] = [dict(item) for item in extra_services]
    if messages is not None:
        request["messages"] = dict(messages)  # docs/rules/messages.md#settings: only switches channels off
    return Call(
        "POST",
        f"{API}/booking",
        lambda data: Booking.from_json(data["booking"]),
        body=_json(request),
        idempotency_key=idempotency_key or str(uuid.uuid4()),
    )


def create_trip(
    *,
    search_id: str,
    vehicle_id: int | str,
    return_vehicle_id: int | str,
    passenger: Mapping[str, Any],
    travel_details: Mapping[str, Any],
    return_travel_details: Mapping[str, Any] | None,
    suitcase: int,
    small_bags: int,
    extra_services: Sequence[Mapping[str, Any]] | None,
    idempotency_key: str | None,
    messages: Mapping[str, bool | None] | None = None,
) -> Call[tuple[Booking, Booking]]:
    """docs/rules/return-trips.md#create: both legs in one call, (way out, way back)."""
    request: dict[str, Any] = {
        "search_id": search_id,
        "vehicle_id": vehicle_id,
        "return_vehicle_id": return_vehicle_id,
        "suitcase": suitcase,
        "small_bags": small_bags,
        "passenger": dict(passenger),
        "travel_details": dict(travel_details),
    }
    if return_travel_details is not None:
        request["return_travel_details"] = dict(return_travel_details)
    if extra_services is not None:
        request["extra_services"] = [dict(item) for item in extra_services]
    if messages is not None:
        request["messages"] = dict(messages)  # docs/rules/messages.md#settings: only switches channels off
    return Call(
        "POST",
        f"{API}/booking",
        lambda data: (Booking.from_json(data["booking"]), Booking.from_json(data["return_booking"])),
        body=_json(request),
        idempotency_key=idempotency_key or str(uuid.uuid4()),
    )


def get_booking(reservation_no: str) -> Call[Booking]:
    return Call("GET", f"{API}/booking", Booking.from_json, params=(("reservation_no", reservation_no),))


@dataclass(frozen=True)
class Polled:
    """A booking read, with the service's hint of when to read it again (``Retry-After``, seconds)."""

    booking: Booking
    retry_after: float | None


def _polled(data: Any, headers: httpx.Headers) -> Polled:
    return Polled(Booking.from_json(data), parse_retry_after(headers.get("retry-after")))


def poll_booking(reservation_no: str) -> Call[Polled]:
    """GET booking, keeping the ``Retry-After`` hint the service sends while it waits for the partner."""
    return Call(
        "GET",
        f"{API}/booking",
        lambda data: Polled(Booking.from_json(data), None),
        params=(("reservation_no", reservation_no),),
        read=_polled,
    )


def _cancelled(data: Any) -> None:
    if not isinstance(data, dict) or data.get("status") != "Success":
        raise ValueError(f"not a cancellation success: {data!r}")


def cancel_booking(
    reservation_no: str, cancellation_id: int, note: str | None, idempotency_key: str | None
) -> Call[None]:
    params = [("reservation_no", reservation_no), ("cancellation_id", str(cancellation_id))]
    if note is not None:
        params.append(("note", note))
    return Call(
        "DELETE",
        f"{API}/booking",
        _cancelled,
        params=tuple(params),
        idempotency_key=idempotency_key or str(uuid.uuid4()),
    )


def cancellation_quote(reservation_no: str) -> Call[CancellationQuote]:
    return Call(
        "GET",
        f"{API}/booking/cancellation-quote",
        CancellationQuote.from_json,
        params=(("reservation_no", reservation_no),),
    )


def amend_booking(
    reservation_no: str,
    *,
    pickup_datetime: Instant | None,
    passenger: Mapping[str, Any] | None,
    travel_details: Mapping[str, Any] | None,
    idempotency_key: str | None,
) -> Call[Booking]:
    """PATCH /booking: only the parts given are sent (a field not sent stays as it is)."""
    request: dict[str, Any] = {}
    if pickup_datetime is not None:
        request["pickup_datetime"] = _pickup_datetime(pickup_datetime)
    if passenger is not None:
        request["passenger"] = dict(passenger)
    if travel_details is not None:
        request["travel_details"] = dict(travel_details)
    return Call(
        "PATCH",
        f"{API}/booking",
        lambda data: Booking.from_json(data["booking"]),
        body=_json(request),
        params=(("reservation_no", reservation_no),),
        idempotency_key=idempotency_key or str(uuid.uuid4()),
    )


def cancellation_reasons() -> Call[list[CancellationReason]]:
    return Call("GET", f"{API}/cancellation-reasons", lambda data: [CancellationReason.from_json(r) for r in data])


def list_bookings(
    *,
    status: str | Iterable[str] | None,
    pickup_from: Instant | None,
    pickup_to: Instant | None,
    created_from: Instant | None,
    created_to: Instant | None,
    limit: int | None,
    cursor: str | None,
    trip_id: str | None = None,
) -> Call[BookingPage]:
    params: list[tuple[str, str]] = []
    if trip_id is not None:  # docs/rules/return-trips.md#legs: both legs of one trip
        params.append(("trip_id", trip_id))
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        if statuses:
            params.append(("status", ",".join(str(s) for s in statuses)))
    for name, value in (
        ("pickup_from", pickup_from),
        ("pickup_to", pickup_to),
        ("created_from", created_from),
        ("created_to", created_to),
    ):
        if value is not None:
            params.append((name, _instant(name, value)))
    if limit is not None:
        params.append(("limit", str(limit)))
    if cursor is not None:
        params.append(("cursor", cursor))
    return Call("GET", f"{API}/bookings", BookingPage.from_json, params=tuple(params))
