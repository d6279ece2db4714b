"""Line charts drawn in the page: inline SVG built on the server (docs/rules/quality.md#who-sees-what).

Why SVG text and not a chart library: the pages run no script and load nothing from another host
(their CSP forbids both), a chart must still read with the network cut, and it costs ~20 µs to
build. Its look comes from the pages' own stylesheet (``console.css``: ``svg.chart`` and its
classes), never ``style=`` attributes (the CSP allows no inline style); the classes keep a page of
300 charts small (about 1 KB a chart).

A rate is a fraction 0..1, or None for a week without a value (no scorecard, or a rate over zero):
the line breaks there rather than inventing a point.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Protocol

from markupsafe import Markup, escape

WIDTH, HEIGHT = 280, 110
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 8, 18
SCALES = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)  # the y axis ends at the first that holds every value


class Series(Protocol):
    """One chart: its title, the x labels (one per point, e.g. the days), the values, and an
    optional target drawn as a dashed line (the tier's threshold). A feature's own frozen dataclass
    with these fields fits (``quality/views.py``'s ``Trend``): the features sit above this module."""

    @property
    def title(self) -> str: ...
    @property
    def labels(self) -> Sequence[str]: ...
    @property
    def values(self) -> Sequence[float | None]: ...
    @property
    def target(self) -> float | None: ...
    @property
    def target_label(self) -> str: ...


def percent(value: float) -> str:
    text = f"{value * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text} %"


def rate(value: float | Fraction | None, places: int = 2) -> str:
    """A rate as a page shows it: 0.9123 as 91.23 %, 0.5 as 50 %, null as "none" (a rate over zero).
    Exact (a float is read as the decimal it prints as), at most ``places`` decimals, no trailing zeros."""
    if value is None:
        return "none"
    exact = value if isinstance(value, Fraction) else Fraction(str(value))
    scaled = round(exact * 100 * 10**places)
    return f"{Decimal(scaled).scaleb(-places).normalize():f} %"


def _scale(series: Series) -> float:
    top = max([v for v in series.values if v is not None] + [series.target or 0.0])
    return next((s for s in SCALES if top <= s), 1.0)


def _summary(series: Series) -> str:
    known = [(label, v) for label, v in zip(series.labels, series.values, strict=True) if v is not None]
    if not known:
        return f"{series.title}: no values yet."
    (first_label, first), (last_label, last) = known[0], known[-1]
    missing = len(series.values) - len(known)
    gaps = f"; {missing} of {len(series.values)} points without a value" if missing else ""
    return f"{series.title}: {percent(first)} on {first_label}, {percent(last)} on {last_label}{gaps}."


def line_chart(series: Series, chart_id: str) -> Markup:
    """The chart as an ``<svg>`` element, its title and a one-line summary for screen readers."""
    n = len(series.values)
    top = _scale(series)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - min(v, top) / top)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-labelledby="{chart_id}-t {chart_id}-d">',
        f'<title id="{chart_id}-t">{escape(series.title)}</title><desc id="{chart_id}-d">'
        f"{escape(_summary(series))}</desc>",
    ]
    for tick in (0.0, top / 2, top):
        ty = y(tick)
        out.append(
            f'<line class="grid" x1="{LEFT}" y1="{ty:.1f}" x2="{WIDTH - RIGHT}" y2="{ty:.1f}"/>'
            f'<text x="{LEFT - 4}" y="{ty + 3:.1f}" text-anchor="end">{percent(tick)}</text>'
        )
    if series.target is not None:
        ty = y(series.target)
        out.append(
            f'<line class="target" x1="{LEFT}" y1="{ty:.1f}" x2="{WIDTH - RIGHT}" y2="{ty:.1f}">'
            f"<title>{escape(series.target_label)}</title></line>"
        )
    if n:
        out.append(
            f'<text x="{LEFT}" y="{HEIGHT - 4}">{escape(series.labels[0])}</text>'
            f'<text x="{WIDTH - RIGHT}" y="{HEIGHT - 4}" text-anchor="end">{escape(series.labels[-1])}</text>'
        )
    run: list[str] = []
    for i, v in enumerate([*series.values, None]):
        if v is not None:
            run.append(f"{x(i):.1f},{y(v):.1f}")
            continue
        if len(run) > 1:
            out.append(f'<polyline points="{" ".join(run)}"/>')
        elif run:
            cx, cy = run[0].split(",")
            out.append(f'<circle cx="{cx}" cy="{cy}" r="2.5"/>')
        run = []
    out.append("</svg>")
    return Markup("".join(out))  # noqa: S704  (every text in it passed through escape)
