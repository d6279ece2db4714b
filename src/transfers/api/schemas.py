"""Shapes of the booking API as published in the OpenAPI document (docs/rules/booking.md#booking-resource).

Routes validate input by hand (``transfers.search.rules``, ``transfers.bookings.rules``) because
the contract wants its own error codes in table order, which no schema validator yields. These
models are what the OpenAPI document shows, and the tests check real answers against them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from transfers.api.cancellation_schemas import Amendment, Cancellation, CancellationPolicy
from transfers.api.ride_schemas import Ride
from transfers.errors import ErrorCode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- search ---------------------------------------------------------------------------------
class AirportLocation(_Strict):
    type: Literal["AIRPORT"]
    iata_code: str = Field(description="IATA code of a known airport, case-insensitive", examples=["LHR"])


# docs/rules/booking.md#text: what a name or a free text may hold (``transfers/text.py``).
ONE_LINE = "one line: no control characters or bidirectional overrides (docs/rules/booking.md#text)"
FREE_TEXT = (
    "up to 1000 characters; may span lines, no other control characters or bidirectional overrides "
    "(docs/rules/booking.md#text)"
)


class PointLocation(_Strict):
    type: Literal["POINT"]
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    name: str = Field(min_length=1, description=ONE_LINE)


Location = AirportLocation | PointLocation


class Travelers(_Strict):
    adult: int = Field(ge=1, le=50)
    children: int | None = Field(default=None, ge=0, le=50)
    infant: int | None = Field(default=None, ge=0, le=50)


class SearchRequest(_Strict):
    pickup_datetime: str = Field(
        description="`YYYY-MM-DD HH:MM` or ISO 8601; without an offset it is local time at the airport",
        examples=["2026-12-01 14:30"],
    )
    pickup_location: Location
    dropoff_location: Location
    travelers: Travelers
    return_datetime: str | None = Field(
        default=None,
        description=(
            "docs/rules/return-trips.md#search: the way back's pickup, as `pickup_datetime` (local at the airport "
            "without an offset), at least 1 h after it and within the booking window, else code 1324; "
            "null is the same as leaving it out. With it the answer adds `return_vehicles`."
        ),
        examples=["2026-12-08 18:00"],
    )
    currency: str | None = Field(
        default=None,
        description=(
            "docs/rules/fx.md#search: the currency the offers are priced in (ISO 4217, capitals). A wallet client: "
            "one it holds a wallet in, default its default wallet's; a reverse_api client: any the service accepts, "
            "without it every quote in its own currency. Else code 1325."
        ),
        examples=["GBP"],
    )

    sort: Literal["price", "recommended"] | None = Field(
        default=None,
        description=(
            "docs/rules/quality.md#ranking: `price` (the default; equal prices by the partner's quality score) or "
            "`recommended` (price weighed by that score); anything else is code 1326; null is the same as "
            "leaving it out."
        ),
    )


class Fx(_Strict):
    """docs/rules/fx.md#search: the rate a partner's prices were converted at."""

    from_currency: str = Field(examples=["EUR"])
    to_currency: str = Field(examples=["GBP"])
    rate: str = Field(examples=["0.8563"], description="1 `from_currency` buys `rate` `to_currency`")
    source: Literal["sandbox", "ecb", "manual"]
    as_of: str = Field(examples=["2026-11-29"], description="the rate's date, YYYY-MM-DD")


class ExtraServiceItem(_Strict):
    id: int
    name: str
    price: float
    pricing_type: Literal["PER_BOOKING", "PER_ITEM"]


class VehicleQuality(_Strict):
    score: int = Field(description="the partner's latest quality score, 0..100 (91 without a scorecard yet)")
    preferred: bool = Field(description="the partner's tier is PREFERRED")


class Vehicle(_Strict):
    vehicle_id: str = Field(description="a positive integer as a string, unique within the search")
    make: str
    model: str
    type: str
    max_passengers: str
    suitcases: str
    small_bags: str
    price: float = Field(
        description="docs/rules/fx.md#search: a JSON number with at most the currency's decimals "
        "(52.8 GBP, 20.475 KWD; an integer for a currency without decimals, 10010 JPY)"
    )
    currency: str
    fx: Fx | None = Field(description="docs/rules/fx.md#search: the rate used, null when nothing was converted")
    company: str
    extra_services: list[ExtraServiceItem]
    cancellation_policy: CancellationPolicy = Field(description="extension: docs/rules/cancellation.md")
    quality: VehicleQuality = Field(description="extension: docs/rules/quality.md#ranking")


class SearchResource(_Strict):
    search_id: str
    distance_km: int | None
    vehicles: list[Vehicle]
    return_vehicles: list[Vehicle] = Field(
        default_factory=list,
        description=(
            "docs/rules/return-trips.md#search: only when `return_datetime` was sent: the offers for the reverse "
            "route at that time (`[]` when none); their ids never meet those of `vehicles`. "
            "Absent from a one-way search's answer."
        ),
    )


