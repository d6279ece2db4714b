"""The stored scorecard as read back (``partner_scorecards``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transfers.rows import row_type


@row_type
class StoredScorecard:
    partner_id: int
    day: str  # YYYY-MM-DD (UTC) of its as_of
    airport_iata: str  # '*': every airport
    card: dict[str, Any]  # the scorecard document (rules.scorecard), as computed that day


@row_type
class CountedBooking:
    """A booking one count of a scorecard counted (the console lists them by these)."""

    id: int
    created_at: datetime


@row_type
class PartnerName:
    id: int
    name: str


@row_type
class WeeklyRates:
    """One point of the quality charts: a partner's rates on one day (None: over zero bookings)."""

    partner_id: int
    day: str
    on_time: float | None
    decline: float | None
    incident: float | None
