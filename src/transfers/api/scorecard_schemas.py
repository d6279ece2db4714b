"""OpenAPI shape of the partner's scorecard (docs/rules/quality.md#scorecard), strict: the API tests
validate the real answers against it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScorecardCounts(_Strict):
    requests: int = Field(ge=0, description="R: bookings sent to you, less those withdrawn before you accepted")
    declined: int = Field(ge=0, description="D: declined, FAILED, or cancelled by you before accepting")
    partner_cancelled: int = Field(ge=0, description="C: cancelled by you after accepting")
    driver_no_shows: int = Field(ge=0, description="DNS: DRIVER_NO_SHOW incidents resolved responsible: partner")
    rides: int = Field(ge=0, description="N: COMPLETED, or REFUNDED after APPROVED")
    on_time: int = Field(ge=0, description="T: arrived by pickup + 5 min, reported within 15 min of occurring")
    covered: int = Field(ge=0, description="E: rides with every milestone their end implies")
    partner_incidents: int = Field(ge=0, description="I: rides with an incident resolved responsible: partner")
    ratings: int = Field(ge=0, description="v: travellers' ratings")


class ScorecardRates(_Strict):
    decline: float | None = Field(description="D / R, 4 decimals; null when R is 0")
    on_time: float | None = Field(description="T / N, 4 decimals; null when N is 0")
    coverage: float | None = Field(description="E / N, 4 decimals; null when N is 0")
    incident: float | None = Field(description="I / N, 4 decimals; null when N is 0")


class ScorecardRating(_Strict):
    count: int = Field(ge=0)
    average: float | None = Field(description="the stars' mean, 4 decimals; null without ratings")
    bayesian: float = Field(description="(v x r + 45) / (v + 10), 4 decimals")


class ScorecardComponents(_Strict):
    reliability: float
    on_time: float
    coverage: float
    incident_free: float
    rating: float


class Scorecard(_Strict):
    """Your latest scorecard as computed (daily at 03:00 UTC)."""

    partner_id: int
    as_of: datetime = Field(description="the instant it was computed as of (UTC, Z)")
    window_days: Literal[90]
    score: int = Field(ge=0, le=100)
    tier: Literal["PROVISIONAL", "PREFERRED", "STANDARD", "AT_RISK"]
    counts: ScorecardCounts
    rates: ScorecardRates
    rating: ScorecardRating
    components: ScorecardComponents
