"""OpenAPI shapes of the ride (docs/rules/ride.md): the ``ride`` of the BookingResource (stage,
driver events, latest position, tracking page) and the reverse API bodies a partner posts its
driver's events and positions with; beside ``api/schemas.py``, which uses ``Ride`` in the resource.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


RideEventType = Literal[
    "DRIVER_DEPARTED_TO_PICKUP",
    "DRIVER_ARRIVED_AT_PICKUP",
    "DRIVER_DEPARTED_TO_DROPOFF",
    "DRIVER_ARRIVED_AT_DROPOFF",
    "CUSTOMER_NO_SHOW",
]
RideStage = Literal["NOT_STARTED", "EN_ROUTE_TO_PICKUP", "AT_PICKUP", "ON_BOARD", "DROPPED_OFF", "CUSTOMER_NO_SHOW"]


class RideEventOut(_Strict):
    type: RideEventType
    occurred_at: datetime
    lat: float | None
    lng: float | None
    received_at: datetime = Field(description="when the service recorded it")


class RidePosition(_Strict):
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    at: datetime = Field(description="ISO 8601 with an offset")
    heading: float | None = Field(default=None, ge=0, le=359, description="degrees clockwise from north")
    speed_kmh: float | None = Field(default=None, ge=0)


class Ride(_Strict):
    stage: RideStage = Field(description="the furthest milestone recorded")
    events: list[RideEventOut] = Field(description="by occurred_at")
    position: RidePosition | None = Field(description="the latest one, only while the ride is on")
    tracking_url: str | None = Field(
        description="the traveller's page, {TRANSFERS_PUBLIC_BASE_URL}/t/{token}: no sign-in, "
        "usable until 7 days after pickup"
    )
    rating_url: str | None = Field(
        description="the traveller's rating page, {TRANSFERS_PUBLIC_BASE_URL}/r/{token}: null until the drop-off "
        "is recorded; 1..5 stars and a comment, once, until 7 days after the drop-off"
    )


class RideEventBody(_Strict):
    """POST /api/v1/reverse/booking/events (docs/rules/ride.md#events)."""

    reservation_no: str
    type: RideEventType
    occurred_at: datetime = Field(description="ISO 8601 with an offset; at most 5 min ahead, not before pickup - 24 h")
    lat: float | None = Field(default=None, ge=-90, le=90, description="with lng, or neither")
    lng: float | None = Field(default=None, ge=-180, le=180, description="with lat, or neither")


class RidePositionsBody(_Strict):
    """POST /api/v1/reverse/booking/positions (docs/rules/ride.md#positions)."""

    reservation_no: str
    positions: list[RidePosition] = Field(min_length=1, max_length=100)


class PositionsResult(_Strict):
    status: Literal["Success"]
    message: str
    accepted: int
