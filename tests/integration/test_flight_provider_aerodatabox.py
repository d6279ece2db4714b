"""The aerodatabox adapter against a real HTTP server on loopback answering in AeroDataBox's published shape
(``GET /flights/number/{number}/{date}``: an array of flights with ``departure``/``arrival`` movements whose
times are ``{"utc", "local"}``), and failing the ways the real one does: 401, 429 with Retry-After, 5xx, an
answer slower than the client's timeout, 30 s of silence, an empty list, 204, two flights for one number on
one date, garbage, a 10 MB body, and a flight landing before it departs. Short client timeouts keep it quick."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.servers import serving
from transfers.config import Settings
from transfers.flights.aerodatabox import MAX_BODY_BYTES, AeroDataBoxProvider
from transfers.flights.providers import ProviderError
from transfers.flights.rules import NO_DATA, FlightReport, FlightStatus
from transfers.ops.doctor import flight_provider_row

SCHEDULED = datetime(2026, 3, 29, 6, 30, tzinfo=UTC)  # 07:30 BST at Heathrow, the day the clocks went forward


def _time(utc: str, local: str) -> dict[str, str]:
    return {"utc": utc, "local": local}


def flight(
    status: str = "EnRoute",
    *,
    arrival_iata: str = "LHR",
    scheduled: str = "2026-03-29 06:30Z",
    revised: str | None = "2026-03-29 07:15Z",
    departed: str = "2026-03-29 04:10Z",
    runway: str | None = None,
) -> dict[str, Any]:
    """One flight as AeroDataBox publishes it (``FlightContract``: what the adapter reads, and some more)."""
    arrival: dict[str, Any] = {
        "airport": {"icao": "EGLL", "iata": arrival_iata, "name": "London Heathrow", "timeZone": "Europe/London"},
        "scheduledTime": _time(scheduled, "2026-03-29 07:30+01:00"),
        "terminal": "5",
        "gate": "A10",
        "baggageBelt": "7",
        "quality": ["Basic", "Live"],
    }
    if revised is not None:
        arrival["revisedTime"] = _time(revised, "2026-03-29 08:15+01:00")
        arrival["predictedTime"] = _time(revised, "2026-03-29 08:15+01:00")
    if runway is not None:
        arrival["runwayTime"] = _time(runway, "2026-03-29 08:20+01:00")
    return {
        "greatCircleDistance": {"meter": 1_522_999.16, "km": 1522.999},
        "departure": {
            "airport": {"icao": "LEMD", "iata": "MAD", "name": "Madrid Barajas", "timeZone": "Europe/Madrid"},
            "scheduledTime": _time("2026-03-29 04:00Z", "2026-03-29 06:00+02:00"),
            "revisedTime": _time(departed, "2026-03-29 06:10+02:00"),
            "terminal": "4S",
            "quality": ["Basic", "Live"],
        },
        "arrival": arrival,
        "lastUpdatedUtc": "2026-03-29 05:01Z",
        "number": "BA 459",
        "callSign": "BAW459",
        "status": status,
        "codeshareStatus": "IsOperator",
        "isCargo": False,
        "aircraft": {"reg": "G-EUYA", "modeS": "4007F2", "model": "Airbus A320"},
        "airline": {"name": "British Airways", "iata": "BA", "icao": "BAW"},
    }


@dataclass
class FakeAeroDataBox:
    mode: str = "ok"
    seen: list[Request] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def by_number(self, request: Request) -> Response:
        self.seen.append(request)
        mode = self.mode
        if request.headers.get("x-magicapi-key") != "k-123":
            return JSONResponse({"message": "You are not subscribed to this API."}, status_code=401)
        if mode == "429":
            return JSONResponse({"message": "Too many requests"}, status_code=429, headers={"Retry-After": "17"})
        if mode == "500":
            return Response("upstream error", status_code=500)
        if mode == "503":
            return Response("<html>Service Unavailable</html>", status_code=503, media_type="text/html")
        if mode in ("slow", "silence"):
            await self.release.wait()  # released at teardown; the client gives up first
            return JSONResponse([])
        if mode == "drip":

            async def drip() -> AsyncIterator[bytes]:
                for _ in range(200):
                    yield b" "
                    await asyncio.sleep(0.05)

            return StreamingResponse(drip(), media_type="application/json")
        if mode == "empty":
            return JSONResponse([])
        if mode == "204":
            return Response(status_code=204)
        if mode == "404":
            return JSONResponse({"message": "Flight not found"}, status_code=404)
        if mode == "garbage":
            return Response(b"\xff\xfe<not json", media_type="application/json")
        if mode == "object":
            return JSONResponse({"message": "oops"})
        if mode == "bad-time":
            broken = flight()
            broken["arrival"]["revisedTime"] = {"utc": "tomorrow-ish", "local": "?"}
            return JSONResponse([broken])
        if mode == "huge":
            body = b"[" + b" " * (10 * 1024 * 1024) + b"]"
            return Response(body, media_type="application/json")
        if mode == "before-departure":
            return JSONResponse([flight(revised="2026-03-29 03:00Z")])
        if mode == "two":
            # the same number twice on one date: the morning flight (ours) and an evening one
            evening = flight("Expected", scheduled="2026-03-29 18:30Z", revised="2026-03-29 20:00Z")
            return JSONResponse([evening, flight()])
        if mode == "two-legs":
            first_leg = flight(arrival_iata="MAD", scheduled="2026-03-29 06:20Z", revised="2026-03-29 09:00Z")
            return JSONResponse([first_leg, flight()])
        if mode == "landed":
            return JSONResponse([flight("Arrived", revised="2026-03-29 07:10Z", runway="2026-03-29 07:05Z")])
        if mode in ("Canceled", "Diverted", "CanceledUncertain", "Unknown", "Weird"):
            return JSONResponse([flight(mode, revised=None)])
        return JSONResponse([flight()])


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeAeroDataBox, str]]:
    backend = FakeAeroDataBox()
    app = Starlette(routes=[Route("/flights/number/{number}/{date}", backend.by_number)])
    async with serving(app) as server:
        yield backend, server.url
        backend.release.set()


async def _report(
    url: str, mode_holder: FakeAeroDataBox, mode: str, *, key: str = "k-123", timeout: float = 1.0
) -> FlightReport:
    mode_holder.mode = mode
    provider = AeroDataBoxProvider(url, key, timeout_seconds=timeout)
    try:
        return await provider.report("BA459", SCHEDULED, "LHR")
    finally:
        await provider.aclose()


async def test_en_route_with_a_revised_arrival(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    report = await _report(url, backend, "ok")
    assert report.status is FlightStatus.EN_ROUTE
    assert report.scheduled_arrival == SCHEDULED
    assert report.estimated_arrival == datetime(2026, 3, 29, 7, 15, tzinfo=UTC)
    assert report.actual_arrival is None
    assert report.terminal == "5"
    request = backend.seen[-1]
    # the local date at the arrival airport, asked as the arrival's date
    assert request.url.path == "/flights/number/BA459/2026-03-29"
    assert request.query_params["dateLocalRole"] == "Arrival"


async def test_landed_reports_the_runway_time(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    report = await _report(url, backend, "landed")
    assert report.status is FlightStatus.LANDED
    assert report.actual_arrival == datetime(2026, 3, 29, 7, 5, tzinfo=UTC)


@pytest.mark.parametrize(
    ("mode", "status"),
    [
        ("Canceled", FlightStatus.CANCELLED),
        ("Diverted", FlightStatus.DIVERTED),
        ("CanceledUncertain", FlightStatus.UNKNOWN),
        ("Unknown", FlightStatus.UNKNOWN),
        ("Weird", FlightStatus.UNKNOWN),
    ],
)
async def test_statuses(fake: tuple[FakeAeroDataBox, str], mode: str, status: FlightStatus) -> None:
    backend, url = fake
    assert (await _report(url, backend, mode)).status is status


@pytest.mark.parametrize("mode", ["empty", "204", "404"])
async def test_nothing_known_is_no_data(fake: tuple[FakeAeroDataBox, str], mode: str) -> None:
    backend, url = fake
    assert await _report(url, backend, mode) == NO_DATA


async def test_two_flights_for_one_number_and_date_picks_ours(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    report = await _report(url, backend, "two")
    assert report.scheduled_arrival == SCHEDULED
    assert report.estimated_arrival == datetime(2026, 3, 29, 7, 15, tzinfo=UTC)


async def test_two_legs_picks_the_one_landing_at_our_airport(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    report = await _report(url, backend, "two-legs")
    assert report.estimated_arrival == datetime(2026, 3, 29, 7, 15, tzinfo=UTC)


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("500", "HTTP 500"),
        ("503", "HTTP 503"),
        ("garbage", "not JSON"),
        ("object", "not a list"),
        ("bad-time", "unreadable time"),
        ("huge", "more than"),
        ("before-departure", "lands before it departs"),
    ],
)
async def test_failures_are_provider_errors(fake: tuple[FakeAeroDataBox, str], mode: str, words: str) -> None:
    backend, url = fake
    with pytest.raises(ProviderError, match=words):
        await _report(url, backend, mode)


async def test_a_wrong_key_is_401(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    with pytest.raises(ProviderError, match="refused the key"):
        await _report(url, backend, "ok", key="wrong")


async def test_429_carries_its_retry_after(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    with pytest.raises(ProviderError) as caught:
        await _report(url, backend, "429")
    assert caught.value.retry_after == 17.0


@pytest.mark.parametrize("mode", ["slow", "silence", "drip"])
async def test_slow_silent_or_dripping_answers_time_out(fake: tuple[FakeAeroDataBox, str], mode: str) -> None:
    """A provider silent for 30 s (or dripping a byte at a time) is given up on at the client's timeout."""
    backend, url = fake
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(ProviderError, match="did not answer"):
        await _report(url, backend, mode, timeout=0.5)
    assert loop.time() - started < 30  # bounded by the timeout, never by the server


