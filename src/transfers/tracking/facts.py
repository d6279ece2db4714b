"""What the traveller's page shows (docs/rules/ride.md#tracking-page), as one value: the HTML page and
``/t/{token}.json`` render the same facts, so they cannot disagree.

Pure: the booking row, the ride read from it and the clock's time come in. What it never holds is as
important as what it holds: never the passenger's e-mail or phone, the price, the client or the partner
reference (a capability URL can be forwarded; tests/integration/test_tracking_page.py checks both forms).

The words are in the page's language (docs/rules/messages.md#page-language); ``/t/{token}.json`` answers
in English.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from transfers.bookings.models import Booking
from transfers.bookings.resource import flight_view
from transfers.bookings.trip import Driver, Place, Trip
from transfers.flights.news import flight_news
from transfers.i18n.catalogs import N_, Words
from transfers.i18n.dates import clock, decimal, short_date, short_date_with_year
from transfers.reference.airports import find_airport, great_circle_km, local_time
from transfers.tracking.rules import phone_visible

REFRESH_SECONDS = 30
# docs/rules/ride.md#ride-field: the stages during which the ride is on (the position is shown).
RIDE_ON = frozenset({"EN_ROUTE_TO_PICKUP", "AT_PICKUP", "ON_BOARD"})
RIDE_OVER = frozenset({"DROPPED_OFF", "CUSTOMER_NO_SHOW"})
# The statuses in which the page may still change (the ride to come or under way).
LIVE_STATUSES = frozenset({"PENDING", "PENDING_APPROVAL", "APPROVED"})

STATUS_WORDS = {
    "PENDING": N_("Booked: waiting for the transport company to confirm"),
    "PENDING_APPROVAL": N_("Booked: waiting for the transport company to confirm"),
    "APPROVED": N_("Confirmed"),
    "COMPLETED": N_("Completed"),
    "CANCELLED": N_("Cancelled"),
    "DECLINED": N_("Cancelled: the transport company could not take it"),
    "FAILED": N_("Not booked: it could not be placed"),
    "REFUNDED": N_("Cancelled and refunded"),
    "DEFAULT": N_("Booked"),
}
STAGE_WORDS = {
    "NOT_STARTED": N_("Your driver has not set off yet"),
    "EN_ROUTE_TO_PICKUP": N_("Your driver is on the way to the pickup point"),
    "AT_PICKUP": N_("Your driver is at the pickup point"),
    "ON_BOARD": N_("On board: on the way to your drop-off"),
    "DROPPED_OFF": N_("Arrived: the ride is over"),
    "CUSTOMER_NO_SHOW": N_("The driver waited but could not find you"),
}


@dataclass(frozen=True, slots=True)
class Spot:
    """The driver's latest position, as the page needs it."""

    lat: float
    lng: float
    at: datetime


@dataclass(frozen=True, slots=True)
class RideNow:
    """The ride as the page reads it: its stage and, while it is on, the latest position."""

    stage: str = "NOT_STARTED"
    position: Spot | None = None


NOT_STARTED = RideNow()


def place_point(place: Place) -> tuple[float, float] | None:
    """Coordinates of a route end: a point's own, an airport's from the reference data."""
    if place.lat is not None and place.lng is not None:
        return float(place.lat), float(place.lng)
    if place.iata_code:
        airport = find_airport(place.iata_code)
        if airport is not None:
            return airport.lat, airport.lng
    return None


def first_name(full_name: str) -> str:
    """The driver's first name only (the page shows no more of a person than the traveller needs)."""
    parts = full_name.split()
    return parts[0] if parts else ""


