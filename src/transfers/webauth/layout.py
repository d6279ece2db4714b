"""What the shared page layout (``templates/webauth/layout.html``) needs to know of an area, and
the Jinja2 environment that finds an area's own templates first, then the shared ones (the layout,
``webauth/login.html``, ``webauth/error.html``): so a new signed-in area writes its pages, not
another copy of the frame."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from jinja2 import ChoiceLoader, Environment, PackageLoader, pass_context, select_autoescape
from jinja2.runtime import Context
from starlette.requests import Request
from starlette.responses import HTMLResponse

from transfers import money
from transfers.webauth.formats import fx_words, people_money, reader_locale
from transfers.webauth.sessions import Session

Link = tuple[str, str]  # (label, href)


def _no_links(_viewer: object) -> Sequence[Link]:
    return ()


@dataclass(frozen=True, slots=True)
class Site:
    name: str  # the brand and the end of every page title, e.g. "Transfers console"
    home: str  # the area's root with its slash, e.g. "/console/"; sign-out posts to ``{home}logout``
    stylesheets: tuple[str, ...]
    script: str
    header_class: str = "top"
    back_label: str = "Back"  # an error page's link to ``home``, e.g. "Back to the dashboard"
    # The main navigation for a signed-in viewer (an area may show some items to some viewers only).
    navigation: Callable[[object], Sequence[Link]] = field(default=_no_links)


def environment(package: str, site: Site) -> Environment:
    """Autoescaped templates of ``package`` (its ``templates/``) over the shared ones."""
    env = Environment(
        loader=ChoiceLoader([PackageLoader(package, "templates"), PackageLoader("transfers.webauth", "templates")]),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["SITE"] = site
    # ``{{ b.total|money(b.currency) }}``: every amount a page shows, for its reader ("£52.80", "¥10,010");
    # ``|amount`` is the plain text a form field holds and takes back ("52.80"), never a shown amount.
    env.filters["money"] = _money
    env.filters["amount"] = money.text
    env.filters["fx_words"] = fx_words
    return env


@pass_context
def _money(context: Context, amount: object, currency: object) -> str:
    return people_money(amount, currency, context.get("locale") or money.PEOPLE_LOCALE)


class SignedIn(Protocol):
    """What the layout needs of any area's viewer: its session (the CSRF token every form carries)."""

    @property
    def session(self) -> Session: ...


def render_page(
    env: Environment,
    request: Request,
    template: str,
    context: Mapping[str, Any] | None,
    *,
    viewer: SignedIn | None,
    status_code: int,
    title: str,
    area_values: Mapping[str, Any] | None = None,
) -> HTMLResponse:
    """Render an area's ``template`` over the shared layout for ``viewer``: the layout gets the viewer,
    the title, ``active`` (the navigation label to mark, set by the context), the CSRF token and the
    reader's ``locale`` (the ``money`` filter formats amounts for it); an area
    adds its own values (the console its ``may``), and the page's context comes last."""
    values: dict[str, Any] = {
        "request": request,
        "viewer": viewer,
        "title": title,
        "active": "",
        "csrf_token": viewer.session.csrf_token if viewer else "",
        "locale": reader_locale(request.headers.get("accept-language", "")),
    }
    values.update(area_values or {})
    values.update(context or {})
    return HTMLResponse(env.get_template(template).render(values), status_code=status_code)
