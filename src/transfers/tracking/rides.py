"""The ride as the pages read it, from the booking row (docs/rules/ride.md#ride-field).

Until the ride's own columns exist every ride is NOT_STARTED; this is the one place that reads them."""

from __future__ import annotations

from transfers.bookings.models import Booking
from transfers.tracking.facts import NOT_STARTED, RideNow


def ride_now(booking: Booking) -> RideNow:
    return NOT_STARTED