def minutes_ago(at: datetime, now: datetime) -> int:
    return max(0, int((now - at).total_seconds() // 60))


def ago_words(minutes: int, words: Words | None = None) -> str:
    words = words or Words("en")
    if minutes == 0:
        return words("updated just now")
    return words("updated %(minutes)s min ago", minutes=minutes)


def distance_words(km: float, dropoff: bool = False, words: Words | None = None) -> str:
    """ "about 4.2 km from the pickup point"; from "the drop-off" while the traveller is on board."""
    words = words or Words("en")
    if km < 0.1:
        return words("at the drop-off") if dropoff else words("at the pickup point")
    shown = decimal(km, words.language) if km < 10 else decimal(round(km), words.language, "0")
    if dropoff:
        return words("about %(km)s km from the drop-off", km=shown)
    return words("about %(km)s km from the pickup point", km=shown)


def traveller_facts(
    booking: Booking, ride: RideNow, now: datetime, *, support_phone: str | None = None, language: str = "en"
) -> dict[str, Any]:
    """The page's facts as JSON-able data (``/t/{token}.json`` answers exactly this, in English). ``support_phone``:
    the agency's, given to a traveller whose flight is disrupted (never the agency's name). ``language``: the
    words' (docs/rules/messages.md#page-language)."""
    words = Words(language)
    trip = booking.trip
    local = trip.local_pickup
    airport = find_airport(booking.airport_iata)
    status = booking.status.value
    confirmed = status in ("APPROVED", "COMPLETED")
    stage = ride.stage if confirmed else None
    over = status != "APPROVED" or ride.stage in RIDE_OVER
    driver = trip.driver if confirmed else None
    position: dict[str, Any] | None = None
    if status == "APPROVED" and ride.stage in RIDE_ON and ride.position is not None:
        position = _position(trip, ride.stage, ride.position, now, words)
    return {
        "reservation_no": booking.reservation_no,
        "status": status,
        "status_text": words(STATUS_WORDS[status]) if status in STATUS_WORDS else status.replace("_", " ").capitalize(),
        "stage": stage,
        "stage_text": words(STAGE_WORDS[stage]) if stage in STAGE_WORDS else None,
        "pickup": {
            "name": trip.route.pickup.label,
            "local_time": local.isoformat(),
            "time_zone": airport.tz.key if airport else "UTC",
            "zone_abbreviation": local.tzname() or "UTC",
            "text": _when(local, words.language),
        },
        "dropoff": {"name": trip.route.dropoff.label},
        "vehicle": {"make": trip.vehicle.make, "model": trip.vehicle.model, "type": trip.vehicle.type},
        "driver": None
        if driver is None
        else {
            "first_name": first_name(driver.name),
            "plate": driver.plate,
            "phone": driver.phone if phone_visible(booking.pickup_at, now, ride_over=over) else None,
        },
        "meeting_point": trip.meeting_point if confirmed else None,
        "call": _call(driver, phone_visible(booking.pickup_at, now, ride_over=over), support_phone, words),
        "next_step": _no_show_step(booking, support_phone, words) if stage == "CUSTOMER_NO_SHOW" else None,
        "flight": _flight(trip, words.language),
        "disruption": _disruption(booking, support_phone, words),
        "position": position,
        "ride_on": status == "APPROVED" and ride.stage in RIDE_ON,
        # docs/rules/ride.md#tracking-page: a page that can still change refreshes itself; one whose ride is over
        # (or whose booking is closed) does not, and says so.
        "refresh_seconds": REFRESH_SECONDS if status in LIVE_STATUSES and ride.stage not in RIDE_OVER else None,
        "as_of": now.isoformat(),
    }


def _position(trip: Trip, stage: str, spot: Spot, now: datetime, words: Words) -> dict[str, Any]:
    """The latest position in words and for the picture. Before the pickup it is measured from the pickup point;
    on board from the drop-off (what the traveller wants to know then is how far there is left to go).
    ``centre`` names the picture's centre, ``bearing`` is the driver seen from it."""
    pickup_point = place_point(trip.route.pickup)
    dropoff_point = place_point(trip.route.dropoff) if stage == "ON_BOARD" else None
    km = None if pickup_point is None else great_circle_km(spot.lat, spot.lng, *pickup_point)
    km_left = None if dropoff_point is None else great_circle_km(spot.lat, spot.lng, *dropoff_point)
    ago = minutes_ago(spot.at, now)
    if stage == "ON_BOARD":
        centre, centre_point, shown = "dropoff", dropoff_point, km_left
    else:
        centre, centre_point, shown = "pickup", pickup_point, km
    said = ago_words(ago, words)
    if shown is not None:
        said = words("%(ago)s, %(distance)s", ago=said, distance=distance_words(shown, centre == "dropoff", words))
    return {
        "lat": spot.lat,
        "lng": spot.lng,
        "at": spot.at.isoformat(),
        "minutes_ago": ago,
        "km_from_pickup": None if km is None else round(km, 1),
        "km_to_dropoff": None if km_left is None else round(km_left, 1),
        "centre": centre,
        "text": said[0].upper() + said[1:],
        "bearing": None if centre_point is None else round(bearing(centre_point, (spot.lat, spot.lng))),
    }


def _call(
    driver: Driver | None, driver_phone_shown: bool, support_phone: str | None, words: Words
) -> dict[str, str] | None:
    """The page's one call button (docs/rules/ride.md#tracking-page): the driver while the driver's phone is shown,
    else the agency's support phone when it set one, else none."""
    if driver is not None and driver.phone and driver_phone_shown:
        name = first_name(driver.name)
        return {
            "who": "driver",
            "phone": driver.phone,
            "text": words("Call %(name)s: %(phone)s", name=name, phone=driver.phone),
        }
    if support_phone:
        text = words("Call your travel agency: %(phone)s", phone=support_phone)
        return {"who": "agency", "phone": support_phone, "text": text}
    return None


def _no_show_step(booking: Booking, support_phone: str | None, words: Words) -> dict[str, str]:
    """What to do after the driver reported that the traveller did not show up: the ride will not come back by
    itself, so the traveller calls the agency (which has the reference and can book another ride)."""
    waited = clock(local_time(booking.airport_iata, booking.trip.free_wait_until), words.language)
    reference = booking.reservation_no
    if support_phone:
        what_now = words(
            "Call your travel agency to arrange another transfer, quoting your reference %(reference)s.",
            reference=reference,
        )
    else:
        what_now = words(
            "Contact the travel agency you booked with to arrange another transfer, quoting your reference "
            "%(reference)s.",
            reference=reference,
        )
    return {
        "headline": words("Your driver could not find you and has left"),
        "text": words(
            "The driver waited at the meeting point until %(time)s (local time) and reported that you did not show up.",
            time=waited,
        ),
        "what_now": what_now,
    }


def _when(local: datetime, language: str = "en") -> str:
    """ "Tue 1 Dec 2026, 14:30 GMT": the traveller reads the local clock of the airport."""
    if language == "en":
        return f"{local:%a} {local.day} {local:%b %Y, %H:%M} {local.tzname() or ''}".rstrip()
    return f"{short_date_with_year(local, language)}, {clock(local, language)} {local.tzname() or ''}".rstrip()


def bearing(origin: tuple[float, float], target: tuple[float, float]) -> float:
    """Initial great-circle bearing from ``origin`` to ``target``, degrees clockwise from north."""
    lat1, lat2 = math.radians(origin[0]), math.radians(target[0])
    dl = math.radians(target[1] - origin[1])
    x = math.sin(dl) * math.cos(lat2)
    y = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(dl)
    return (math.degrees(math.atan2(x, y)) + 360) % 360


def _flight(trip: Trip, language: str = "en") -> dict[str, Any]:
    """The flight as the booking shows it (docs/rules/flights.md#booking-fields: its status, times in the
    airport's zone, delay, terminal), plus what happened in words (docs/rules/flights.md#in-words: "Delayed
    45 min; lands 15:15") and whether the pickup moved with it; just the number when the pickup is no airport."""
    view = flight_view(trip) or {"number": trip.flight.number, "status": None}
    news = flight_news(trip, language=language)
    if news is None:
        return {**view, "text": "", "moved_text": ""}
    return {**view, "text": news.text, "moved_text": news.moved}


def _disruption(booking: Booking, support_phone: str | None, words: Words) -> dict[str, Any] | None:
    """docs/rules/ride.md#tracking-page: a cancelled, diverted or too-late flight leads the page while the
    booking waits for its ride: the pickup did not move, call the agency, cancelling is free."""
    news = flight_news(booking.trip, booking.status.value, language=words.language)
    if news is None or news.disruption is None:
        return None
    local = booking.trip.local_pickup
    when = {"time": clock(local, words.language), "date": short_date(local, words.language)}
    return {
        "headline": words("Your flight %(number)s %(what)s", number=news.number, what=news.disruption.what),
        # a pickup that followed the flight before it went beyond the limit stays where it got to
        "pickup_text": (
            words(
                "Your pickup stays at %(time)s on %(date)s (local time): it will not follow the flight any further.",
                **when,
            )
            if news.moved
            else words("Your pickup has not moved: %(time)s on %(date)s (local time).", **when)
        ),
        "call_text": words("Call your travel agency to arrange a new pickup time or to cancel."),
        "support_phone": support_phone,
        "free_text": words("Cancelling is now free of charge."),
    }
