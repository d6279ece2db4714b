"""Search request rules (docs/rules/search.md#locations, docs/rules/search.md#request,
docs/rules/errors.md#search-codes, docs/rules/search.md). Pure: no HTTP, no SQL.

``parse_search`` checks the body in the order of the 7.1 code table and raises the first failing
code. Booleans are not numbers, strings are not numbers, and null counts as missing.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from transfers import money
from transfers.errors import Code, Invalid
from transfers.reference.airports import Airport, find_airport
from transfers.rows import frozen_value
from transfers.text import is_clean

MAX_NAME_LENGTH = 255
SORTS = ("price", "recommended")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?")


@frozen_value  # one per search (search/service.py's limits)
class SearchLimits:
    min_lead: timedelta
    max_ahead: timedelta
    max_travelers: int


@frozen_value  # Point and SearchQuery: one each per search, built without object.__setattr__ (transfers/rows.py)
class Point:
    lat: float
    lng: float
    name: str


@frozen_value
class SearchQuery:
    airport: Airport
    point: Point
    airport_is_pickup: bool
    pickup_at: datetime  # aware, in the airport's time zone
    adult: int
    children: int
    infant: int
    # docs/rules/return-trips.md#search: the way back's pickup (aware, airport time); None: one way
    return_at: datetime | None = None

    @property
    def party_size(self) -> int:
        return self.adult + self.children + self.infant

    def location(self, pickup: bool) -> dict[str, Any]:
        """A stored/partner-facing location: airports carry their name and coordinates."""
        if pickup == self.airport_is_pickup:
            a = self.airport
            return {"type": "AIRPORT", "iata_code": a.iata, "name": a.name, "lat": a.lat, "lng": a.lng}
        return {"type": "POINT", "name": self.point.name, "lat": self.point.lat, "lng": self.point.lng}


# Codes per side, in table order: (required, type required, type invalid, iata required, iata invalid,
# lat, lng, name).
_PICKUP = (
    Code.SEARCH_PICKUP_LOCATION_REQUIRED,
    Code.SEARCH_PICKUP_LOCATION_TYPE_REQUIRED,
    Code.SEARCH_PICKUP_LOCATION_TYPE_INVALID,
    Code.SEARCH_PICKUP_IATA_CODE_REQUIRED,
    Code.SEARCH_PICKUP_IATA_CODE_INVALID,
    Code.SEARCH_PICKUP_LAT_REQUIRED,
    Code.SEARCH_PICKUP_LNG_REQUIRED,
    Code.SEARCH_PICKUP_NAME_REQUIRED,
)
_DROPOFF = (
    Code.SEARCH_DROPOFF_LOCATION_REQUIRED,
    Code.SEARCH_DROPOFF_LOCATION_TYPE_REQUIRED,
    Code.SEARCH_DROPOFF_LOCATION_TYPE_INVALID,
    Code.SEARCH_DROPOFF_IATA_CODE_REQUIRED,
    Code.SEARCH_DROPOFF_IATA_CODE_INVALID,
    Code.SEARCH_DROPOFF_LAT_REQUIRED,
    Code.SEARCH_DROPOFF_LNG_REQUIRED,
    Code.SEARCH_DROPOFF_NAME_REQUIRED,
)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_search(body: dict[str, Any], now: datetime, limits: SearchLimits) -> SearchQuery:
    pickup = body.get("pickup_location")
    dropoff = body.get("dropoff_location")
    # 1300-1305: both locations present with a valid type (pickup first).
    pickup, pickup_type = _location_type(pickup, _PICKUP)
    dropoff, dropoff_type = _location_type(dropoff, _DROPOFF)
    # 1306-1309: airport codes, pickup then dropoff.
    pickup_airport = _airport(pickup, _PICKUP) if pickup_type == "AIRPORT" else None
    dropoff_airport = _airport(dropoff, _DROPOFF) if dropoff_type == "AIRPORT" else None
    # 1310-1315: point coordinates and names, pickup then dropoff.
    pickup_point = _point(pickup, _PICKUP) if pickup_type == "POINT" else None
    dropoff_point = _point(dropoff, _DROPOFF) if dropoff_type == "POINT" else None
    # 1316-1317: the date-time, local to the airport when it has no offset.
    airport = pickup_airport or dropoff_airport
    pickup_at = _pickup_at(body.get("pickup_datetime"), airport, now, limits)
    # 1324, right after 1316/1317 (docs/rules/return-trips.md#search): null is the same as absent.
    raw_return = body.get("return_datetime")
    return_at = None if raw_return is None else _return_at(raw_return, pickup_at, airport, now, limits)
    # 1318-1322: travellers.
    adult, children, infant = _travelers(body.get("travelers"), limits.max_travelers)
    # 1323: exactly one AIRPORT and one POINT.
    if airport is None or (pickup_airport is not None) == (dropoff_airport is not None):
        raise Invalid(Code.SEARCH_AIRPORT_REQUIRED)
    point = pickup_point or dropoff_point
    if point is None:  # not reached: the other side of the one AIRPORT is a POINT (else 1323 above)
        raise Invalid(Code.SEARCH_AIRPORT_REQUIRED)
    return SearchQuery(airport, point, pickup_airport is not None, pickup_at, adult, children, infant, return_at)


def requested_sort(value: Any) -> str:
    """The search's ``sort`` (docs/rules/quality.md#ranking), checked after every other search code (1325
    included): absent or null, ``price``; ``price`` or ``recommended``; anything else 1326."""
    if value is None:
        return "price"
    if isinstance(value, str) and value in SORTS:
        return value
    raise Invalid(Code.SEARCH_SORT_INVALID)


def _location_type(location: Any, codes: tuple[Code, ...]) -> tuple[dict[str, Any], str]:
    if not isinstance(location, dict):
        raise Invalid(codes[0])
    kind = location.get("type")
    if kind is None or kind == "":
        raise Invalid(codes[1])
    if kind not in ("AIRPORT", "POINT"):
        raise Invalid(codes[2])
    return location, str(kind)


def _airport(location: dict[str, Any], codes: tuple[Code, ...]) -> Airport:
    code = location.get("iata_code")
    if code is None or code == "":
        raise Invalid(codes[3])
    airport = find_airport(code) if isinstance(code, str) else None
    if airport is None:
        raise Invalid(codes[4])
    return airport


def _point(location: dict[str, Any], codes: tuple[Code, ...]) -> Point:
    lat, lng, name = location.get("lat"), location.get("lng"), location.get("name")
    if not isinstance(lat, int | float) or not is_number(lat) or not -90 <= lat <= 90:
        raise Invalid(codes[5])
    if not isinstance(lng, int | float) or not is_number(lng) or not -180 <= lng <= 180:
        raise Invalid(codes[6])
    # docs/rules/booking.md#text: the address is sent to the partners and shown to their drivers
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH or not is_clean(name):
        raise Invalid(codes[7])
    return Point(float(lat), float(lng), name.strip())


def _pickup_at(value: Any, airport: Airport | None, now: datetime, limits: SearchLimits) -> datetime:
    if value is None or value == "":
        raise Invalid(Code.SEARCH_PICKUP_DATETIME_REQUIRED)
    if not isinstance(value, str) or not _DATETIME.fullmatch(value):
        raise Invalid(Code.SEARCH_PICKUP_DATETIME_INVALID)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise Invalid(Code.SEARCH_PICKUP_DATETIME_INVALID) from None
    # Local to the airport when the text has no offset (to ``now``'s zone without an airport: a search refused
    # later with 1323); the window is checked on instants, against ``now`` made UTC once.
    zone = airport.tz if airport is not None else now.tzinfo
    if now.tzinfo is not UTC:
        now = now.astimezone(UTC)
    if parsed.tzinfo is None:
        local = parsed.replace(tzinfo=zone)
        instant = local.astimezone(UTC)
        # A wall-clock time skipped by a daylight-saving change does not exist at the airport: its round trip
        # through UTC comes back another wall-clock time (both in ``zone``, so ``!=`` compares wall clocks).
        if instant.astimezone(zone) != local or not now + limits.min_lead <= instant <= now + limits.max_ahead:
            raise Invalid(Code.SEARCH_PICKUP_DATETIME_INVALID)
        return local
    local = parsed.astimezone(zone)
    if not now + limits.min_lead <= local <= now + limits.max_ahead:
        raise Invalid(Code.SEARCH_PICKUP_DATETIME_INVALID)
    return local


MIN_RETURN_GAP = timedelta(hours=1)  # docs/rules/return-trips.md#search


def _return_at(
    value: Any, pickup_at: datetime, airport: Airport | None, now: datetime, limits: SearchLimits
) -> datetime:
    """The way back's pickup, read as ``pickup_datetime`` is (same format, local at the airport,
    inside the booking window) and at least an hour after it; any failure is 1324."""
    try:
        back = _pickup_at(value, airport, now, limits)
    except Invalid:
        raise Invalid(Code.SEARCH_RETURN_DATETIME_INVALID) from None
    if back < pickup_at + MIN_RETURN_GAP:
        raise Invalid(Code.SEARCH_RETURN_DATETIME_INVALID)
    return back


# 1316/1317 and 1317's window for a booking's new pickup time (``bookings/amend_rules.py``).
pickup_instant = _pickup_at


def _travelers(value: Any, maximum: int) -> tuple[int, int, int]:
    if not isinstance(value, dict):
        raise Invalid(Code.SEARCH_TRAVELERS_REQUIRED)
    adult = value.get("adult")
    if adult is None:
        raise Invalid(Code.SEARCH_TRAVELERS_ADULT_REQUIRED)
    if not is_int(adult) or not 1 <= adult <= maximum:
        raise Invalid(Code.SEARCH_TRAVELERS_ADULT_INVALID)
    children = _count(value.get("children"), maximum, Code.SEARCH_TRAVELERS_CHILDREN_INVALID)
    return adult, children, _count(value.get("infant"), maximum, Code.SEARCH_TRAVELERS_INFANT_INVALID)


def _count(count: Any, maximum: int, code: Code) -> int:
    """A child or infant count: absent or null is 0."""
    if count is None:
        return 0
    if not is_int(count) or not 0 <= count <= maximum:
        raise Invalid(code)
    return cast(int, count)


def requested_currency(value: Any, enabled: frozenset[str] | None) -> str | None:
    """The search's ``currency`` as sent (docs/rules/fx.md#search): absent or null, None; else an active
    ISO 4217 code in capitals, among TRANSFERS_CURRENCIES when that is set, or 1325 (a number, a boolean,
    ``"gbp"``, ``"GBPX"``, a code in other letters). Whether the client may search in it is the caller's."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value) != 3 or not money.is_currency(value):
        raise Invalid(Code.SEARCH_CURRENCY_INVALID)
    if enabled is not None and value not in enabled:
        raise Invalid(Code.SEARCH_CURRENCY_INVALID)
    return value