# ---- booking --------------------------------------------------------------------------------
class PassengerIn(_Strict):
    name: str = Field(description=ONE_LINE)
    surname: str = Field(description=ONE_LINE)
    phone: str = Field(
        min_length=6,
        max_length=32,
        description=(
            "docs/rules/booking.md#phone-numbers: with its country code (`+` or `00`), as people type it: spaces, "
            "dashes, dots, brackets and `(0)` are accepted; stored and answered as E.164 (`+447911123456`). "
            "Without a country code, or not a valid number: 1009."
        ),
        examples=["+44 7911 123456"],
    )
    email: str = Field(json_schema_extra={"format": "email"})
    language: str | None = Field(
        default=None,
        description=(
            "docs/rules/messages.md#languages: the traveller's language, a BCP 47 tag (`de`, `pt-BR`); the "
            "messages to the traveller are written in it when it is one of en, de, fr, es, it, pt, nl (matched by "
            "its primary subtag). Kept normalized (`pt-br` -> `pt-BR`); an unknown or malformed tag is as if "
            "absent, never an error."
        ),
        examples=["pt-BR"],
    )


class MessageSwitches(_Strict):
    """docs/rules/messages.md#settings: a booking can only switch the client's channels off."""

    email: bool | None = Field(default=None, description="false: no e-mail to this booking's traveller")
    sms: bool | None = Field(default=None, description="false: no SMS to this booking's traveller")


class TravelDetails(_Strict):
    flight_number: str = Field(description=ONE_LINE)
    extra_requests: str | None = Field(default=None, description=FREE_TEXT)


class ReturnTravelDetails(_Strict):
    flight_number: str | None = Field(default=None, description=ONE_LINE)
    extra_requests: str | None = Field(default=None, description=FREE_TEXT)


class ExtraServiceRequest(_Strict):
    id: int
    quantity: int | None = Field(default=None, ge=1)


class CreateBookingRequest(_Strict):
    search_id: str
    vehicle_id: int = Field(description="the search's vehicle_id (a digit string is accepted too)")
    suitcase: int = Field(ge=0)
    small_bags: int = Field(ge=0)
    passenger: PassengerIn
    travel_details: TravelDetails
    extra_services: list[ExtraServiceRequest] | None = None
    return_vehicle_id: int | None = Field(
        default=None,
        description=(
            "docs/rules/return-trips.md#create: a `vehicle_id` of that search's `return_vehicles` (a digit string "
            "is accepted too; anything else is 1022); books both legs, answered with `return_booking`. Null is "
            "the same as leaving it out."
        ),
    )
    return_travel_details: ReturnTravelDetails | None = Field(
        default=None, description="the way back's departing flight and requests (without it: no flight number)"
    )
    messages: MessageSwitches | None = Field(
        default=None,
        description=(
            "docs/rules/messages.md#settings: switch the client's messages to the traveller off for this booking "
            '(`{"sms": false}`); `true` or absent leaves a channel as the client set it (never switches one on). '
            "Not an object, another key or a value that is not a boolean: 1023."
        ),
    )


class LocationOut(_Strict):
    name: str | None
    type: str


class Passengers(_Strict):
    adult: int
    children: int
    infant: int


class PassengerOut(_Strict):
    name: str | None
    surname: str | None
    email: str | None
    phone: str | None


class VehicleOut(_Strict):
    make: str
    model: str
    type: str


class Price(_Strict):
    total: str = Field(examples=["45.00"])
    currency: str
    fx: Fx | None = Field(
        default=None, description="docs/rules/fx.md#booking: the rate the search converted it at, or null"
    )


class Driver(_Strict):
    name: str
    phone: str
    plate: str


BookingStatus = Literal[
    "PENDING",
    "PENDING_APPROVAL",
    "APPROVED",
    "CANCELLED",
    "FAILED",
    "DECLINED",
    "REFUNDED",
    "COMPLETED",
    "DEFAULT",
]


class TripLeg(_Strict):
    id: str = Field(description="the trip, `TR-` and ten characters; `GET /bookings?trip_id=` lists both legs")
    leg: Literal[1, 2] = Field(description="1 the way out, 2 the way back")
    other_reservation_no: str | None = Field(description="the other leg's booking")


FlightStatus = Literal["UNTRACKED", "SCHEDULED", "EN_ROUTE", "LANDED", "CANCELLED", "DIVERTED", "UNKNOWN"]


class Flight(_Strict):
    """docs/rules/flights.md#booking-fields: the traveller's flight as the watch last saw it."""

    number: str
    status: FlightStatus
    scheduled_arrival: datetime | None = Field(description="local time of the airport")
    estimated_arrival: datetime | None
    actual_arrival: datetime | None
    delay_minutes: int | None = Field(description="estimated (or actual) minus scheduled arrival; negative: early")
    terminal: str | None
    checked_at: datetime | None = Field(description="the last check that answered")


