"""The ride as the pages read it, from the booking row (``Trip.ride``: docs/rules/ride.md#ride-field), and
the driver page's reports through the ride's own use cases (``ride/service.py``): the same rules and
refusals as the reverse API, never a second implementation."""

from __future__ import annotations

from typing import Any

from transfers.bookings.models import Booking
from transfers.ride import service as riding
from transfers.ride.rules import parse_event, parse_positions
from transfers.services import Services
from transfers.tracking.facts import RideNow, Spot


def ride_now(booking: Booking) -> RideNow:
    ride = booking.trip.ride
    position = ride.position
    return RideNow(ride.stage.value, None if position is None else Spot(position.lat, position.lng, position.at))


def driver_actor(booking: Booking) -> str:
    """How the booking's story names a report from the driver link (the partner's own driver)."""
    return f"driver_link (partner {booking.partner_id})"


async def report_event(svc: Services, booking: Booking, event_type: Any, lat: Any, lng: Any, *, actor: str) -> bool:
    """A button of the driver page or the portal: the event now, with the phone's position when the page had
    one. Raises ``ride.rules.RideInvalid``/``RideRefused`` (their messages name the rule) or BookingNotFound.
    Answers whether it was recorded (False: a harmless repeat)."""
    body = {
        "reservation_no": booking.reservation_no,
        "type": event_type,
        "occurred_at": svc.clock.now().isoformat(),
        "lat": lat,
        "lng": lng,
    }
    report = parse_event(body, svc.clock.now())
    done = await riding.record_event(svc, booking.partner_id, report, actor=actor)
    return done.recorded


async def report_position(svc: Services, booking: Booking, position: Any) -> int:
    """The driver page's position every 10 s (one item), under the reverse API's rules. Its time is the
    service's clock on receipt, not the phone's: the fix is at most 10 s old, while a phone's clock can be
    minutes off (and more than 5 minutes ahead is refused by the rules)."""
    now = svc.clock.now()
    item = {**position, "at": now.isoformat()} if isinstance(position, dict) else position
    report = parse_positions({"reservation_no": booking.reservation_no, "positions": [item]}, now)
    return await riding.record_positions(svc, booking.partner_id, report, actor=driver_actor(booking))
