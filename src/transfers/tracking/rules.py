"""The traveller's page and the driver link as rules (docs/rules/ride.md#tracking-page,
docs/rules/ride.md#driver-page): what a token may look like, the driver link's URL and the time
windows the pages open. Pure: no HTTP, no SQL. The pages (``tracking/pages.py``), the portal's ride
panel and the tests read these, so the windows are stated once and tested by moving the injected clock.

The traveller's token and its URL are the booking's (``bookings/tracking_link.py``): issued with the
booking, shown in its resource.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from transfers.bookings.tracking_link import TOKEN_MAX_LENGTH

# docs/rules/ride.md#tracking-page: usable until 7 days after pickup; the driver's phone from 2 h before.
PAGE_OPEN_AFTER_PICKUP = timedelta(days=7)
PHONE_BEFORE_PICKUP = timedelta(hours=2)
# docs/rules/ride.md#driver-page: the driver link opens 24 h before pickup and closes 24 h after it.
DRIVER_LINK_BEFORE_PICKUP = timedelta(hours=24)
DRIVER_LINK_AFTER_PICKUP = timedelta(hours=24)
DRIVER_PATH = "/d/"
# docs/operations/security.md: a driver page takes at most one position per link this often (its script
# sends one every 10 s; a leaked link cannot flood the booking's positions and the client's webhooks).
POSITION_EVERY = timedelta(seconds=3)


def looks_like_token(value: str) -> bool:
    """Whether ``value`` could be a token at all (URL-safe base64, bounded): anything else is a 404
    without a database read."""
    return 16 <= len(value) <= TOKEN_MAX_LENGTH and value.isascii() and all(c.isalnum() or c in "-_" for c in value)


def driver_url(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}{DRIVER_PATH}{token}"


def traveller_page_gone(pickup_at: datetime, now: datetime) -> bool:
    """After 7 days past pickup the page answers 410 (docs/rules/ride.md#tracking-page)."""
    return now >= pickup_at + PAGE_OPEN_AFTER_PICKUP


def phone_visible(pickup_at: datetime, now: datetime, *, ride_over: bool) -> bool:
    """The driver's phone: from 2 h before pickup until the ride ends (docs/rules/ride.md#tracking-page)."""
    return not ride_over and now >= pickup_at - PHONE_BEFORE_PICKUP


def driver_link_open(pickup_at: datetime, now: datetime) -> bool:
    """A driver link works from 24 h before to 24 h after pickup (docs/rules/ride.md#driver-page)."""
    return pickup_at - DRIVER_LINK_BEFORE_PICKUP <= now < pickup_at + DRIVER_LINK_AFTER_PICKUP
