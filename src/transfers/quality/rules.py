"""The scorecard's formula (docs/rules/quality.md), pure: no SQL, no clock.

Every number is computed from exact fractions, so the same counts always give the same score on every
machine; only the Wilson bounds (a square root) use floats, and they only decide the tier.

Each component starts from a prior worth 20 rides (10 ratings for the rating), so a new partner scores
91 and a handful of bad or good rides moves it a little, not to an extreme.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from enum import StrEnum
from fractions import Fraction
from typing import Any

WINDOW_DAYS = 90
SETTLE = timedelta(hours=12)  # a ride is judged once its booking has settled (pickup + 12 h)
PRIOR_WEIGHT = 20  # k: the prior counts as this many requests or rides
RATING_PRIOR_WEIGHT = 10
RATING_PRIOR = Fraction(9, 2)  # 4.5 stars
PRIORS = {
    "reliability": Fraction(97, 100),
    "on_time": Fraction(85, 100),
    "coverage": Fraction(80, 100),
    "incident_free": Fraction(98, 100),
}
WEIGHTS = {
    "reliability": Fraction(35, 100),
    "on_time": Fraction(25, 100),
    "coverage": Fraction(15, 100),
    "incident_free": Fraction(15, 100),
    "rating": Fraction(10, 100),
}
ON_TIME_GRACE = timedelta(minutes=5)  # the driver at the pickup by the current pickup + 5 min
EVIDENCE_DELAY = timedelta(minutes=15)  # an event reported later than this is no evidence of being on time
PROVISIONAL_BELOW_RIDES = 20
Z95 = 1.959963984540054  # the 95 % two-sided normal quantile


class Tier(StrEnum):
    PROVISIONAL = "PROVISIONAL"
    PREFERRED = "PREFERRED"
    STANDARD = "STANDARD"
    AT_RISK = "AT_RISK"


@dataclass(frozen=True)
class Counts:
    """What the service saw of one partner (or one partner at one airport) over the window."""

    requests: int = 0
    declined: int = 0
    partner_cancelled: int = 0
    driver_no_shows: int = 0
    rides: int = 0
    on_time: int = 0
    covered: int = 0
    partner_incidents: int = 0
    ratings: int = 0
    stars: int = 0  # the ratings' sum: their mean is stars / ratings

    @classmethod
    def of(cls, card: dict[str, Any]) -> Counts:
        """The counts a scorecard document shows; the stars' sum from its 4-decimal average (exact
        while a partner has fewer than 10,000 ratings in the window)."""
        shown = card["counts"]
        average = card["rating"]["average"]
        stars = round(Fraction(str(average)) * shown["ratings"]) if average is not None else 0
        return cls(**{name: int(shown[name]) for name in COUNT_NAMES}, stars=int(stars))

    def __add__(self, other: Counts) -> Counts:
        return Counts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(Counts)})


COUNT_NAMES = tuple(f.name for f in fields(Counts) if f.name != "stars")  # as the scorecard shows them


def window(as_of: datetime) -> tuple[datetime, datetime]:
    """The bookings judged at ``as_of``: current pickup in [as_of - 12 h - 90 days, as_of - 12 h)."""
    end = as_of - SETTLE
    return end - timedelta(days=WINDOW_DAYS), end


def is_on_time(pickup_at: datetime, occurred_at: datetime, received_at: datetime) -> bool:
    """The driver's arrival counts as on time when it occurred by the pickup + 5 min AND the service
    heard of it within 15 min of when it says it occurred: a late report is no evidence (a backdated
    event cannot make a late driver look punctual)."""
    return occurred_at <= pickup_at + ON_TIME_GRACE and received_at - occurred_at <= EVIDENCE_DELAY


def is_covered(recorded: frozenset[str]) -> bool:
    """Every milestone the ride's end implies: a drop-off needs all four, a customer no-show needs
    departed, arrived and the no-show."""
    start = {"DRIVER_DEPARTED_TO_PICKUP", "DRIVER_ARRIVED_AT_PICKUP"}
    if "DRIVER_ARRIVED_AT_DROPOFF" in recorded:
        return start | {"DRIVER_DEPARTED_TO_DROPOFF", "DRIVER_ARRIVED_AT_DROPOFF"} <= recorded
    if "CUSTOMER_NO_SHOW" in recorded:
        return start | {"CUSTOMER_NO_SHOW"} <= recorded
    return False


def components(c: Counts) -> dict[str, Fraction]:
    k = PRIOR_WEIGHT
    rating_mean = (c.stars + RATING_PRIOR_WEIGHT * RATING_PRIOR) / (c.ratings + RATING_PRIOR_WEIGHT)
    failures = c.declined + c.partner_cancelled + c.driver_no_shows
    return {
        "reliability": (c.requests - failures + k * PRIORS["reliability"]) / (c.requests + k),
        "on_time": (c.on_time + k * PRIORS["on_time"]) / (c.rides + k),
        "coverage": (c.covered + k * PRIORS["coverage"]) / (c.rides + k),
        "incident_free": (c.rides - c.partner_incidents + k * PRIORS["incident_free"]) / (c.rides + k),
        "rating": (rating_mean - 1) / 4,
    }


def bayesian_rating(c: Counts) -> Fraction:
    return (c.stars + RATING_PRIOR_WEIGHT * RATING_PRIOR) / (c.ratings + RATING_PRIOR_WEIGHT)


def score(c: Counts) -> int:
    """100 x the weighted components, rounded half-up (a new partner: 91)."""
    parts = components(c)
    exact = 100 * sum((WEIGHTS[name] * value for name, value in parts.items()), Fraction(0))
    return _half_up(exact, 0)


def wilson(successes: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a proportion (n > 0)."""
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return centre - half, centre + half


