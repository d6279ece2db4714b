"""Typed, immutable views of the service's answers (docs/rules/booking.md#booking-resource, docs/rules/search.md,
docs/rules/booking.md).

Field names are the wire names. Where the wire type is looser than the meaning, the model holds
the meaning: money is ``Decimal`` (never a binary float), date-times are aware ``datetime``,
counts the spec writes as strings (``max_passengers``, ``suitcases``, ``small_bags``) are ``int``.
Identifiers stay as sent (``vehicle_id`` is the string the search gave; pass it back as is).
Fields the service adds later are ignored, so a newer service never breaks an older SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, TypeVar


class BookingStatus(StrEnum):
    """A booking's status (docs/rules/states.md). The SDK owns its copy so it installs without the
    server; the server's test suite checks it equals ``transfers.bookings.state.BookingStatus``."""

    PENDING = "PENDING"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    APPROVED = "APPROVED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    DECLINED = "DECLINED"
    REFUNDED = "REFUNDED"
    COMPLETED = "COMPLETED"
    DEFAULT = "DEFAULT"


#: Statuses after which waiting for approval is pointless: the booking will never be APPROVED.
FINAL_STATUSES = frozenset(
    {
        BookingStatus.CANCELLED,
        BookingStatus.DECLINED,
        BookingStatus.FAILED,
        BookingStatus.COMPLETED,
        BookingStatus.REFUNDED,
    }
)


# ---- search inputs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Airport:
    """An AIRPORT location for a search."""

    iata_code: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "AIRPORT", "iata_code": self.iata_code}


@dataclass(frozen=True)
class Point:
    """A POINT location for a search."""

    lat: float
    lng: float
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "POINT", "lat": self.lat, "lng": self.lng, "name": self.name}


# ---- search results -------------------------------------------------------------------------------


def _money(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"not an amount: {value!r}")
    return Decimal(str(value))


@dataclass(frozen=True)
class ExtraService:
    id: int
    name: str
    price: Decimal
    pricing_type: str  # PER_BOOKING (charged once) or PER_ITEM (price x quantity)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ExtraService:
        return cls(
            id=int(data["id"]),
            name=str(data["name"]),
            price=_money(data["price"]),
            pricing_type=str(data["pricing_type"]),
        )


@dataclass(frozen=True)
class PolicyTier:
    """Cancelling with ``hours_before_pickup`` hours or more left costs ``fee_percent`` of the total
    (the first tier, by hours descending, that applies)."""

    hours_before_pickup: int
    fee_percent: Decimal


@dataclass(frozen=True)
class CancellationPolicy:
    """docs/rules/cancellation.md: the tiers (hours descending, the last at 0) and the last moment cancelling is
    free, in the airport's local time (None: no free tier, or that moment has passed)."""

    tiers: tuple[PolicyTier, ...]
    free_until: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CancellationPolicy:
        free_until = data["free_until"]
        return cls(
            tiers=tuple(PolicyTier(int(t["hours_before_pickup"]), _money(t["fee_percent"])) for t in data["tiers"]),
            free_until=None if free_until is None else _instant(free_until),
        )


@dataclass(frozen=True)
class Fx:
    """The rate a partner's prices were converted at (docs/rules/fx.md#search): 1 ``from_currency`` buys
    ``rate`` ``to_currency``, per ``source`` (``sandbox`` | ``ecb`` | ``manual``), as of ``as_of``."""

    from_currency: str
    to_currency: str
    rate: Decimal
    source: str
    as_of: date

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Fx | None:
        if data is None:
            return None
        return cls(
            str(data["from_currency"]),
            str(data["to_currency"]),
            Decimal(str(data["rate"])),
            str(data["source"]),
            date.fromisoformat(str(data["as_of"])),
        )


@dataclass(frozen=True)
class VehicleQuality:
    """The partner's quality score, 0..100, and whether its tier is PREFERRED (docs/rules/quality.md#ranking)."""

    score: int
    preferred: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> VehicleQuality | None:
        return None if data is None else cls(int(data["score"]), bool(data["preferred"]))


