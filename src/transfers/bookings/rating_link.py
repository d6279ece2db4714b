"""The traveller's rating link a booking carries once the passenger is dropped off
(docs/rules/ratings.md#rating-page): its capability token and the client's ``ride.rating_url``. Pure but
for the process's signing key (``public_urls.link_key``).

Why a signed token rather than a stored one like the tracking page's: the link exists only from the
drop-off, and the resource is rendered from the booking's row, so a stored token would need a column
issued for every booking and a backfill. The token is ``{signature}{reservation_no}``: 22 characters of
HMAC-SHA256 (128 bits, keyed from ``TRANSFERS_SECRET_KEY``) over the reservation number, then the number.
Knowing the number (the partner does) gives nothing: only the service can sign it, and it differs from the
tracking token, which partners see. Changing the secret key ends the rating links issued before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from transfers import public_urls
from transfers.bookings.ride_field import Ride, RideEventType

RATING_PATH = "/r/"
SIGNATURE_LENGTH = 22  # 16 bytes, URL-safe base64 without padding
MAX_TOKEN_LENGTH = SIGNATURE_LENGTH + 40


def _signature(reservation_no: str, key: bytes | None = None) -> str:
    digest = hmac.new(key or public_urls.link_key(), reservation_no.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def rating_token(reservation_no: str, key: bytes | None = None) -> str:
    """The rating page's token of a booking (the process's key unless ``key`` is given)."""
    return _signature(reservation_no, key) + reservation_no


def reservation_of(token: str, key: bytes | None = None) -> str | None:
    """The reservation number a rating token was signed for, or None for anything the service did not
    sign (compared in constant time)."""
    if not (SIGNATURE_LENGTH < len(token) <= MAX_TOKEN_LENGTH) or not token.isascii():
        return None
    if not all(c.isalnum() or c in "-_" for c in token):
        return None
    reservation_no = token[SIGNATURE_LENGTH:]
    if not hmac.compare_digest(token[:SIGNATURE_LENGTH], _signature(reservation_no, key)):
        return None
    return reservation_no


def rating_url(reservation_no: str, ride: Ride) -> str | None:
    """``ride.rating_url`` (docs/rules/ratings.md#rating-page): null until the drop-off is recorded, then
    ``{TRANSFERS_PUBLIC_BASE_URL}/r/{token}`` for good (after its 7 days the page says it has closed)."""
    if RideEventType.DRIVER_ARRIVED_AT_DROPOFF not in ride.types:
        return None
    return f"{public_urls.base_url()}{RATING_PATH}{rating_token(reservation_no)}"
