"""What the shared page layout (``templates/webauth/layout.html``) needs to know of an area, and
the Jinja2 environment that finds an area's own templates first, then the shared ones (the layout,
``webauth/login.html``, ``webauth/error.html``): so a new signed-in area writes its pages, not
another copy of the frame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from jinja2 import ChoiceLoader, Environment, PackageLoader, select_autoescape

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
    return env