@dataclass(frozen=True)
class Vehicle:
    vehicle_id: str
    make: str
    model: str
    type: str
    max_passengers: int
    suitcases: int
    small_bags: int
    price: Decimal
    currency: str
    company: str
    extra_services: tuple[ExtraService, ...]
    cancellation_policy: CancellationPolicy | None = None  # None only from a service without policies
    fx: Fx | None = None  # the rate its prices were converted at; None: quoted in the search's currency
    quality: VehicleQuality | None = None  # None only from a service without scores

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Vehicle:
        policy = data.get("cancellation_policy")
        return cls(
            vehicle_id=str(data["vehicle_id"]),
            make=str(data["make"]),
            model=str(data["model"]),
            type=str(data["type"]),
            max_passengers=int(data["max_passengers"]),
            suitcases=int(data["suitcases"]),
            small_bags=int(data["small_bags"]),
            price=_money(data["price"]),
            currency=str(data["currency"]),
            company=str(data["company"]),
            extra_services=tuple(ExtraService.from_json(e) for e in data["extra_services"]),
            cancellation_policy=None if policy is None else CancellationPolicy.from_json(policy),
            fx=Fx.from_json(data.get("fx")),
            quality=VehicleQuality.from_json(data.get("quality")),
        )


@dataclass(frozen=True)
class SearchResult:
    search_id: str
    distance_km: int | None
    vehicles: tuple[Vehicle, ...]  # cheapest first
    # docs/rules/return-trips.md#search: the way back's offers when ``return_datetime`` was sent, else None
    return_vehicles: tuple[Vehicle, ...] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SearchResult:
        distance = data["distance_km"]
        back = data.get("return_vehicles")
        return cls(
            search_id=str(data["search_id"]),
            distance_km=None if distance is None else int(distance),
            vehicles=tuple(Vehicle.from_json(v) for v in data["vehicles"]),
            return_vehicles=None if back is None else tuple(Vehicle.from_json(v) for v in back),
        )


# ---- bookings -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    name: str | None
    type: str


@dataclass(frozen=True)
class Passengers:
    adult: int
    children: int
    infant: int


@dataclass(frozen=True)
class Passenger:
    name: str | None
    surname: str | None
    email: str | None
    phone: str | None


@dataclass(frozen=True)
class BookedVehicle:
    make: str
    model: str
    type: str


@dataclass(frozen=True)
class Price:
    total: Decimal
    currency: str
    fx: Fx | None = None  # the rate the search converted it at (docs/rules/fx.md#booking); None: not converted


@dataclass(frozen=True)
class Driver:
    name: str
    phone: str
    plate: str


def _instant(value: Any) -> datetime:
    moment = datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        raise ValueError(f"date-time without an offset: {value!r}")
    return moment


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


M = TypeVar("M")


def _maybe(parse: Callable[[Mapping[str, Any]], M], value: Any) -> M | None:
    return None if value is None else parse(value)


@dataclass(frozen=True)
class Cancellation:
    """How a cancelled booking was settled: ``fee`` kept, ``refund`` returned by the cancel (``fee + refund``
    is the total, less what the booking's incidents refunded before, never below 0.00), and who cancelled
    (``client``, ``partner`` or ``operator``)."""

    fee: Decimal
    refund: Decimal
    cancelled_at: datetime
    by: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cancellation:
        return cls(_money(data["fee"]), _money(data["refund"]), _instant(data["cancelled_at"]), str(data["by"]))


@dataclass(frozen=True)
class Flight:
    """The traveller's flight as the service's watch last saw it (docs/rules/flights.md#booking-fields):
    ``status`` UNTRACKED, SCHEDULED, EN_ROUTE, LANDED, CANCELLED, DIVERTED or UNKNOWN; times local to the
    airport; ``delay_minutes`` negative when early."""

    number: str
    status: str
    scheduled_arrival: datetime | None
    estimated_arrival: datetime | None
    actual_arrival: datetime | None
    delay_minutes: int | None
    terminal: str | None
    checked_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Flight:
        def when(key: str) -> datetime | None:
            return None if data.get(key) is None else _instant(data[key])

        delay = data.get("delay_minutes")
        return cls(
            number=str(data["number"]),
            status=str(data["status"]),
            scheduled_arrival=when("scheduled_arrival"),
            estimated_arrival=when("estimated_arrival"),
            actual_arrival=when("actual_arrival"),
            delay_minutes=None if delay is None else int(delay),
            terminal=_optional_str(data.get("terminal")),
            checked_at=when("checked_at"),
        )