def tier(c: Counts) -> Tier:
    if c.rides < PROVISIONAL_BELOW_RIDES:
        return Tier.PROVISIONAL
    requests = max(c.requests, 1)
    if (
        Fraction(c.declined, requests) <= Fraction(1, 100)
        and Fraction(c.partner_incidents, c.rides) <= Fraction(15, 1000)
        and Fraction(c.covered, c.rides) >= Fraction(90, 100)
        and Fraction(c.on_time, c.rides) >= Fraction(90, 100)
        and (c.ratings < RATING_PRIOR_WEIGHT or bayesian_rating(c) >= Fraction(46, 10))
    ):
        return Tier.PREFERRED
    if (
        wilson(c.on_time, c.rides)[1] < 0.80
        or wilson(c.declined, requests)[0] > 0.05
        or wilson(c.partner_incidents, c.rides)[0] > 0.03
    ):
        return Tier.AT_RISK
    return Tier.STANDARD


def _half_up(value: Fraction, places: int) -> int:
    """``value`` x 10^places rounded half-up to an integer (scores and rates are never negative).
    Exact: a score of 90.5 is 91 and a rate of 0.00005 is 0.0001, as written, never a float's 90.4999."""
    scaled = value * 10**places
    numerator: int = scaled.numerator
    denominator: int = scaled.denominator
    return (2 * numerator + denominator) // (2 * denominator)


def four(value: Fraction | None) -> float | None:
    """A rate or component as the scorecard shows it: 4 decimals, half-up; None stays null."""
    if value is None:
        return None
    return _half_up(value, 4) / 10**4


def _rate(part: int, whole: int) -> Fraction | None:
    return Fraction(part, whole) if whole else None


def scorecard(partner_id: int, as_of: datetime, c: Counts) -> dict[str, Any]:
    """The scorecard document (docs/rules/quality.md#scorecard)."""
    return {
        "partner_id": partner_id,
        "as_of": as_of.isoformat().replace("+00:00", "Z"),
        "window_days": WINDOW_DAYS,
        "score": score(c),
        "tier": tier(c).value,
        "counts": {
            "requests": c.requests,
            "declined": c.declined,
            "partner_cancelled": c.partner_cancelled,
            "driver_no_shows": c.driver_no_shows,
            "rides": c.rides,
            "on_time": c.on_time,
            "covered": c.covered,
            "partner_incidents": c.partner_incidents,
            "ratings": c.ratings,
        },
        "rates": {
            "decline": four(_rate(c.declined, c.requests)),
            "on_time": four(_rate(c.on_time, c.rides)),
            "coverage": four(_rate(c.covered, c.rides)),
            "incident": four(_rate(c.partner_incidents, c.rides)),
        },
        "rating": {
            "count": c.ratings,
            "average": four(_rate(c.stars, c.ratings)),
            "bayesian": four(bayesian_rating(c)),
        },
        "components": {name: four(value) for name, value in components(c).items()},
    }
