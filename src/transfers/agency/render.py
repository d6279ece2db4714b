"""The agency portal's templates (Jinja2, autoescaped), its navigation and ``page()``.

The navigation is one list of ``NavItem``s: a section that is for admins only says so
(``admin_only``) and is then not shown to an agent (its routes refuse an agent anyway, with
``auth.AdminOnly``). A new section adds its item here and its router in ``app.py``
(``agency/__init__.py`` says how)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse

from transfers.agency.auth import AgencyViewer
from transfers.agency.wording import at_airport, flattened, policy_words, status_words
from transfers.webauth.formats import airport_local, counted, excerpt, utc, utc_seconds
from transfers.webauth.layout import Link, Site, environment, render_page
from transfers.webhooks.wording import outcome


@dataclass(frozen=True, slots=True)
class NavItem:
    label: str
    href: str
    admin_only: bool = False


NAVIGATION: tuple[NavItem, ...] = (
    NavItem("Book", "/agency/book"),
    NavItem("Bookings", "/agency/bookings"),
    NavItem("Wallet", "/agency/wallet"),
    NavItem("Developers", "/agency/developers", admin_only=True),
    NavItem("Users", "/agency/users", admin_only=True),
    NavItem("Messages", "/agency/messages", admin_only=True),  # docs/rules/messages.md#settings
)


def navigation(viewer: object) -> tuple[Link, ...]:
    admin = isinstance(viewer, AgencyViewer) and viewer.is_admin
    return tuple((item.label, item.href) for item in NAVIGATION if admin or not item.admin_only)


SITE = Site(
    name="Agency portal",
    home="/agency/",
    header_class="top agency",
    stylesheets=("/console/static/console.css", "/agency/static/agency.css"),
    script="/agency/static/agency.js",
    back_label="Back to your bookings",
    navigation=navigation,
)


def _environment() -> Environment:
    env = environment("transfers.agency", SITE)
    env.filters["utc"] = utc
    env.filters["utc_seconds"] = utc_seconds
    env.filters["airport_local"] = airport_local
    env.filters["at_airport"] = at_airport
    env.filters["excerpt"] = excerpt
    env.filters["status_words"] = status_words
    env.globals["policy_words"] = policy_words
    env.globals["delivery_outcome"] = outcome  # webhooks/wording.py: outcomes in words
    env.filters["flattened"] = flattened
    env.filters["counted"] = counted
    return env


TEMPLATES = _environment()


def page(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    viewer: AgencyViewer | None = None,
    status_code: int = 200,
    title: str = "",
) -> HTMLResponse:
    """Render ``template`` (of ``agency/templates/``, over ``webauth``'s layout) for ``viewer``; the
    layout gets the CSRF token for its forms and ``active`` (the navigation label to mark)."""
    return render_page(TEMPLATES, request, template, context, viewer=viewer, status_code=status_code, title=title)