@dataclass(frozen=True)
class Amendment:
    """The booking's latest amendment: ``PENDING`` until the partner answers, then ``APPLIED`` or
    ``REJECTED`` (``message`` says why). ``changes`` is shaped like the ``amend_booking`` request."""

    status: str
    changes: Mapping[str, Any]
    message: str | None
    requested_at: datetime
    decided_at: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Amendment:
        decided = data["decided_at"]
        return cls(
            str(data["status"]),
            dict(data["changes"]),
            _optional_str(data["message"]),
            _instant(data["requested_at"]),
            None if decided is None else _instant(decided),
        )


@dataclass(frozen=True)
class RideEvent:
    """A driver event the partner reported: ``type`` (``DRIVER_DEPARTED_TO_PICKUP``, ...,
    ``CUSTOMER_NO_SHOW``), when it happened (and where, when sent) and when the service received it."""

    type: str
    occurred_at: datetime
    lat: float | None
    lng: float | None
    received_at: datetime

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RideEvent:
        return cls(
            str(data["type"]),
            _instant(data["occurred_at"]),
            _optional_float(data.get("lat")),
            _optional_float(data.get("lng")),
            _instant(data["received_at"]),
        )


@dataclass(frozen=True)
class RidePosition:
    """Where the driver was at ``at`` (``heading`` in degrees from north, ``speed_kmh``, when sent)."""

    lat: float
    lng: float
    at: datetime
    heading: float | None
    speed_kmh: float | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RidePosition:
        return cls(
            float(data["lat"]),
            float(data["lng"]),
            _instant(data["at"]),
            _optional_float(data.get("heading")),
            _optional_float(data.get("speed_kmh")),
        )


@dataclass(frozen=True)
class Ride:
    """The ride after APPROVED: ``stage`` (``NOT_STARTED``, ``EN_ROUTE_TO_PICKUP``, ``AT_PICKUP``,
    ``ON_BOARD``, ``DROPPED_OFF`` or ``CUSTOMER_NO_SHOW``), the events by ``occurred_at``, the
    latest position while the ride is on, the traveller's page (None until the service serves it) and
    the traveller's rating page (None until the drop-off)."""

    stage: str
    events: tuple[RideEvent, ...]
    position: RidePosition | None
    tracking_url: str | None
    rating_url: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Ride:
        return cls(
            str(data["stage"]),
            tuple(RideEvent.from_json(e) for e in data["events"]),
            _maybe(RidePosition.from_json, data.get("position")),
            _optional_str(data.get("tracking_url")),
            _optional_str(data.get("rating_url")),
        )


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class CancellationQuote:
    """What cancelling now would cost; ``fee``/``refund`` None when the booking cannot be cancelled.
    The quote holds until ``valid_until`` (None: the last tier)."""

    reservation_no: str
    cancelable: bool
    fee: Decimal | None
    refund: Decimal | None
    currency: str
    valid_until: datetime | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CancellationQuote:
        fee, refund, until = data["fee"], data["refund"], data["valid_until"]
        return cls(
            str(data["reservation_no"]),
            bool(data["cancelable"]),
            None if fee is None else _money(fee),
            None if refund is None else _money(refund),
            str(data["currency"]),
            None if until is None else _instant(until),
        )


@dataclass(frozen=True)
class TripLeg:
    """docs/rules/return-trips.md#legs: the return trip a booking is a leg of (1 out, 2 back) and the other leg."""

    id: str
    leg: int
    other_reservation_no: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TripLeg:
        return cls(str(data["id"]), int(data["leg"]), _optional_str(data.get("other_reservation_no")))