class BookingResource(_Strict):
    reservation_no: str
    status: BookingStatus
    pickup_location: LocationOut
    dropoff_location: LocationOut
    pickup_datetime: datetime | None
    flight_number: str | None
    passengers: Passengers
    passenger: PassengerOut
    vehicle: VehicleOut
    price: Price
    distance_km: int
    booking_type: str
    is_cancelable: bool
    extra_services: list[str]
    driver: Driver | None = Field(description="extension: set once APPROVED")
    meeting_point: str | None = Field(description="extension: set once APPROVED")
    created_at: datetime = Field(description="extension: ISO 8601, UTC")
    cancellation_policy: CancellationPolicy = Field(description="extension: the policy it was sold with")
    cancellation: Cancellation | None = Field(description="extension: set once cancelled")
    amendment: Amendment | None = Field(description="extension: the latest amendment")
    trip: TripLeg | None = Field(
        description=(
            "extension (docs/rules/return-trips.md#legs): the return trip this booking is a leg of; "
            "null for a single booking"
        )
    )
    ride: Ride = Field(description="extension: the driver's events and position (docs: the ride)")
    original_pickup_datetime: datetime = Field(
        description="extension: the pickup as booked; pickup_datetime is the current one (it follows the flight)"
    )
    free_wait_until: datetime = Field(
        description="extension: until when the driver waits for free (partner policy at airports, else 15 min)"
    )
    flight: Flight | None = Field(description="extension: the flight the pickup follows; null when not an airport")


class CreateBookingResource(_Strict):
    status: Literal["Success"]
    booking: BookingResource
    return_booking: BookingResource | None = Field(
        default=None,
        description=(
            "docs/rules/return-trips.md#create: only when `return_vehicle_id` was sent: the way back, a booking of "
            "its own; absent otherwise"
        ),
    )


class CancelBookingResource(_Strict):
    status: Literal["Success"]
    message: Literal["Booking cancelled successfully."]
    data: list[Any] = Field(max_length=0)


class BookingPage(_Strict):
    data: list[BookingResource]
    next_cursor: str | None


class CancellationReasonsResource(_Strict):
    id: int
    name: str
    description: str | None
    position: int


class ReferenceItem(_Strict):
    id: int
    name: str


class ReferenceList(_Strict):
    data: list[ReferenceItem]


# ---- errors ---------------------------------------------------------------------------------
class ValidationErrorBody(_Strict):
    """docs/rules/errors.md: validation failures (HTTP 422)."""

    status: Literal["Error"]
    code: int
    message: str


class ServiceErrorBody(_Strict):
    """docs/rules/errors.md second shape (docs/rules/errors.md#shapes): everything that is not a field validation.
    ``code`` is
    one of ``transfers.errors.ErrorCode`` (the document lists them as an enum)."""

    status: Literal["Error"]
    code: ErrorCode
    message: str


class BookingNotFoundBody(_Strict):
    """docs/rules/errors.md#get-codes's 404 body."""

    status: Literal["Error"]
    message: Literal["Booking not found"]
    data: None
    error_details: None


class PartnerErrorBody(_Strict):
    status: Literal["Error"]
    message: str


class PartnerResult(_Strict):
    status: Literal["Success", "Error"]
    message: str


def _resp(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"model": model, "description": description}


def service_errors(*codes: ErrorCode) -> dict[int | str, dict[str, Any]]:
    """OpenAPI responses for string codes, each under its status from the ``ErrorCode`` table."""
    by_status: dict[int, list[str]] = {}
    for code in codes:
        by_status.setdefault(code.http_status, []).append(code.value)
    return {status: _resp(ServiceErrorBody, " or ".join(names)) for status, names in sorted(by_status.items())}


AUTH_ERRORS: dict[int | str, dict[str, Any]] = service_errors(
    ErrorCode.MALFORMED_JSON,
    ErrorCode.UNAUTHENTICATED,
    ErrorCode.CLIENT_SUSPENDED,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.RATE_LIMITED,
    ErrorCode.INTERNAL_ERROR,
    ErrorCode.UNAVAILABLE,
)

WITH_VALIDATION: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    422: _resp(ValidationErrorBody, "a validation code of docs/rules/errors.md"),
}


class Error422(RootModel[ValidationErrorBody | ServiceErrorBody]):
    """422 on create/cancel: a spec validation code, or IDEMPOTENCY_KEY_REUSED (string code)."""


IDEMPOTENT: dict[int | str, dict[str, Any]] = {
    **WITH_VALIDATION,
    **service_errors(ErrorCode.MALFORMED_JSON, ErrorCode.IDEMPOTENCY_KEY_INVALID, ErrorCode.IDEMPOTENCY_KEY_IN_USE),
    422: _resp(Error422, f"a validation code of docs/rules/errors.md, or {ErrorCode.IDEMPOTENCY_KEY_REUSED.value}"),
}

# Booking list (beyond the original booking API): a bad query answers 422 in the string-code shape, not the spec's
# integer table, because no spec code names a filter.
LIST_ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    **service_errors(ErrorCode.INVALID_FILTER, ErrorCode.INVALID_CURSOR),
}
