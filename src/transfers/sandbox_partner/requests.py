"""The requests the sandbox partner accepts, as the service sends them (PARTNER_API.md).

Parsed with the same strictness a careful partner should apply: a malformed request gets a 422
``{"status":"Error"}`` answer, which the service records as a permanent failure.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, ValidationError, model_validator

Text = Annotated[str, Field(min_length=1, max_length=500)]
Count = Annotated[StrictInt, Field(ge=0, le=100)]


def _int_to_text(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


IdText = Annotated[str, BeforeValidator(_int_to_text), Field(min_length=1, max_length=100)]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class LocationIn(_In):
    type: Literal["AIRPORT", "POINT"]
    iata_code: Annotated[str, Field(pattern=r"^[A-Za-z]{3}$")] | None = None
    name: Text | None = None
    lat: Annotated[float, Field(ge=-90, le=90)] | None = None
    lng: Annotated[float, Field(ge=-180, le=180)] | None = None

    @model_validator(mode="after")
    def _shape(self) -> LocationIn:
        if self.type == "AIRPORT" and self.iata_code is None:
            raise ValueError("an AIRPORT location needs iata_code")
        if self.type == "POINT" and (self.lat is None or self.lng is None or self.name is None):
            raise ValueError("a POINT location needs lat, lng and name")
        return self


class PassengersIn(_In):
    adult: Annotated[StrictInt, Field(ge=1, le=100)]
    children: Count | None = 0
    infant: Count | None = 0

    @property
    def party(self) -> int:
        return self.adult + (self.children or 0) + (self.infant or 0)


class _Route(_In):
    origin: LocationIn = Field(alias="from")
    destination: LocationIn = Field(alias="to")
    date: datetime
    passengers: PassengersIn

    @model_validator(mode="after")
    def _one_airport(self) -> _Route:
        if [self.origin.type, self.destination.type].count("AIRPORT") != 1:
            raise ValueError("exactly one of from and to must be an AIRPORT")
        return self


class SearchIn(_Route):
    booking_type: Literal["ONEWAY"]


class PassengerInfoIn(_In):
    name: Text
    surname: Text
    email: Text
    phone: Annotated[str, Field(min_length=3, max_length=32)]


class FlightInfoIn(_In):
    # null only for the way back of a return trip booked without its departing flight (docs/rules/return-trips.md)
    flight_number: Annotated[str, Field(min_length=1, max_length=20)] | None
    extra_requests: Annotated[str, Field(max_length=2000)] | None = None


class TripIn(_Route):
    suitcase: Count = 0
    small_bags: Count = 0
    # docs/rules/return-trips.md#create: the return trip this create is a leg of (both null for a single booking)
    id: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    leg: Literal[1, 2] | None = None


class ExtraIn(_In):
    id: IdText
    quantity: Annotated[StrictInt, Field(ge=1, le=20)] | None = None


class PriceIn(_In):
    total: Decimal
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]


class CreateIn(_In):
    reservation_no: Annotated[str, Field(min_length=1, max_length=255)]
    vehicle_id: IdText
    passenger_info: PassengerInfoIn
    flight_info: FlightInfoIn
    trip: TripIn
    extras: Annotated[list[ExtraIn], Field(max_length=20)] | None = None
    price: PriceIn | None = None


class UpdateIn(_In):
    reservation_no: Annotated[str, Field(min_length=1, max_length=255)]
    status: Text
    cancel_reason: Annotated[str, Field(max_length=1000)] | None = None
    note: Annotated[str, Field(max_length=2000)] | None = None
    # An AMENDED update (docs/rules/cancellation.md): the changes and the whole new trip
    changes: dict[str, Any] | None = None
    passenger_info: PassengerInfoIn | None = None
    flight_info: FlightInfoIn | None = None
    trip: TripIn | None = None
    # ``FLIGHT_UPDATE`` on an AMENDED update: the pickup followed the flight (a notice)
    reason: Annotated[str, Field(max_length=64)] | None = None


def first_error(exc: ValidationError) -> str:
    """One readable line naming the first bad field, for the 422 answer's message."""
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "body"
    return f"{where}: {error['msg']}"