@dataclass(frozen=True)
class Booking:
    """BookingResource (docs/rules/booking.md#booking-resource) plus ``driver``, ``meeting_point`` and
    ``created_at``."""

    reservation_no: str
    status: BookingStatus
    pickup_location: Place
    dropoff_location: Place
    pickup_datetime: datetime | None  # local time at the airport, with its offset
    flight_number: str | None
    passengers: Passengers
    passenger: Passenger
    vehicle: BookedVehicle
    price: Price
    distance_km: int
    booking_type: str
    is_cancelable: bool
    extra_services: tuple[str, ...]
    driver: Driver | None  # set once APPROVED
    meeting_point: str | None  # set once APPROVED
    created_at: datetime  # UTC
    # docs/rules/cancellation.md (None only from a service without them)
    cancellation_policy: CancellationPolicy | None = None  # the policy it was sold with
    cancellation: Cancellation | None = None  # set once cancelled
    amendment: Amendment | None = None  # the latest amendment
    # docs/rules/flights.md#booking-fields (None only from a service without them): the pickup as booked
    # (pickup_datetime is the current one, which follows the flight), the free wait, the flight
    original_pickup_datetime: datetime | None = None
    free_wait_until: datetime | None = None
    flight: Flight | None = None
    ride: Ride | None = None  # the driver's events and position (None only from a service without them)
    trip: TripLeg | None = None  # docs/rules/return-trips.md#legs: None for a single booking

    @property
    def is_final(self) -> bool:
        """True when the booking can no longer become APPROVED."""
        return self.status in FINAL_STATUSES

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Booking:
        pickup, dropoff = data["pickup_location"], data["dropoff_location"]
        people, person, car, price = data["passengers"], data["passenger"], data["vehicle"], data["price"]
        driver = data.get("driver")
        return cls(
            reservation_no=str(data["reservation_no"]),
            status=BookingStatus(data["status"]),
            pickup_location=Place(_optional_str(pickup["name"]), str(pickup["type"])),
            dropoff_location=Place(_optional_str(dropoff["name"]), str(dropoff["type"])),
            pickup_datetime=None if data["pickup_datetime"] is None else _instant(data["pickup_datetime"]),
            flight_number=_optional_str(data["flight_number"]),
            passengers=Passengers(int(people["adult"]), int(people["children"]), int(people["infant"])),
            passenger=Passenger(*(_optional_str(person[k]) for k in ("name", "surname", "email", "phone"))),
            vehicle=BookedVehicle(str(car["make"]), str(car["model"]), str(car["type"])),
            price=Price(Decimal(str(price["total"])), str(price["currency"]), Fx.from_json(price.get("fx"))),
            distance_km=int(data["distance_km"]),
            booking_type=str(data["booking_type"]),
            is_cancelable=bool(data["is_cancelable"]),
            extra_services=tuple(str(name) for name in data["extra_services"]),
            driver=None if not driver else Driver(str(driver["name"]), str(driver["phone"]), str(driver["plate"])),
            meeting_point=_optional_str(data.get("meeting_point")),
            created_at=_instant(data["created_at"]),
            cancellation_policy=_maybe(CancellationPolicy.from_json, data.get("cancellation_policy")),
            cancellation=_maybe(Cancellation.from_json, data.get("cancellation")),
            amendment=_maybe(Amendment.from_json, data.get("amendment")),
            original_pickup_datetime=None
            if data.get("original_pickup_datetime") is None
            else _instant(data["original_pickup_datetime"]),
            free_wait_until=None if data.get("free_wait_until") is None else _instant(data["free_wait_until"]),
            flight=_maybe(Flight.from_json, data.get("flight")),
            ride=_maybe(Ride.from_json, data.get("ride")),
            trip=_maybe(TripLeg.from_json, data.get("trip")),
        )


@dataclass(frozen=True)
class BookingPage:
    """One page of ``list_bookings``: pass ``next_cursor`` back for the next page (None: last page)."""

    bookings: tuple[Booking, ...]
    next_cursor: str | None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BookingPage:
        cursor = data["next_cursor"]
        return cls(
            bookings=tuple(Booking.from_json(b) for b in data["data"]),
            next_cursor=None if cursor is None else str(cursor),
        )


@dataclass(frozen=True)
class CancellationReason:
    id: int  # the value to pass as cancellation_id
    name: str
    description: str | None
    position: int

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CancellationReason:
        return cls(
            id=int(data["id"]),
            name=str(data["name"]),
            description=_optional_str(data["description"]),
            position=int(data["position"]),
        )
