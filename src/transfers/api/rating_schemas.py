"""OpenAPI shapes of docs/rules/ratings.md: the agency's rating of its traveller's ride and the answer
(strict: the API tests validate the real answers against them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from transfers.api.schemas import WITH_VALIDATION, Error422, service_errors
from transfers.errors import ErrorCode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RateRideRequest(_Strict):
    stars: int = Field(ge=1, le=5, description="a JSON integer: not a string, a boolean or a float")
    comment: str | None = Field(
        default=None, max_length=1000, description="optional; no control characters (line breaks and tabs allowed)"
    )


class Rating(_Strict):
    reservation_no: str
    stars: int = Field(ge=1, le=5)
    comment: str | None = Field(description="trimmed; null when none or blank")
    created_at: datetime


RATE_ERRORS: dict[int | str, dict[str, Any]] = {
    **WITH_VALIDATION,
    **service_errors(ErrorCode.RATING_EXISTS),
    422: {
        "model": Error422,
        "description": "1200 / 1201 (the reservation), INVALID_RATING, or RATING_NOT_ALLOWED (before the drop-off "
        "or more than 7 days after it)",
    },
}
