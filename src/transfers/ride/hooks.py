"""What the ride's use cases tell the features above them (``incidents/``), registered at start-up by
``transfers/features.py`` as the bookings' moments are (``bookings/hooks.py``): the ride imports no
incident, the incidents import the ride (its events and positions are their evidence).

A handler runs in the same transaction as the report it hears of (it is given the report's connection,
the booking's row locked by it, and must not commit, open another transaction or call out), so the
report and what the feature does about it commit or roll back together. Registering twice is a no-op.

The moment:

* **the customer did not show** (``customer_no_show``): the partner's CUSTOMER_NO_SHOW event was
  recorded (the booking, as moved by it, completed when it was APPROVED); the incidents open the
  no-show's incident, resolved at once (docs/rules/incidents.md#customer-no-show).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking

NoShow = Callable[[AsyncConnection, Booking, datetime], Awaitable[object]]


class RideHooks:
    """The registered handlers of each moment (one instance per process: ``RIDE_HOOKS``)."""

    def __init__(self) -> None:
        self.customer_no_show: list[NoShow] = []

    def on_customer_no_show(self, handler: NoShow) -> None:
        if handler not in self.customer_no_show:
            self.customer_no_show.append(handler)

    async def no_show(self, conn: AsyncConnection, booking: Booking, now: datetime) -> None:
        for handler in self.customer_no_show:
            await handler(conn, booking, now)


RIDE_HOOKS = RideHooks()
"""This process's registrations (``transfers/features.py`` fills it at start-up)."""
