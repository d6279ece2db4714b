"""The sandbox flight provider (docs/rules/flights.md#sandbox-provider): deterministic, from the number.

The scheduled arrival is the pickup as booked (the watcher passes it). ``ZZ1mmm`` is ``mmm`` minutes
late, ``ZZ2mmm`` ``mmm`` minutes early, ``ZZ9001`` cancelled, ``ZZ9002`` diverted, ``ZZ9003`` unknown to
the provider; any other number lands on time. The news is known from the first check; the flight is
``LANDED`` once its estimated arrival has passed on the injected clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from transfers.clock import Clock
from transfers.flights.rules import NO_DATA, FlightReport
from transfers.reference.flights import FlightStatus

_SCENARIO = re.compile(r"^ZZ([12])(\d{3})$")


class SandboxProvider:
    name = "sandbox"

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self.calls = 0  # how many reports were asked (the bench and the tests count provider calls)
        self.asked: list[tuple[str, str]] = []  # (number, airport) of each call, in order

    async def report(self, number: str, scheduled_arrival: datetime, airport_iata: str) -> FlightReport:
        self.calls += 1
        self.asked.append((number, airport_iata))
        if number == "ZZ9001":
            return FlightReport(FlightStatus.CANCELLED, scheduled_arrival)
        if number == "ZZ9002":
            return FlightReport(FlightStatus.DIVERTED, scheduled_arrival)
        if number == "ZZ9003":
            return NO_DATA
        shift = timedelta()
        match = _SCENARIO.match(number)
        if match is not None:
            minutes = int(match.group(2))
            shift = timedelta(minutes=minutes if match.group(1) == "1" else -minutes)
        estimated = scheduled_arrival + shift
        if self._clock.now() >= estimated:
            return FlightReport(FlightStatus.LANDED, scheduled_arrival, estimated, estimated, "1")
        return FlightReport(FlightStatus.SCHEDULED, scheduled_arrival, estimated, None, "1")

    async def probe(self) -> str:
        return "sandbox flight provider (ZZ numbers, docs/rules/flights.md#sandbox-provider)"

    async def aclose(self) -> None:
        return None
