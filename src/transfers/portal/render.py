"""The portal's templates (Jinja2, autoescaped) and ``page()``; the console's filters and
stylesheet are reused (``console/render.py``, ``/console/static/console.css``)."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse

from transfers.portal.auth import PartnerViewer
from transfers.portal.wording import percent, status_words
from transfers.webauth.charts import line_chart, rate
from transfers.webauth.formats import airport_local, counted, excerpt, utc
from transfers.webauth.layout import Link, Site, environment, render_page

NAVIGATION = (("New", "/partner/new"), ("Upcoming", "/partner/upcoming"), ("Past", "/partner/past"))


def navigation(viewer: object) -> tuple[Link, ...]:
    """The rate card is a hosted partner's only (a server partner keeps its prices on its server)."""
    hosted = isinstance(viewer, PartnerViewer) and viewer.hosted
    return (
        *NAVIGATION,
        *((("Rate card", "/partner/rate-card"),) if hosted else ()),
        ("Statements", "/partner/statements"),  # docs/rules/statements.md#partner-api
        ("Quality", "/partner/quality"),  # docs/rules/quality.md#portal
        ("Account", "/partner/account"),
    )


SITE = Site(
    name="Partner portal",
    home="/partner/",
    header_class="top portal",
    stylesheets=("/console/static/console.css", "/partner/static/portal.css"),
    script="/partner/static/portal.js",
    back_label="Back to your bookings",
    navigation=navigation,
)


def _environment() -> Environment:
    env = environment("transfers.portal", SITE)
    env.filters["utc"] = utc
    env.filters["airport_local"] = airport_local
    env.filters["excerpt"] = excerpt
    env.filters["counted"] = counted
    env.filters["percent"] = percent
    env.filters["status_words"] = status_words
    env.filters["rate"] = rate
    env.globals["chart"] = line_chart
    return env


TEMPLATES = _environment()


def page(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    viewer: PartnerViewer | None = None,
    status_code: int = 200,
    title: str = "",
) -> HTMLResponse:
    return render_page(TEMPLATES, request, template, context, viewer=viewer, status_code=status_code, title=title)