async def test_an_unreachable_provider() -> None:
    provider = AeroDataBoxProvider("http://127.0.0.1:9", "k", timeout_seconds=0.5)
    with pytest.raises(ProviderError):
        await provider.report("BA459", SCHEDULED, "LHR")
    await provider.aclose()


async def test_probe(fake: tuple[FakeAeroDataBox, str]) -> None:
    backend, url = fake
    backend.mode = "ok"
    provider = AeroDataBoxProvider(url, "k-123", timeout_seconds=1.0)
    assert "answered" in await provider.probe()
    await provider.aclose()
    assert MAX_BODY_BYTES < 10 * 1024 * 1024


async def test_doctor_checks_the_configured_provider(fake: tuple[FakeAeroDataBox, str]) -> None:
    """``transfers doctor``'s "flight provider" row: PASS when aerodatabox answers, FAIL naming the cause when it
    refuses the key or is not configured, WARN for ``none`` (live's default), PASS for the sandbox provider."""
    backend, url = fake
    backend.mode = "ok"

    def settings(**values: object) -> Settings:
        return Settings(_env_file=None, **values)  # type: ignore[arg-type]

    good = await flight_provider_row(
        settings(flight_provider="aerodatabox", flight_provider_url=url, flight_provider_key="k-123")
    )
    assert (good.check, good.result) == ("flight provider", "PASS") and url in good.detail
    refused = await flight_provider_row(
        settings(flight_provider="aerodatabox", flight_provider_url=url, flight_provider_key="nope")
    )
    assert refused.result == "FAIL" and "401" in refused.detail and "nope" not in refused.detail
    missing = await flight_provider_row(settings(flight_provider="aerodatabox"))
    assert missing.result == "FAIL" and "TRANSFERS_FLIGHT_PROVIDER_URL" in missing.detail
    assert (await flight_provider_row(settings(environment="live", secret_key="x" * 40))).result == "WARN"
    assert (await flight_provider_row(settings())).result == "PASS"
