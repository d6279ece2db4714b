"""The aerodatabox adapter against a real HTTP server on loopback answering in AeroDataBox's published shape
(``GET /flights/number/{number}/{date}``: an array of flights with ``departure``/``arrival`` movements whose
times are ``{"utc", "local"}``), and failing the ways the real one does: 401, 429 with Retry-After, 5xx, an
answer slower than the client's timeout, 30 s of silence, an empty list, 204, two flights for one number on
one date, garbage, a 10 MB body, and a flight landing before it departs. Short client timeouts keep it quick."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from tests.fake_flight_provider import SCHEDULED, FakeAeroDataBox
from tests.servers import serving
from transfers.config import Settings
from transfers.flights.aerodatabox import MAX_BODY_BYTES, AeroDataBoxProvider
from transfers.flights.providers import ProviderError
from transfers.flights.rules import NO_DATA, FlightReport
from transfers.ops.doctor import flight_provider_row
from transfers.reference.flights import FlightStatus


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
