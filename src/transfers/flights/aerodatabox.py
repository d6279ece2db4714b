"""The AeroDataBox adapter (docs/rules/flights.md#provider, docs/rules/flights.md#aerodatabox).

It speaks AeroDataBox's published "flight status by number and date" call:
``GET {TRANSFERS_FLIGHT_PROVIDER_URL}/flights/number/{number}/{localDate}?dateLocalRole=Arrival``,
answered with a JSON array of flights (an empty array, 204 or 404 when none is known). Each flight has
``number``, ``status`` (``Unknown``, ``Expected``, ``CheckIn``, ``Boarding``, ``GateClosed``, ``Departed``,
``Delayed``, ``EnRoute``, ``Approaching``, ``Arrived``, ``Canceled``, ``CanceledUncertain``, ``Diverted``)
and ``departure``/``arrival`` movements with ``airport.iata``, ``scheduledTime``, ``revisedTime``,
``predictedTime``, ``runwayTime`` (each ``{"utc": "2026-03-29 06:30Z", "local": "2026-03-29 08:30+02:00"}``)
and ``terminal``. The key goes in ``x-magicapi-key`` (API.market) and ``X-RapidAPI-Key`` (RapidAPI), the
two ways the provider is sold.

Everything the provider can do wrong is a ``ProviderError`` (logged, retried at the next slot): 401/403,
429 (with its Retry-After), 5xx, a body that is not that JSON, a body over ``MAX_BODY_BYTES``, no answer
within the timeout, a flight that lands before it departs. Nothing here moves a pickup.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import httpx

from transfers.flights.providers import ProviderError
from transfers.flights.rules import NO_DATA, FlightReport
from transfers.reference.airports import local_time
from transfers.reference.flights import FlightStatus

MAX_BODY_BYTES = 1_048_576  # a day's flights for one number are a few kB
MAX_RETRY_AFTER_SECONDS = 3600.0

_STATUSES = {
    "unknown": FlightStatus.UNKNOWN,
    "expected": FlightStatus.SCHEDULED,
    "checkin": FlightStatus.SCHEDULED,
    "boarding": FlightStatus.SCHEDULED,
    "gateclosed": FlightStatus.SCHEDULED,
    "delayed": FlightStatus.SCHEDULED,
    "departed": FlightStatus.EN_ROUTE,
    "enroute": FlightStatus.EN_ROUTE,
    "approaching": FlightStatus.EN_ROUTE,
    "arrived": FlightStatus.LANDED,
    "canceled": FlightStatus.CANCELLED,
    "diverted": FlightStatus.DIVERTED,
    # The provider is not sure: neither are we, so nothing is disrupted on it.
    "canceleduncertain": FlightStatus.UNKNOWN,
}


class AeroDataBoxProvider:
    name = "aerodatabox"

    def __init__(self, base_url: str, key: str, *, timeout_seconds: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = key
        self._timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout),
                follow_redirects=False,
                headers={"x-magicapi-key": self._key, "X-RapidAPI-Key": self._key, "Accept": "application/json"},
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        """The flight ``number`` landing at ``airport_iata`` closest to ``scheduled_arrival``."""
        local_date = local_time(airport_iata, scheduled_arrival).date().isoformat()
        path = f"/flights/number/{quote(number, safe='')}/{local_date}"
        body = await self._get(path, {"dateLocalRole": "Arrival", "withAircraftImage": "false"})
        if body is None:
            return NO_DATA
        return pick(parse(body), scheduled_arrival, airport_iata)

    async def probe(self) -> str:
        """A call for a fixed flight today: proves the URL, the key and the JSON (doctor)."""
        today = datetime.now(UTC).date().isoformat()
        body = await self._get(f"/flights/number/BA1/{today}", {"dateLocalRole": "Arrival"})
        flights = parse(body) if body is not None else []
        return f"aerodatabox at {self.base_url} answered ({len(flights)} flight(s) for a test number)"

    async def _get(self, path: str, params: dict[str, str]) -> bytes | None:
        """The body of a 200 (None for 204/404: nothing known); ProviderError for everything else.

        The whole call, a slowly dripped body included, is bounded by the timeout (``asyncio.timeout``):
        httpx's own timeouts bound each read, not the sum."""
        try:
            async with asyncio.timeout(self._timeout):
                return await self._read(path, params)
        except TimeoutError as exc:
            raise ProviderError(f"aerodatabox did not answer within {self._timeout:g} s") from exc
        except httpx.TimeoutException as exc:
            raise ProviderError(f"aerodatabox did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"aerodatabox cannot be reached: {type(exc).__name__}") from exc

    async def _read(self, path: str, params: dict[str, str]) -> bytes | None:
        async with self._http().stream("GET", self.base_url + path, params=params) as answer:
            status = answer.status_code
            if status in (204, 404):
                return None
            if status in (401, 403):
                raise ProviderError(f"aerodatabox refused the key (HTTP {status})")
            if status == 429:
                raise ProviderError("aerodatabox: too many requests (HTTP 429)", retry_after=_retry_after(answer))
            if status != 200:
                raise ProviderError(f"aerodatabox answered HTTP {status}")
            chunks: list[bytes] = []
            size = 0
            async for chunk in answer.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise ProviderError(f"aerodatabox answered more than {MAX_BODY_BYTES} bytes")
                chunks.append(chunk)
            return b"".join(chunks)


def _retry_after(answer: httpx.Response) -> float | None:
    raw = answer.headers.get("Retry-After", "")
    try:
        seconds = float(raw)
    except ValueError:
        return None
    if seconds != seconds or seconds < 0:  # NaN or negative
        return None
    return min(seconds, MAX_RETRY_AFTER_SECONDS)


def parse(body: bytes) -> list[dict[str, Any]]:
    """The flights of an answer: a JSON array of objects (an empty body or array: none)."""
    if not body.strip():
        return []
    try:
        items = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProviderError("aerodatabox answered something that is not JSON") from exc
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ProviderError("aerodatabox answered JSON that is not a list of flights")
    return items


def parse_time(value: Any) -> datetime | None:
    """A movement time (``{"utc": "2026-03-29 06:30Z", "local": ...}``) as an aware UTC datetime; None when
    absent. A present but unparsable time is a ProviderError (garbage, not "no estimate")."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ProviderError("aerodatabox answered a time that is not an object")
    raw = value.get("utc")
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw) > 40:
        raise ProviderError("aerodatabox answered a time that is not a string")
    text = raw.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ProviderError(f"aerodatabox answered an unreadable time {raw[:40]!r}") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _movement(flight: dict[str, Any], key: str) -> dict[str, Any]:
    movement = flight.get(key) or {}
    if not isinstance(movement, dict):
        raise ProviderError(f"aerodatabox answered a {key} that is not an object")
    return movement


def _airport(movement: dict[str, Any]) -> str | None:
    airport = movement.get("airport")
    if isinstance(airport, dict) and isinstance(airport.get("iata"), str):
        return str(airport["iata"]).upper()
    return None


def to_report(flight: dict[str, Any]) -> FlightReport:
    """One flight of the answer as a report. A flight that lands before it departs is garbage."""
    arrival = _movement(flight, "arrival")
    departure = _movement(flight, "departure")
    raw_status = flight.get("status")
    status = _STATUSES.get(raw_status.lower(), FlightStatus.UNKNOWN) if isinstance(raw_status, str) else None
    if status is None:
        status = FlightStatus.UNKNOWN
    scheduled = parse_time(arrival.get("scheduledTime"))
    revised = parse_time(arrival.get("revisedTime"))
    predicted = parse_time(arrival.get("predictedTime"))
    runway = parse_time(arrival.get("runwayTime"))
    estimated = revised or predicted or runway
    actual = (runway or revised) if status == FlightStatus.LANDED else None
    departed = parse_time(departure.get("revisedTime")) or parse_time(departure.get("scheduledTime"))
    lands = actual or estimated or scheduled
    if departed is not None and lands is not None and lands < departed:
        raise ProviderError("aerodatabox answered a flight that lands before it departs")
    terminal = arrival.get("terminal")
    return FlightReport(
        status,
        scheduled,
        estimated,
        actual,
        str(terminal)[:20] if isinstance(terminal, str | int) and not isinstance(terminal, bool) else None,
    )


def pick(flights: list[dict[str, Any]], scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
    """Of several flights for one number and date (legs, or the same number twice a day), the one landing at
    our airport whose scheduled arrival is closest to ours; NO_DATA when none lands there."""
    candidates: list[tuple[float, FlightReport]] = []
    for flight in flights:
        there = _airport(_movement(flight, "arrival"))
        if there is not None and there != airport_iata.upper():
            continue
        report = to_report(flight)
        if report.scheduled_arrival is None:
            distance = float("inf")
        else:
            distance = abs((report.scheduled_arrival - scheduled_arrival).total_seconds())
        candidates.append((distance, report))
    if not candidates:
        return NO_DATA
    candidates.sort(key=lambda pair: pair[0])
    return candidates[0][1]
