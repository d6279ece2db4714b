"""The ride section of a hosted partner's booking page (docs/rules/ride.md#driver-page): its driver link,
read for the page (``portal/routes/ride.py`` creates and revokes it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starlette.requests import Request

from transfers.bookings.models import Booking
from transfers.portal.auth import PartnerViewer, services
from transfers.tracking import driver as steps
from transfers.tracking import repository as links
from transfers.tracking.repository import DriverLink
from transfers.tracking.rules import DRIVER_LINK_AFTER_PICKUP, DRIVER_LINK_BEFORE_PICKUP, driver_url

# Bookings that show the ride: accepted, or finished (late events are accepted for 24 h).
LINKABLE = frozenset({"APPROVED", "COMPLETED"})


@dataclass(frozen=True, slots=True)
class RidePanel:
    """What the booking page's ride section shows."""

    link: DriverLink | None
    url: str | None
    opens_at: datetime
    closes_at: datetime
    can_link: bool
    stage: str
    # The five buttons: (event type, label, when it was recorded or None), in ride order.
    events: tuple[tuple[str, str, datetime | None], ...]
    can_report: bool  # APPROVED, or COMPLETED within the 24 h late events are still accepted


async def ride_panel(request: Request, viewer: PartnerViewer, booking: Booking) -> RidePanel | None:
    """The ride section of a hosted partner's accepted booking; None where it has none."""
    if not viewer.hosted or booking.status.value not in LINKABLE:
        return None
    svc = services(request)
    async with svc.db.read() as conn:
        link = await links.driver_link(conn, booking.id)
    ride = booking.trip.ride
    recorded = {m.type.value: m.occurred_at for m in ride.events}
    url = driver_url(svc.settings.service_url, link.token) if link is not None and link.active else None
    return RidePanel(
        link,
        url,
        booking.pickup_at - DRIVER_LINK_BEFORE_PICKUP,
        booking.pickup_at + DRIVER_LINK_AFTER_PICKUP,
        booking.status.value == "APPROVED",
        ride.stage.value,
        tuple((kind, label, recorded.get(kind)) for kind, label in steps.EVENT_LABELS.items()),
        booking.status.value in LINKABLE,
    )
