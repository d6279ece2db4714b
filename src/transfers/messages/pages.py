"""``/m/{token}``: the opt-out page every message to a traveller links (docs/rules/messages.md#opt-out), a
route of the API process. GET shows the choice, POST ``scope`` = ``booking`` | ``all`` confirms: a GET never
stops anything, because mail scanners and link previews open links nobody clicked.

A capability page, like the rating page (``ratings/pages.py``): the token is the whole authorisation, so
there is no sign-in and no CSRF token (a forged post could only stop messages to the address the link was
made for, which its holder may do anyway); the answers send no referrer, are never cached, load nothing
from anywhere (the ride pages' CSS and this page's, inlined under a CSP hash; no script), and the access
log keeps only the token's first characters (``logging.redact_path``). The address is shown masked, as
everywhere: a forwarded link does not tell who it belongs to. An unknown or forged token is 404.
"""

from __future__ import annotations

import base64
import hashlib
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from jinja2 import ChoiceLoader, Environment, PackageLoader, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from transfers.messages import optouts
from transfers.messages.addresses import mask
from transfers.messages.models import Channel
from transfers.messages.optout_link import OPTOUT_PATH
from transfers.services import Services
from transfers.tracking import pages as ride_pages

router = APIRouter(include_in_schema=False)

_ENV = Environment(
    loader=ChoiceLoader(
        [PackageLoader("transfers.messages", "templates"), PackageLoader("transfers.tracking", "templates")]
    ),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)
_PAGE = _ENV.get_template("optout.html")
_MESSAGE = _ENV.get_template("message.html")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSS = ride_pages.CSS + resources.files("transfers.messages").joinpath("static", "optout.css").read_text(
    encoding="utf-8"
)
HEADERS = {
    **ride_pages.HEADERS,
    "Content-Security-Policy": (
        f"default-src 'none'; style-src {_hash(CSS)}; img-src 'none'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
}
UNKNOWN = "There is nothing to stop at this address. Check the link in the message you were sent."
CHOOSE = "Choose whether to stop messages about this transfer only or about every transfer."
WORDS = {Channel.EMAIL: ("E-mails", "e-mails"), Channel.SMS: ("Text messages", "text messages")}


def _services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def _not_found() -> Response:
    html = _MESSAGE.render(
        title="Page not found", css=CSS, heading="Page not found", message=UNKNOWN, kicker="Messages", tone=""
    )
    return HTMLResponse(html, status_code=404, headers=HEADERS)


def _page(
    token: str, link: optouts.OptOutLink, *, status: int = 200, notice: str = "", problem: str = "", chosen: str = ""
) -> Response:
    title, plural = WORDS[link.channel]
    reservation_no = link.booking.reservation_no
    if link.stopped_all:
        heading = f"{title} stopped"
    elif link.stopped_booking:
        heading = f"Stop {plural} about every transfer?"
    else:
        heading = f"Stop {plural}?"
    context: dict[str, Any] = {
        "title": f"{heading} {reservation_no}",
        "css": CSS,
        "refresh": 0,
        "tone": "done" if link.stopped_all else "",
        "brand": link.brand,
        "reservation_no": reservation_no,
        "heading": heading,
        "channel_words": f"{title} about your transfer",
        "channel_plural": plural,
        "to": mask(link.channel, link.address) or "",
        "question": f"Which {plural} should stop?",
        "stopped_booking": link.stopped_booking,
        "stopped_all": link.stopped_all,
        "action": f"{OPTOUT_PATH}{token}",
        "chosen": chosen,
        "notice": notice,
        "problem": problem,
    }
    return HTMLResponse(_PAGE.render(**context), status_code=status, headers=HEADERS)


@router.get(OPTOUT_PATH + "{token}")
async def optout_page(request: Request, token: str) -> Response:
    link = await optouts.open_link(_services(request), token)
    if link is None:
        return _not_found()
    done = request.query_params.get("done", "")
    _, plural = WORDS[link.channel]
    notice = {
        "booking": f"Done: no more {plural} about transfer {link.booking.reservation_no}.",
        "all": f"Done: no more {plural} about any transfer.",
    }.get(done, "")
    return _page(token, link, notice=notice)


@router.post(OPTOUT_PATH + "{token}")
async def optout_post(request: Request, token: str) -> Response:
    """The form's post; on success the page again (303), saying what stopped."""
    svc = _services(request)
    link = await optouts.open_link(svc, token)
    if link is None:
        return _not_found()
    form = await request.form()
    scope = form.get("scope")
    if not isinstance(scope, str) or scope not in optouts.SCOPES:
        return _page(token, link, status=422, problem=CHOOSE)
    await optouts.stop(svc, link, scope)
    return RedirectResponse(f"{OPTOUT_PATH}{token}?done={scope}", status_code=303, headers=HEADERS)
