"""Templates (Jinja2, autoescaped) and the helpers every console page uses to answer.

``page(request, "bookings/list.html", {...}, viewer=viewer)`` renders a template inside the layout
with what the layout needs: the operator, the CSRF token for its forms, the navigation, ``may``."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse

from transfers.console.auth import Viewer
from transfers.console.wording import in_words
from transfers.operators.models import Capability
from transfers.wallet.ledger import API_KINDS
from transfers.webauth.charts import line_chart, rate
from transfers.webauth.formats import airport_local, counted, excerpt, moment_words, utc, utc_seconds
from transfers.webauth.layout import Site, environment, render_page

__all__ = ["NAVIGATION", "TEMPLATES", "airport_local", "excerpt", "page", "utc"]

NAVIGATION = (
    ("Bookings", "/console/bookings"),
    ("Incidents", "/console/incidents"),
    ("Clients", "/console/clients"),
    ("Partners", "/console/partners"),
    ("Quality", "/console/quality"),
    ("Deliveries", "/console/deliveries"),
    ("FX", "/console/fx"),
    ("Messages", "/console/messages"),
    ("Audit log", "/console/audit"),
)
SITE = Site(
    name="Transfers console",
    home="/console/",
    stylesheets=("/console/static/console.css",),
    script="/console/static/console.js",
    back_label="Back to the dashboard",
    navigation=lambda _viewer: NAVIGATION,
)


def ledger_kind(kind: str) -> str:
    """A ledger entry's kind by the name the wallet API gives it (``debit``, not ``debit_booking``)."""
    return API_KINDS.get(kind, kind)


def _environment() -> Environment:
    env = environment("transfers.console", SITE)
    env.filters["utc"] = utc
    env.filters["airport_local"] = airport_local
    env.filters["excerpt"] = excerpt
    env.filters["counted"] = counted
    env.filters["moment"] = moment_words
    env.filters["in_words"] = in_words
    env.filters["utc_seconds"] = utc_seconds
    env.filters["ledger_kind"] = ledger_kind
    env.filters["rate"] = rate
    env.globals["chart"] = line_chart
    env.globals["Capability"] = Capability
    return env


TEMPLATES = _environment()


def page(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    viewer: Viewer | None = None,
    status_code: int = 200,
    title: str = "",
) -> HTMLResponse:
    return render_page(
        TEMPLATES,
        request,
        template,
        context,
        viewer=viewer,
        status_code=status_code,
        title=title,
        area_values={"may": (lambda c: viewer.may(c)) if viewer else (lambda c: False)},
    )
