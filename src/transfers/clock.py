"""Time source. Everything that asks "what time is it" asks a Clock, so tests can move time."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass
class ShiftedClock:
    """The system clock moved by ``offset``; tests shift it to reach deadlines and expiries."""

    offset: timedelta = field(default_factory=timedelta)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, delta: timedelta) -> None:
        self.offset += delta
