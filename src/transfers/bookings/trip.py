"""The trip of a booking as one typed, frozen value: where from and to, when, which flight, who
travels, in which vehicle, the partner's reference and the driver.

Every view of a booking's trip is built from it: the BookingResource (``bookings/resource.py``),
the partner's payloads (``bookings/partner_payloads.py``: the create, the amendment, the reverse
API's booking), the console's and the portal's booking pages and the hosted partners' e-mails. A
booking gives its trip by ``Booking.trip`` / ``BookingView.trip`` (``trip_of``): the columns stay
the stored form, the trip is how code reads them.

Flight tracking (docs/rules/flights.md) gave ``Trip.original_pickup_at`` (the pickup as booked; ``pickup_at``
is the current one), ``Flight.state`` (the flight as last checked) and ``Flight.disrupted_at``, and made
``free_wait_minutes`` the partner's at airports (``Trip.free_wait_until``, where the ride and the flights
meet). The ride (docs/rules/ride.md) gave ``Trip.ride`` (``bookings/ride_field.py``: the driver's events and latest
position). A return trip gave ``Trip.leg`` (``Leg``: the trip's id, which leg, the other leg's
reservation; None for a single booking: docs/rules/return-trips.md#legs). Room for what comes next, one
field each: add the field here and in ``trip_of``, then to the views that show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from transfers.bookings.ride_field import Ride
from transfers.reference.airports import local_time
from transfers.rows import frozen_value

if TYPE_CHECKING:
    from transfers.bookings.models import Booking, BookingView

# docs/rules/flights.md#booking-fields: the free wait after the pickup time. At an airport it is the partner's
# policy (60 minutes unless the partner set another); elsewhere always 15 minutes.
DEFAULT_AIRPORT_FREE_WAIT_MINUTES = 60
STREET_FREE_WAIT_MINUTES = 15

# The keys of a stored location, in the order the service writes them (``search/rules.location``).
_PLACE_KEYS = ("type", "iata_code", "name", "lat", "lng")


@frozen_value
class Place:
    """One end of the route: an ``AIRPORT`` (its IATA code) or a ``POINT``, with a name and coordinates."""

    type: str
    name: str | None
    iata_code: str | None = None
    lat: float | None = None
    lng: float | None = None

    @classmethod
    def from_stored(cls, stored: Mapping[str, Any]) -> Place:
        """From the stored JSON (``bookings.pickup_location`` / ``dropoff_location``)."""
        return cls(stored["type"], stored.get("name"), stored.get("iata_code"), stored.get("lat"), stored.get("lng"))

    def stored(self) -> dict[str, Any]:
        """The stored JSON again, as partners receive a location (the keys it has, in the written order)."""
        return {k: v for k in _PLACE_KEYS if (v := getattr(self, k)) is not None}

    @property
    def label(self) -> str:
        """How a page names it: its name, else its airport code."""
        return self.name or self.iata_code or self.type


@frozen_value
class Route:
    pickup: Place  # "from"
    dropoff: Place  # "to"
    airport_iata: str  # the airport at one end, whose time zone the pickup is local to
    distance_km: int | None


@frozen_value
class Flight:
    """The traveller's flight: its number as stored (normalised, docs/rules/flights.md#flight-number), what the
    watch last knew of it (``state``: the BookingResource's ``flight`` but ``delay_minutes``; None when the
    pickup is not an airport) and since when it is disrupted (docs/rules/flights.md#disruption)."""

    number: str
    state: Mapping[str, Any] | None = None
    disrupted_at: datetime | None = None


@frozen_value
class Party:
    """Who travels, and with what luggage."""

    adult: int
    children: int
    infant: int
    suitcase: int
    small_bags: int

    def passengers(self) -> dict[str, int]:
        """``{"adult", "children", "infant"}`` as the API and the partner protocol show it."""
        return {"adult": self.adult, "children": self.children, "infant": self.infant}


@frozen_value
class Passenger:
    """The lead passenger, whom the driver meets."""

    name: str
    surname: str
    email: str
    phone: str

    def contact(self) -> dict[str, str]:
        """``{"name", "surname", "email", "phone"}`` (BookingResource ``passenger``, partners' ``passenger_info``)."""
        return {"name": self.name, "surname": self.surname, "email": self.email, "phone": self.phone}


@frozen_value
class Vehicle:
    make: str
    model: str
    type: str
    partner_vehicle_id: str  # the partner's own id of it (``vehicle_id`` in the partner protocol)

    def public(self) -> dict[str, str]:
        return {"make": self.make, "model": self.model, "type": self.type}


@frozen_value
class Driver:
    name: str
    phone: str | None
    plate: str | None

    def public(self) -> dict[str, str | None]:
        return {"name": self.name, "phone": self.phone, "plate": self.plate}


@frozen_value
class Leg:
    """docs/rules/return-trips.md#legs: one leg of a return trip (1 the way out, 2 the way back). Each leg is
    a booking of its own; this is all that ties it to the other."""

    trip_id: str  # "TR-..."
    number: int  # 1 | 2
    other_reservation_no: str | None

    def public(self) -> dict[str, Any]:
        """The BookingResource's ``trip``."""
        return {"id": self.trip_id, "leg": self.number, "other_reservation_no": self.other_reservation_no}

    def partner(self) -> dict[str, Any]:
        """What the partner's create ``trip`` gains: ``id`` and ``leg`` (both null for a single booking)."""
        return {"id": self.trip_id, "leg": self.number}


@frozen_value
class Trip:
    route: Route
    pickup_at: datetime  # aware, UTC
    flight: Flight
    party: Party
    passenger: Passenger
    vehicle: Vehicle
    booking_type: str
    extra_requests: str | None
    partner_reference: str | None
    driver: Driver | None  # None until the partner names one
    meeting_point: str | None
    free_wait_minutes: int  # docs/rules/flights.md#booking-fields
    original_pickup_at: datetime  # as booked (docs/rules/flights.md#booking-fields)
    ride: Ride  # docs/rules/ride.md#ride-field: the driver's events and latest position
    leg: Leg | None = None  # docs/rules/return-trips.md#legs: None for a single booking

    @property
    def free_wait_until(self) -> datetime:
        """Until when the driver waits for free after the (current) pickup: the ride's customer no-show is
        refused before it, and the flight watch moves it with the pickup (docs/rules/flights.md#booking-fields)."""
        return self.pickup_at + timedelta(minutes=self.free_wait_minutes)

    @property
    def local_pickup(self) -> datetime:
        """The pickup in the airport's time zone (how travellers, clients and partners read it)."""
        return local_time(self.route.airport_iata, self.pickup_at)


def trip_of(b: Booking | BookingView) -> Trip:
    """A booking's trip, from its columns."""
    driver = Driver(b.driver_name, b.driver_phone, b.driver_plate) if b.driver_name else None
    route = Route(
        Place.from_stored(b.pickup_location), Place.from_stored(b.dropoff_location), b.airport_iata, b.distance_km
    )
    return Trip(
        route,
        b.pickup_at,
        Flight(b.flight_number, b.flight_state, b.flight_disrupted_at),
        Party(b.adult, b.children, b.infant, b.suitcase, b.small_bags),
        Passenger(b.passenger_name, b.passenger_surname, b.passenger_email, b.passenger_phone),
        Vehicle(b.vehicle_make, b.vehicle_model, b.vehicle_type, b.partner_vehicle_id),
        b.booking_type,
        b.extra_requests,
        b.partner_reference,
        driver,
        b.meeting_point,
        free_wait_minutes_at(
            route.pickup, DEFAULT_AIRPORT_FREE_WAIT_MINUTES if b.free_wait_minutes is None else b.free_wait_minutes
        ),
        b.original_pickup_at or b.pickup_at,
        Ride.from_stored(b.ride_milestones, b.ride_position),
        Leg(b.trip_id, b.trip_leg or 1, b.trip_other_reservation_no) if b.trip_id else None,
    )


def free_wait_minutes_at(pickup: Place, airport_minutes: int = DEFAULT_AIRPORT_FREE_WAIT_MINUTES) -> int:
    """The free wait at a pickup: the partner's airport minutes at an airport, 15 minutes elsewhere."""
    return airport_minutes if pickup.type == "AIRPORT" else STREET_FREE_WAIT_MINUTES
