"""The traveller's tracking link a booking carries (docs/rules/ride.md#tracking-page): its capability
token and its URL, the resource's ``ride.tracking_url``. Pure: no HTTP, no SQL. The pages themselves
and their rules are ``tracking/`` (above the bookings).

When the traveller's token is issued: in the booking's own INSERT (``bookings/creating.booking_values``),
so every booking has one from its first answer (its ``tracking_url`` never changes) and no read ever
writes. Issuing it lazily on first read would make GET booking a write, and two first reads at once
would race for it; at creation there is nothing to race. The unique index on
``bookings.tracking_token`` is the last line of defence against a (2^-128) collision.
"""

from __future__ import annotations

import secrets

from transfers import public_urls

# 16 random bytes = 128 bits, 22 URL-safe characters (the column holds 32).
TOKEN_BYTES = 16
TOKEN_MAX_LENGTH = 32
TRAVELLER_PATH = "/t/"


def new_token() -> str:
    """A fresh capability token: 128 bits from the operating system's CSPRNG (a driver link's too)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def tracking_url(token: str | None, base_url: str | None = None) -> str | None:
    """``{TRANSFERS_PUBLIC_BASE_URL}/t/{token}`` (the process's, ``public_urls.py``, unless ``base_url`` is
    given); None for a booking without a token."""
    if token is None:
        return None
    return f"{(base_url or public_urls.base_url()).rstrip('/')}{TRAVELLER_PATH}{token}"
