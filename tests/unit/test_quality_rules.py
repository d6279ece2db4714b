"""The scorecard's formula (docs/rules/quality.md), with numbers worked out by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

import pytest

from transfers.quality.rules import (
    Counts,
    Tier,
    components,
    four,
    is_covered,
    is_on_time,
    score,
    scorecard,
    tier,
    wilson,
    window,
)

AS_OF = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


def test_the_window_ends_12_hours_before_as_of_and_spans_90_days() -> None:
    assert window(AS_OF) == (datetime(2026, 8, 30, 15, 0, tzinfo=UTC), datetime(2026, 11, 28, 15, 0, tzinfo=UTC))


@pytest.mark.parametrize(
    ("counts", "expected_components", "expected_score", "expected_tier"),
    [
        # a new partner: the priors alone, 100 x 0.9065 = 90.65 -> 91
        (Counts(), (0.97, 0.85, 0.8, 0.98, 0.875), 91, Tier.PROVISIONAL),
        # reliability (100-4+19.4)/120, on_time (81+17)/110, coverage (72+16)/110, incident_free (90-3+19.6)/110:
        # 33.6583 + 22.2727 + 12 + 14.5364 + 8.75 = 91.2174 -> 91; decline 2 % > 1 %: not preferred, no
        # confident failure: STANDARD
        (
            Counts(
                requests=100,
                declined=2,
                partner_cancelled=1,
                driver_no_shows=1,
                rides=90,
                on_time=81,
                covered=72,
                partner_incidents=3,
            ),
            (0.9617, 0.8909, 0.8, 0.9691, 0.875),
            91,
            Tier.STANDARD,
        ),
        # on time 20 of 40: the Wilson upper bound 0.648 < 0.80: AT_RISK; 34.65 + 15.4167 + 14 + 14.9 + 8.75 = 87.7167
        (
            Counts(requests=40, rides=40, on_time=20, covered=40),
            (0.99, 0.6167, 0.9333, 0.9933, 0.875),
            88,
            Tier.AT_RISK,
        ),
        # 10 ratings of mean 4.8: Bayesian (48+45)/20 = 4.65 >= 4.6, every rate good: PREFERRED;
        # 34.7 + 23.9286 + 14.1429 + 14.9143 + 9.125 = 96.8107
        (
            Counts(requests=50, rides=50, on_time=50, covered=50, ratings=10, stars=48),
            (0.9914, 0.9571, 0.9429, 0.9943, 0.9125),
            97,
            Tier.PREFERRED,
        ),
        # the same with a mean of 4.5: Bayesian 4.5 < 4.6, not preferred; nothing confidently bad: STANDARD
        (
            Counts(requests=50, rides=50, on_time=50, covered=50, ratings=10, stars=45),
            (0.9914, 0.9571, 0.9429, 0.9943, 0.875),
            96,
            Tier.STANDARD,
        ),
        # 12 declines in 100 requests: Wilson lower bound 0.070 > 0.05: AT_RISK;
        # 31.325 + 24.25 + 14.4 + 14.94 + 8.75 = 93.665
        (
            Counts(requests=100, declined=12, rides=80, on_time=80, covered=80),
            (0.895, 0.97, 0.96, 0.996, 0.875),
            94,
            Tier.AT_RISK,
        ),
        # 8 partner incidents in 100 rides: Wilson lower bound 0.041 > 0.03: AT_RISK;
        # 34.825 + 24.375 + 14.5 + 13.95 + 8.75 = 96.4
        (
            Counts(requests=100, rides=100, on_time=100, covered=100, partner_incidents=8),
            (0.995, 0.975, 0.9667, 0.93, 0.875),
            96,
            Tier.AT_RISK,
        ),
        # 19 rides: still PROVISIONAL however good
        (Counts(requests=19, rides=19, on_time=19, covered=19), None, None, Tier.PROVISIONAL),
    ],
)
def test_components_score_and_tier(
    counts: Counts, expected_components: tuple[float, ...] | None, expected_score: int | None, expected_tier: Tier
) -> None:
    if expected_components is not None:
        assert tuple(four(v) for v in components(counts).values()) == expected_components
    if expected_score is not None:
        assert score(counts) == expected_score
    assert tier(counts) is expected_tier


def test_wilson_bounds() -> None:
    low, high = wilson(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and high == pytest.approx(0.27753, abs=1e-5)
    low, high = wilson(20, 40)
    assert (low, high) == (pytest.approx(0.35199, abs=1e-4), pytest.approx(0.64801, abs=1e-4))


def test_four_decimals_round_half_up() -> None:
    assert four(Fraction(5, 100000)) == 0.0001
    assert four(Fraction(2, 3)) == 0.6667
    assert four(None) is None


MIN = timedelta(minutes=1)
PICKUP = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("occurred", "received", "on_time"),
    [
        (PICKUP + 5 * MIN, PICKUP + 20 * MIN, True),  # at the grace's end, reported 15 min later
        (PICKUP + 5 * MIN, PICKUP + 20 * MIN + timedelta(seconds=1), False),  # reported too late: no evidence
        (PICKUP + 5 * MIN + timedelta(seconds=1), PICKUP + 6 * MIN, False),  # late
        (PICKUP - 10 * MIN, PICKUP + 6 * MIN, False),  # backdated: said 09:50, heard of at 10:06
        (PICKUP - 10 * MIN, PICKUP - 9 * MIN, True),
    ],
)
def test_on_time_needs_the_event_received_within_15_minutes(
    occurred: datetime, received: datetime, on_time: bool
) -> None:
    assert is_on_time(PICKUP, occurred, received) is on_time


DP, AP, DD, AD, NS = (
    "DRIVER_DEPARTED_TO_PICKUP",
    "DRIVER_ARRIVED_AT_PICKUP",
    "DRIVER_DEPARTED_TO_DROPOFF",
    "DRIVER_ARRIVED_AT_DROPOFF",
    "CUSTOMER_NO_SHOW",
)


@pytest.mark.parametrize(
    ("recorded", "covered"),
    [
        ({DP, AP, DD, AD}, True),
        ({AP, DD, AD}, False),
        ({DP, AP, NS}, True),
        ({AP, NS}, False),
        ({DP, AP, DD}, False),  # no end at all
        (set(), False),
    ],
)
def test_coverage_needs_every_milestone_the_end_implies(recorded: set[str], covered: bool) -> None:
    assert is_covered(frozenset(recorded)) is covered


def test_the_scorecard_document() -> None:
    card = scorecard(7, AS_OF, Counts())
    assert card == {
        "partner_id": 7,
        "as_of": "2026-11-29T03:00:00Z",
        "window_days": 90,
        "score": 91,
        "tier": "PROVISIONAL",
        "counts": {
            "requests": 0,
            "declined": 0,
            "partner_cancelled": 0,
            "driver_no_shows": 0,
            "rides": 0,
            "on_time": 0,
            "covered": 0,
            "partner_incidents": 0,
            "ratings": 0,
        },
        "rates": {"decline": None, "on_time": None, "coverage": None, "incident": None},
        "rating": {"count": 0, "average": None, "bayesian": 4.5},
        "components": {"reliability": 0.97, "on_time": 0.85, "coverage": 0.8, "incident_free": 0.98, "rating": 0.875},
    }
