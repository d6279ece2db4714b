"""The traveller's page and the driver link as rules (docs/rules/ride.md#tracking-page,
docs/rules/ride.md#driver-page): their capability tokens, their URLs and the time windows they open.

Pure: no HTTP, no SQL. The pages (``transfers/tracking/``) and the BookingResource read these, so the
windows are stated once and tested by moving the injected clock.

When the traveller's token is issued: in the booking's own INSERT (``bookings/service.py``), so every
booking has one from its first answer (its ``tracking_url`` never changes) and no read ever writes.
Issuing it lazily on first read would make GET booking a write, and two first reads at once would
race for it; at creation there is nothing to race. The unique index on ``bookings.tracking_token`` is
the last line of defence against a (2^-128) collision.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from transfers import public_urls

# 16 random bytes = 128 bits, 22 URL-safe characters (the column holds 32).
TOKEN_BYTES = 16
TOKEN_MAX_LENGTH = 32
# docs/rules/ride.md#tracking-page: usable until 7 days after pickup; the driver's phone from 2 h before.
PAGE_OPEN_AFTER_PICKUP = timedelta(days=7)
PHONE_BEFORE_PICKUP = timedelta(hours=2)
# docs/rules/ride.md#driver-page: the driver link opens 24 h before pickup and closes 24 h after it.
DRIVER_LINK_BEFORE_PICKUP = timedelta(hours=24)
DRIVER_LINK_AFTER_PICKUP = timedelta(hours=24)
TRAVELLER_PATH = "/t/"
DRIVER_PATH = "/d/"


def new_token() -> str:
    """A fresh capability token: 128 bits from the operating system's CSPRNG."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def looks_like_token(value: str) -> bool:
    """Whether ``value`` could be a token at all (URL-safe base64, bounded): anything else is a 404
    without a database read."""
    return 16 <= len(value) <= TOKEN_MAX_LENGTH and value.isascii() and all(c.isalnum() or c in "-_" for c in value)


def tracking_url(token: str | None, base_url: str | None = None) -> str | None:
    """``{TRANSFERS_PUBLIC_BASE_URL}/t/{token}`` (the process's, ``public_urls.py``, unless ``base_url`` is
    given); None for a booking without a token."""
    if token is None:
        return None
    return f"{(base_url or public_urls.base_url()).rstrip('/')}{TRAVELLER_PATH}{token}"


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
