"""The flight vocabulary a booking carries (docs/rules/flights.md): its flight number as stored and
as the watch reads it (docs/rules/flights.md#flight-number), and the statuses of its ``flight``.

Below the bookings, which validate the number and show the ``flight`` field, and the sandbox
partner; the flight watch itself (``flights/``) sits above the bookings and imports it from here.
A value that does not normalise to a trackable number is still accepted by the booking API: the
traveller may have typed something odd, the partner still gets it, it is just never tracked.
"""

from __future__ import annotations

import re
from enum import StrEnum

# docs/rules/flights.md#flight-number: what a trackable flight number looks like once normalised.
TRACKABLE = re.compile(r"^[A-Z0-9]{2}[A-Z]?[0-9]{1,4}[A-Z]?$")
# The designator (two characters, an optional third letter), the leading zeros of the number, the rest.
_PARTS = re.compile(r"^([A-Z0-9]{2}[A-Z]?)0*([0-9]{1,4}[A-Z]?)$")
_DROPPED = re.compile(r"[\s\-]+")


def normalise(raw: str | None) -> str | None:
    """Upper case, spaces and hyphens removed, the number's leading zeros dropped (``"ba 0123"`` -> ``BA123``).

    ``None`` stays ``None``; a value that is not a flight number comes back upper-cased and without spaces
    or hyphens (never refused: docs/rules/flights.md#flight-number)."""
    if raw is None:
        return None
    compact = _DROPPED.sub("", raw).upper()
    match = _PARTS.match(compact)
    if match is None:
        return compact
    return match.group(1) + match.group(2)


def is_trackable(number: str | None) -> bool:
    """Whether a normalised number can be asked of a provider."""
    return number is not None and TRACKABLE.fullmatch(number) is not None


class FlightStatus(StrEnum):
    """The ``flight.status`` of a BookingResource (docs/rules/flights.md#booking-fields)."""

    UNTRACKED = "UNTRACKED"
    SCHEDULED = "SCHEDULED"
    EN_ROUTE = "EN_ROUTE"
    LANDED = "LANDED"
    CANCELLED = "CANCELLED"
    DIVERTED = "DIVERTED"
    UNKNOWN = "UNKNOWN"
