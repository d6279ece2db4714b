"""What a rating may hold and when a ride may be rated (docs/rules/ratings.md). Pure: no HTTP, no SQL;
the window is tested by moving the injected clock.

Every refusal is a domain error with the contract's code: ``INVALID_RATING`` for a body or a form that
is not a rating (stars not a whole number 1..5, a comment over 1000 characters or holding control
characters), ``RATING_NOT_ALLOWED`` outside the window.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from transfers.bookings.ride_field import Ride, RideEventType
from transfers.errors import ErrorCode, Invalid, Refused
from transfers.text import REFUSED, refused_character

MAX_COMMENT = 1000
WINDOW = timedelta(days=7)  # from the drop-off
STARS = range(1, 6)
_BODY_KEYS = frozenset({"stars", "comment"})


class Source(StrEnum):
    """Who passed the rating on."""

    TRAVELLER = "traveller"  # the rating page
    CLIENT = "client"  # the agency, through the booking API


def dropped_off_at(ride: Ride) -> datetime | None:
    """When the passenger was dropped off (the recorded event's ``occurred_at``), None before."""
    for event in ride.events:
        if event.type is RideEventType.DRIVER_ARRIVED_AT_DROPOFF:
            return event.occurred_at
    return None


def window_open(ride: Ride, now: datetime) -> bool:
    """From the recorded drop-off until 7 days after it occurred."""
    dropped = dropped_off_at(ride)
    return dropped is not None and now < dropped + WINDOW


def check_open(ride: Ride, now: datetime) -> None:
    if not window_open(ride, now):
        raise Refused(ErrorCode.RATING_NOT_ALLOWED)


def window_closed(ride: Ride, now: datetime) -> bool:
    """The drop-off was recorded and its 7 days are over (the page says so rather than "not yet")."""
    dropped = dropped_off_at(ride)
    return dropped is not None and now >= dropped + WINDOW


def parse_body(body: dict[str, Any]) -> tuple[int, str | None]:
    """The stars and comment of ``POST /booking/rating``: ``stars`` a JSON integer 1..5 (not a string, a
    boolean or a float), ``comment`` absent, null or a string."""
    unknown = sorted(set(body) - _BODY_KEYS)
    if unknown:
        raise Invalid(ErrorCode.INVALID_RATING, f"Unknown field: {unknown[0]}.")
    stars = body.get("stars")
    if isinstance(stars, bool) or not isinstance(stars, int) or stars not in STARS:
        raise Invalid(ErrorCode.INVALID_RATING, "stars must be a whole number from 1 to 5.")
    return stars, parse_comment(body.get("comment"))


def parse_form(stars: object, comment: object) -> tuple[int, str | None]:
    """The stars and comment of the rating page's form (text fields): ``stars`` one of "1".."5"."""
    if not isinstance(stars, str) or stars.strip() not in {str(n) for n in STARS}:
        raise Invalid(ErrorCode.INVALID_RATING, "Choose from 1 to 5 stars.")
    return int(stars.strip()), parse_comment(comment if comment != "" else None)


def parse_comment(comment: object) -> str | None:
    """Optional: None or a text of at most 1000 characters (blank is none), lines allowed, no control
    characters or bidirectional overrides (docs/rules/booking.md#text: the partner and operators read it)."""
    if comment is None:
        return None
    if not isinstance(comment, str):
        raise Invalid(ErrorCode.INVALID_RATING, "comment must be a text of at most 1000 characters.")
    found = refused_character(comment, multiline=True)
    if found is not None:
        raise Invalid(ErrorCode.INVALID_RATING, f"comment may not contain {REFUSED} ({found}).")
    comment = comment.strip()
    if len(comment) > MAX_COMMENT:
        raise Invalid(ErrorCode.INVALID_RATING, "comment must be a text of at most 1000 characters.")
    return comment or None
