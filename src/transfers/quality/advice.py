"""What would raise a partner's score (docs/rules/quality.md#advice), computed from its own counts.
Pure: the portal's ``Quality`` page shows it.

Three answers, each a number the partner can act on:

* where the points go: each component's points below a perfect 100 (weight x (1 - value)), the
  largest first, with the prior it started from;
* how many more good rides (requested, on time and reported at once, every milestone, no incident)
  lift the score by one point: the smallest such number, found by bisection on ``rules.score``
  (adding good rides never lowers a component, so the score only rises with their number);
* what the next tier needs: the rides still missing for a tier at all, then for ``PREFERRED`` each
  condition not met and how many good rides (or 5-star ratings) in a row would meet it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from transfers.quality import rules
from transfers.quality.rules import Counts, Tier

GOOD_RIDES_TRIED = 100_000  # beyond this many rides the answer is "not by rides alone"
LABELS = {
    "reliability": "Reliability (answering and keeping bookings)",
    "on_time": "On time",
    "coverage": "Coverage (reporting every milestone)",
    "incident_free": "Incident-free",
    "rating": "Travellers' rating",
}
PRIOR_VALUES = {**rules.PRIORS, "rating": (rules.RATING_PRIOR - 1) / 4}


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    label: str
    weight_percent: int
    value: Fraction
    prior: Fraction
    points_lost: Fraction  # 100 x weight x (1 - value): what this component costs the score

    @property
    def below_prior(self) -> bool:
        return self.value < self.prior


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the tier needs and is not met, with the good rides (or ratings) that would meet it."""

    what: str
    needed: int
    unit: str  # "good rides", "5-star ratings", "rides"


@dataclass(frozen=True, slots=True)
class Advice:
    score: int
    tier: Tier
    components: list[Component]  # the most points lost first
    rides_for_next_point: int | None  # None: no number of good rides up to GOOD_RIDES_TRIED does it
    steps: list[Step]  # towards PREFERRED (the rides a tier needs first); [] when already PREFERRED


def good_rides(c: Counts, n: int) -> Counts:
    """``c`` and ``n`` more rides that went well in every way the score looks at."""
    return replace(c, requests=c.requests + n, rides=c.rides + n, on_time=c.on_time + n, covered=c.covered + n)


def rides_for_next_point(c: Counts, limit: int = GOOD_RIDES_TRIED) -> int | None:
    now = rules.score(c)
    if now >= 100 or rules.score(good_rides(c, limit)) <= now:
        return None
    low, high = 0, limit  # score(low) == now < score(high)
    while high - low > 1:
        middle = (low + high) // 2
        if rules.score(good_rides(c, middle)) > now:
            high = middle
        else:
            low = middle
    return high


def _ceil(value: Fraction) -> int:
    return max(0, -(-value.numerator // value.denominator))


def preferred_steps(c: Counts) -> list[Step]:
    """Each ``PREFERRED`` condition not met (docs/rules/quality.md#tier) and the good rides in a row
    that would meet it, solved exactly: e.g. on time needs (T + x) / (N + x) >= 90 %, so x >= 9N - 10T."""
    steps = []
    if c.rides < rules.PROVISIONAL_BELOW_RIDES:
        steps.append(Step("20 rides in the window before any tier but PROVISIONAL", 20 - c.rides, "rides"))
    if c.requests and Fraction(c.declined, c.requests) > Fraction(1, 100):
        steps.append(
            Step("declines at most 1 % of requests", _ceil(Fraction(100 * c.declined - c.requests)), "good rides")
        )
    if c.rides and Fraction(c.partner_incidents, c.rides) > Fraction(15, 1000):
        needed = _ceil(Fraction(200 * c.partner_incidents, 3) - c.rides)
        steps.append(Step("partner incidents at most 1.5 % of rides", needed, "good rides"))
    if c.rides and Fraction(c.covered, c.rides) < Fraction(9, 10):
        steps.append(
            Step("every milestone reported on at least 90 % of rides", 9 * c.rides - 10 * c.covered, "good rides")
        )
    if c.rides and Fraction(c.on_time, c.rides) < Fraction(9, 10):
        steps.append(Step("on time on at least 90 % of rides", 9 * c.rides - 10 * c.on_time, "good rides"))
    if c.ratings >= rules.RATING_PRIOR_WEIGHT and rules.bayesian_rating(c) < Fraction(46, 10):
        # (S + 5x + 45) / (v + x + 10) >= 4.6  <=>  x >= (46v + 10 - 10S) / 4
        needed = _ceil(Fraction(46 * c.ratings + 10 - 10 * c.stars, 4))
        steps.append(Step("a Bayesian rating of at least 4.6", needed, "5-star ratings"))
    return steps


def advise(c: Counts) -> Advice:
    values = rules.components(c)
    parts = [
        Component(
            name,
            LABELS[name],
            int(rules.WEIGHTS[name] * 100),
            value,
            PRIOR_VALUES[name],
            100 * rules.WEIGHTS[name] * (1 - value),
        )
        for name, value in values.items()
    ]
    parts.sort(key=lambda p: (-p.points_lost, p.name))
    tier = rules.tier(c)
    steps = [] if tier is Tier.PREFERRED else preferred_steps(c)
    return Advice(rules.score(c), tier, parts, rides_for_next_point(c), steps)
