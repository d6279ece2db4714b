"""The portal's templates (Jinja2, autoescaped) and ``page()``; the console's filters and
stylesheet are reused (``console/render.py``, ``/console/static/console.css``)."""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from transfers.console.render import airport_local, excerpt, utc
from transfers.portal.auth import PartnerViewer

NAVIGATION = (("New", "/partner/new"), ("Upcoming", "/partner/upcoming"), ("Past", "/partner/past"))


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("transfers.portal", "templates"), autoescape=select_autoescape(["html"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["utc"] = utc
    env.filters["airport_local"] = airport_local
    env.filters["excerpt"] = excerpt
    env.globals["NAVIGATION"] = NAVIGATION
    return env


TEMPLATES = _environment()


def page(request: Request, template: str, context: dict[str, Any] | None = None, *,
         viewer: PartnerViewer | None = None, status_code: int = 200, title: str = "") -> HTMLResponse:
    values: dict[str, Any] = {"request": request, "viewer": viewer, "title": title, "active": "",
                              "csrf_token": viewer.session.csrf_token if viewer else ""}
    values.update(context or {})
    return HTMLResponse(TEMPLATES.get_template(template).render(values), status_code=status_code)
