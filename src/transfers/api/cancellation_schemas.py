"""OpenAPI shapes of docs/rules/cancellation.md (cancellation policies, the quote, amendments), beside
``api/schemas.py``, which uses them in the vehicle and the BookingResource."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PolicyTier(_Strict):
    hours_before_pickup: int = Field(ge=0, le=8760)
    fee_percent: float = Field(ge=0, le=100, description="at most two decimals")


class CancellationPolicy(_Strict):
    tiers: list[PolicyTier] = Field(
        min_length=1, max_length=10, description="by hours_before_pickup, descending; the last at 0 hours"
    )
    free_until: datetime | None = Field(
        description="the last moment cancelling is free, in the airport's local time; null when no tier is "
        "free or that moment has passed"
    )


class Cancellation(_Strict):
    fee: str = Field(description="the policy's fee, kept from the total")
    refund: str = Field(
        description="what the cancel gave back: total - fee, less what the booking's incidents refunded before "
        "(never below 0.00; those refunds are on the incidents)"
    )
    cancelled_at: datetime
    by: Literal["client", "partner", "operator"]


class Amendment(_Strict):
    status: Literal["PENDING", "APPLIED", "REJECTED"]
    changes: dict[str, Any] = Field(description="the fields asked for, shaped as in the request")
    message: str | None = Field(description="why it was rejected (the partner's message)")
    requested_at: datetime
    decided_at: datetime | None


class CancellationQuote(_Strict):
    reservation_no: str
    cancelable: bool
    fee: str | None = Field(description="null when the booking cannot be cancelled")
    refund: str | None = Field(description="what the cancel would give back: total - fee, less the incidents' refunds")
    currency: str
    valid_until: datetime | None = Field(
        description="the quote holds until this moment (airport time), when the next tier starts; null in the last tier"
    )


class PassengerChanges(_Strict):
    name: str | None = None
    surname: str | None = None
    email: str | None = None
    phone: str | None = None


class TravelDetailChanges(_Strict):
    flight_number: str | None = None
    extra_requests: str | None = None


class AmendBookingRequest(_Strict):
    """Only the fields sent change; route, party, vehicle, luggage and extras cannot (FIELD_NOT_AMENDABLE)."""

    pickup_datetime: str | None = Field(default=None, description="as in search: within 1317's window")
    passenger: PassengerChanges | None = None
    travel_details: TravelDetailChanges | None = None
