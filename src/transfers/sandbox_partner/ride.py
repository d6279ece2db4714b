"""The sandbox partner drives a ride (docs/rules/sandbox.md#ride): surname ``RIDE`` plays the whole
ride through the reverse API once approved, surname ``NOSHOW`` a customer no-show, on the compressed
clock of docs/rules/ride.md#sandbox-and-console, so an integrator sees every driver event and position
at their webhook within a minute of booking.

The driver starts a little way off the pickup and drives straight to it, then straight to the drop-off,
sending a position every 2 s. The service judges the sandbox partner's reports on the same compressed
clock (``ride/rules.compressed``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from transfers.sandbox_partner import fleet
from transfers.sandbox_partner.reverse import ReverseApi

DEPART_AFTER = 5.0  # seconds after approval
TO_PICKUP = 20.0
BOARD_AFTER = 5.0
TO_DROPOFF = 20.0
POSITION_EVERY = 2.0
START_OFFSET = 0.02  # degrees north of the pickup the driver sets off from
NO_SHOW_MARGIN = 1.0  # seconds after the free wait's end
FREE_WAIT_SECONDS = {"AIRPORT": 60.0}  # the compressed free wait: a minute per hour (15 s elsewhere)

Sleep = Callable[[float], Awaitable[None]]
Now = Callable[[], datetime]


def _system_now() -> datetime:
    return datetime.now(UTC)


def _point(origin: dict[str, Any], fallback: tuple[float, float]) -> tuple[float, float]:
    return fleet.coordinates(origin) or fallback


class RideDriver:
    """One sandbox ride: the reverse API calls a driver makes, in order."""

    def __init__(
        self, reverse: ReverseApi, reservation_no: str, details: dict[str, Any], sleep: Sleep, now: Now = _system_now
    ) -> None:
        self.reverse = reverse
        self.reservation_no = reservation_no
        self.pickup = _point(details.get("from", {}), (51.4700, -0.4543))
        self.dropoff = _point(details.get("to", {}), (self.pickup[0] + 0.1, self.pickup[1] + 0.1))
        self.pickup_type = str(details.get("from", {}).get("type", "AIRPORT"))
        self.sleep = sleep
        self.now = now

    async def event(self, kind: str, where: tuple[float, float] | None = None) -> bool:
        body: dict[str, Any] = {
            "reservation_no": self.reservation_no,
            "type": kind,
            "occurred_at": self.now().isoformat(),
        }
        if where is not None:
            body.update(lat=round(where[0], 6), lng=round(where[1], 6))
        return await self.reverse.event(body)

    async def drive(self, start: tuple[float, float], end: tuple[float, float], seconds: float) -> None:
        """A position every 2 s along the straight line from ``start`` to ``end``, for ``seconds``."""
        steps = max(1, int(seconds / POSITION_EVERY))
        for i in range(1, steps + 1):
            await self.sleep(POSITION_EVERY)
            share = i / steps
            lat = start[0] + (end[0] - start[0]) * share
            lng = start[1] + (end[1] - start[1]) * share
            position = {
                "lat": round(lat, 6),
                "lng": round(lng, 6),
                "at": self.now().isoformat(),
                "heading": None,
                "speed_kmh": 40.0,
            }
            await self.reverse.positions({"reservation_no": self.reservation_no, "positions": [position]})

    async def ride(self) -> None:
        """RIDE: departs, arrives, the passenger boards, dropped off."""
        start = (self.pickup[0] + START_OFFSET, self.pickup[1])
        await self.sleep(DEPART_AFTER)
        await self.event("DRIVER_DEPARTED_TO_PICKUP", start)
        await self.drive(start, self.pickup, TO_PICKUP)
        await self.event("DRIVER_ARRIVED_AT_PICKUP", self.pickup)
        await self.sleep(BOARD_AFTER)
        await self.event("DRIVER_DEPARTED_TO_DROPOFF", self.pickup)
        await self.drive(self.pickup, self.dropoff, TO_DROPOFF)
        await self.event("DRIVER_ARRIVED_AT_DROPOFF", self.dropoff)

    async def no_show(self) -> None:
        """NOSHOW: departs, arrives, waits out the (compressed) free wait, reports the no-show."""
        start = (self.pickup[0] + START_OFFSET, self.pickup[1])
        await self.sleep(DEPART_AFTER)
        await self.event("DRIVER_DEPARTED_TO_PICKUP", start)
        await self.drive(start, self.pickup, TO_PICKUP)
        await self.event("DRIVER_ARRIVED_AT_PICKUP", self.pickup)
        await self.sleep(FREE_WAIT_SECONDS.get(self.pickup_type, 15.0) + NO_SHOW_MARGIN)
        await self.event("CUSTOMER_NO_SHOW", self.pickup)


async def play(reverse: ReverseApi, reservation_no: str, details: dict[str, Any], *, no_show: bool) -> None:
    driver = RideDriver(reverse, reservation_no, details, asyncio.sleep)
    await (driver.no_show() if no_show else driver.ride())
