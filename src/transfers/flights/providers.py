"""The flight-status provider interface (docs/rules/flights.md#provider).

A provider answers one question: what is known of flight NUMBER arriving around SCHEDULED? It returns a
``FlightReport`` (``NO_DATA`` when it knows nothing) or raises ``ProviderError`` (a failure the watch logs
and retries at the next slot). Providers never touch the database and never move a pickup: the rules
(``flights/rules.py``) decide, the watcher acts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from transfers.clock import Clock
from transfers.config import Settings
from transfers.errors import Unavailable
from transfers.flights.rules import NO_DATA, FlightReport


class ProviderError(Unavailable):
    """The provider could not answer this time (network, 401, 429, 5xx, garbage, too large, too slow):
    something the service needs cannot serve now, so a failure no caller catches renders as any
    ``Unavailable`` does (the flight watch catches it: logged, retried at the next slot).

    ``retry_after``: seconds the provider asked us to wait (429's Retry-After), when it said so."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FlightProvider(Protocol):
    name: str

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        """The report for ``number`` landing at ``airport_iata`` around ``scheduled_arrival`` (aware)."""
        ...

    async def probe(self) -> str:
        """A cheap check for ``transfers doctor``: a sentence when it works; raises ``ProviderError``."""
        ...

    async def aclose(self) -> None: ...


class NoProvider:
    """``TRANSFERS_FLIGHT_PROVIDER=none`` (the default in live): nothing is known, nothing moves."""

    name = "none"

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        return NO_DATA

    async def probe(self) -> str:
        return "no flight provider: pickups never follow flights"

    async def aclose(self) -> None:
        return None


def build_provider(settings: Settings, clock: Clock) -> FlightProvider:
    """The provider ``TRANSFERS_FLIGHT_PROVIDER`` names (docs/rules/flights.md#provider)."""
    from transfers.flights.aerodatabox import AeroDataBoxProvider
    from transfers.flights.sandbox import SandboxProvider

    kind = settings.resolved_flight_provider
    if kind == "sandbox":
        return SandboxProvider(clock)
    if kind == "aerodatabox":
        return AeroDataBoxProvider(
            settings.flight_provider_url,
            settings.flight_provider_key,
            timeout_seconds=settings.flight_provider_timeout_seconds,
        )
    return NoProvider()
