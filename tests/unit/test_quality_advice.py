"""What would raise a partner's score (docs/rules/quality.md#advice) and the charts drawn in the pages
(``webauth/charts.py``): pure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from fractions import Fraction

import pytest

from transfers.quality import rules
from transfers.quality.advice import advise, good_rides, preferred_steps, rides_for_next_point
from transfers.quality.rules import Counts, Tier
from transfers.quality.views import Trend, chart_days
from transfers.webauth.charts import line_chart, rate

SVG = "{http://www.w3.org/2000/svg}"


def svg_tree(markup: object) -> ET.Element:
    return ET.fromstring(str(markup))  # noqa: S314  (the service's own markup, not untrusted input)


@pytest.mark.parametrize(
    "counts",
    [
        Counts(),
        Counts(requests=30, declined=4, rides=25, on_time=15, covered=20, partner_incidents=2),
        Counts(requests=500, declined=1, rides=480, on_time=470, covered=479, ratings=40, stars=150),
    ],
)
def test_the_next_point_is_the_fewest_good_rides_that_lift_the_score(counts: Counts) -> None:
    needed = rides_for_next_point(counts)
    assert needed is not None and needed >= 1
    assert rules.score(good_rides(counts, needed)) == rules.score(counts) + 1
    assert rules.score(good_rides(counts, needed - 1)) == rules.score(counts)


def test_a_perfect_partner_has_no_next_point() -> None:
    perfect = Counts(requests=10**6, rides=10**6, on_time=10**6, covered=10**6, ratings=10**6, stars=5 * 10**6)
    assert rules.score(perfect) == 100 and rides_for_next_point(perfect) is None


def test_each_preferred_condition_missed_with_the_good_rides_that_meet_it() -> None:
    c = Counts(requests=100, declined=3, rides=90, on_time=70, covered=75, partner_incidents=3, ratings=20, stars=80)
    steps = {s.what.split()[0]: s for s in preferred_steps(c)}
    assert steps["declines"].needed == 200  # 3 / (100 + 200) = 1 %
    assert steps["on"].needed == 110  # (70 + 110) / (90 + 110) = 90 %
    assert steps["every"].needed == 60  # (75 + 60) / 150 = 90 %
    assert steps["partner"].needed == 110  # 3 / (90 + 110) = 1.5 %
    assert steps["a"].needed == 33 and steps["a"].unit == "5-star ratings"
    bayes = Fraction(c.stars + 5 * 33 + 45, c.ratings + 33 + 10)
    assert bayes >= Fraction(46, 10) > Fraction(c.stars + 5 * 32 + 45, c.ratings + 32 + 10)
    for what, x in (("declines", 200), ("on", 110), ("every", 60), ("partner", 110)):
        more = good_rides(c, x)
        assert {s.what.split()[0] for s in preferred_steps(more)}.isdisjoint({what}), what
        assert what in {s.what.split()[0] for s in preferred_steps(good_rides(c, x - 1))}, what


def test_advice_ranks_the_parts_by_points_lost() -> None:
    new = advise(Counts())
    assert (new.score, new.tier) == (91, Tier.PROVISIONAL)
    assert [s.unit for s in new.steps] == ["rides"] and new.steps[0].needed == 20
    late = advise(Counts(requests=40, rides=40, on_time=10, covered=40))
    assert late.components[0].name == "on_time" and late.components[0].below_prior
    assert sum(p.points_lost for p in late.components) == 100 - 100 * sum(
        rules.WEIGHTS[n] * v for n, v in rules.components(Counts(requests=40, rides=40, on_time=10, covered=40)).items()
    )
    preferred = advise(Counts(requests=100, rides=100, on_time=100, covered=100))
    assert preferred.tier is Tier.PREFERRED and preferred.steps == []


def test_counts_read_back_from_a_scorecard() -> None:
    c = Counts(requests=9, declined=1, rides=7, on_time=5, covered=6, partner_incidents=1, ratings=3, stars=11)
    card = rules.scorecard(1, datetime(2026, 11, 29, 3, tzinfo=UTC), c)
    assert Counts.of(card) == c


def test_a_chart_is_svg_with_gaps_a_target_and_escaped_text() -> None:
    days = chart_days("2026-11-29")
    assert len(days) == 26 and days[-1] == "2026-11-29" and days[0] == "2026-06-07"
    values: list[float | None] = [None, 0.9, 0.95, None, 0.5, None, *([0.8] * 20)]
    svg = str(line_chart(Trend("On time <script>", [d[5:] for d in days], values, 0.9, "needs 90 %"), "c1"))
    tree = svg_tree(svg)
    assert tree.tag == f"{SVG}svg" and tree.get("role") == "img"
    assert tree.find(f"{SVG}title").text == "On time <script>"  # escaped in the markup, read back as text
    assert "<script>" not in svg and "style=" not in svg
    assert len(tree.findall(f"{SVG}polyline")) == 2 and len(tree.findall(f"{SVG}circle")) == 1  # 0.5 alone
    assert [line.get("class") for line in tree.findall(f"{SVG}line")].count("target") == 1
    assert "3 of 26 points without a value" in tree.find(f"{SVG}desc").text
    empty = svg_tree(line_chart(Trend("x", ["a", "b"], [None, None]), "c2"))
    assert empty.findall(f"{SVG}polyline") == [] and "no values yet" in empty.find(f"{SVG}desc").text
    assert (rate(None), rate(0.9123), rate(0.0), rate(1.0)) == ("none", "91.23 %", "0 %", "100 %")
