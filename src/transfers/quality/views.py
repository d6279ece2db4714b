"""What the quality pages show (docs/rules/quality.md#who-sees-what): each partner's latest scorecard,
its split per airport and 26 weekly points of its on-time, decline and incident rates.

Read in one consistent read with three statements whatever the number of partners: the latest day's
scorecards (every airport), the 26 days' whole-partner scorecards, the partners' names. The weekly
points are the scorecards of the latest day and of each day 7, 14, ... 175 days before it (each a
90-day window, so a point moves smoothly); a day without a scorecard is a gap in the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from transfers.db.engine import Database
from transfers.db.tables.quality import ALL_AIRPORTS
from transfers.quality import queries
from transfers.quality.models import StoredScorecard, WeeklyRates
from transfers.quality.rules import COUNT_NAMES

WEEKS = 26
# The PREFERRED tier's thresholds (docs/rules/quality.md#tier), drawn as each chart's dashed line.
CHARTS = (
    ("on_time", "On-time rate", 0.90, "PREFERRED needs at least 90 %"),
    ("decline", "Decline rate", 0.01, "PREFERRED needs at most 1 %"),
    ("incident", "Incident rate", 0.015, "PREFERRED needs at most 1.5 %"),
)


@dataclass(frozen=True, slots=True)
class Trend:
    """One chart's data: a rate over the weeks (None: no value that week) and the tier's threshold
    (drawn by ``webauth/charts.py``)."""

    title: str
    labels: list[str]
    values: list[float | None]
    target: float | None = None
    target_label: str = ""


@dataclass(frozen=True, slots=True)
class PartnerView:
    """One partner on the page: its latest scorecard (None: never scored), the same per airport, and
    its three charts."""

    partner_id: int
    name: str
    card: dict[str, Any] | None
    airports: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    charts: list[Trend] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Overview:
    partners: list[PartnerView]
    days: list[str]  # the charts' 26 days, oldest first ([] before any scorecard)


def chart_days(latest: str, weeks: int = WEEKS) -> list[str]:
    end = date.fromisoformat(latest)
    return [(end - timedelta(days=7 * back)).isoformat() for back in range(weeks - 1, -1, -1)]


def _label(day: str) -> str:
    d = date.fromisoformat(day)
    return f"{d.day} {MONTHS[d.month - 1]}"


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def charts(days: list[str], points: dict[str, WeeklyRates], labels: list[str] | None = None) -> list[Trend]:
    """The three charts of one partner over ``days`` (its points by day; a missing day is a gap)."""
    labels = labels if labels is not None else [_label(d) for d in days]
    found = [points.get(d) for d in days]
    out = []
    for rate, title, target, target_label in CHARTS:
        values = [getattr(p, rate) if p is not None else None for p in found]
        out.append(Trend(f"{title}, {len(days)} weeks", labels, values, target, target_label))
    return out


async def overview(db: Database, partner_id: int | None = None) -> Overview:
    """Every partner (or one), scored or not, by id. Each partner's weekly points count back from its
    own latest day (the same day for all, unless one was scored alone by ``transfers partners score``)."""
    async with db.read_consistent() as conn:
        names = await queries.partner_names(conn, partner_id)
        latest = await queries.latest_with_airports(conn, partner_id)
        anchors = {s.day for s in latest}
        wanted = sorted({d for anchor in anchors for d in chart_days(anchor)})
        weekly = await queries.weekly_rates(conn, wanted, partner_id) if wanted else []
    whole: dict[int, StoredScorecard] = {}
    airports: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for s in latest:
        if s.airport_iata == ALL_AIRPORTS:
            whole[s.partner_id] = s
        else:
            airports.setdefault(s.partner_id, []).append((s.airport_iata, s.card))
    by_day: dict[int, dict[str, WeeklyRates]] = {}
    for point in weekly:
        by_day.setdefault(point.partner_id, {})[point.day] = point
    axes = {anchor: (chart_days(anchor), [_label(d) for d in chart_days(anchor)]) for anchor in anchors}
    views = []
    for p in names:
        own = whole.get(p.id)
        trends = []
        if own is not None:
            days, labels = axes[own.day]
            trends = charts(days, by_day.get(p.id, {}), labels)
        views.append(PartnerView(p.id, p.name, own.card if own else None, airports.get(p.id, []), trends))
    newest = max(anchors, default=None)
    return Overview(views, chart_days(newest) if newest else [])


CSV_HEADER = (
    "partner_id",
    "partner_name",
    "airport",
    "as_of",
    "score",
    "tier",
    *COUNT_NAMES,
    "decline_rate",
    "on_time_rate",
    "coverage_rate",
    "incident_rate",
    "rating_average",
    "rating_bayesian",
    "reliability",
    "on_time_component",
    "coverage",
    "incident_free",
    "rating_component",
)


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def csv_rows(found: Overview) -> list[list[str]]:
    """The page as CSV rows: each scored partner as a whole (airport ``*``), then per airport; the
    numbers as the scorecard has them (an empty cell where it has null)."""
    rows = [list(CSV_HEADER)]
    for p in found.partners:
        for airport, card in ([(ALL_AIRPORTS, p.card)] if p.card else []) + p.airports:
            parts = card["components"]
            rows.append(
                [
                    str(p.partner_id),
                    p.name,
                    airport,
                    card["as_of"],
                    str(card["score"]),
                    card["tier"],
                    *(str(card["counts"][name]) for name in COUNT_NAMES),
                    *(_cell(card["rates"][r]) for r in ("decline", "on_time", "coverage", "incident")),
                    _cell(card["rating"]["average"]),
                    _cell(card["rating"]["bayesian"]),
                    *(_cell(parts[c]) for c in ("reliability", "on_time", "coverage", "incident_free", "rating")),
                ]
            )
    return rows
