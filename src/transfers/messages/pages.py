"""``/m/{token}``: the opt-out page every message to a traveller links (docs/rules/messages.md#opt-out-page),
a route of the API process. GET shows the choice, POST ``scope`` = ``booking`` | ``all`` confirms: a GET
never stops anything, because mail scanners and link previews open links nobody clicked.

A capability page, like the rating page (``ratings/pages.py``): the token is the whole authorisation, so
there is no sign-in and no CSRF token (a forged post could only stop messages to the address the link was
made for, which its holder may do anyway); the answers send no referrer, are never cached, load nothing
from anywhere (the ride pages' CSS and this page's, inlined under a CSP hash; no script), and the access
log keeps only the token's first characters (``logging.redact_path``). The address is shown masked, as
everywhere: a forwarded link does not tell who it belongs to. An unknown or forged token is 404.

It speaks the traveller's language as the traveller's page does (docs/rules/messages.md#languages):
``?lang=``, the booking's passenger language, ``Accept-Language``, the client's default language,
English; the words come from the catalogs of ``transfers/i18n`` (``make catalogs``), a missing
translation falls back to English.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request
from jinja2 import ChoiceLoader, Environment, PackageLoader, Template, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from transfers.i18n.catalogs import Words, translations
from transfers.i18n.languages import LANGUAGES, page_language, primary_language
from transfers.messages import optouts
from transfers.messages.addresses import mask
from transfers.messages.models import Channel
from transfers.messages.optout_link import OPTOUT_PATH
from transfers.services import Services
from transfers.tracking import pages as ride_pages

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=len(LANGUAGES))
def _env(language: str) -> Environment:
    """The page's templates speaking ``language`` (Jinja's i18n extension, old-style gettext as the ride
    pages use it: ``_()`` is the catalog's function, placeholders through ``| format``)."""
    env = Environment(
        loader=ChoiceLoader(
            [PackageLoader("transfers.messages", "templates"), PackageLoader("transfers.tracking", "templates")]
        ),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
        auto_reload=False,
    )
    catalog = translations(language)
    env.install_gettext_translations(catalog, newstyle=False)  # type: ignore[attr-defined]
    env.globals["_"] = catalog.gettext
    return env


def _template(language: str, name: str) -> Template:
    return _env(language).get_template(name)


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
SCOPES = optouts.SCOPES


def _services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def _asked(request: Request) -> str | None:
    return primary_language(request.query_params.get("lang"))


def _not_found(request: Request) -> Response:
    language = _asked(request) or page_language(None, None, request.headers.get("accept-language"), None)
    words = Words(language)
    html = _template(language, "message.html").render(
        lang=language,
        title=words("Page not found"),
        css=CSS,
        heading=words("Page not found"),
        message=words("There is nothing to stop at this address. Check the link in the message you were sent."),
        kicker=words("Messages"),
        tone="",
    )
    return HTMLResponse(html, status_code=404, headers=HEADERS)


def _language(request: Request, link: optouts.OptOutLink) -> str:
    return page_language(
        request.query_params.get("lang"),
        link.booking.passenger_language,
        request.headers.get("accept-language"),
        link.default_language,
    )


def _wording(words: Words, channel: Channel, address: str) -> dict[str, str]:
    """The channel's own sentences (each language words e-mails and text messages its own way)."""
    if channel is Channel.EMAIL:
        return {
            "ask": words("Stop e-mails?"),
            "ask_all": words("Stop e-mails about every transfer?"),
            "stopped": words("E-mails stopped"),
            "button": words("Stop e-mails"),
            "sub": words("E-mails about your transfer to %(address)s", address=address),
        }
    return {
        "ask": words("Stop text messages?"),
        "ask_all": words("Stop text messages about every transfer?"),
        "stopped": words("Text messages stopped"),
        "button": words("Stop text messages"),
        "sub": words("Text messages about your transfer to %(address)s", address=address),
    }


def _page(
    request: Request,
    token: str,
    link: optouts.OptOutLink,
    *,
    status: int = 200,
    done: str = "",
    problem: bool = False,
    chosen: str = "",
) -> Response:
    language = _language(request, link)
    words = Words(language)
    reservation_no = link.booking.reservation_no
    to = mask(link.channel, link.address) or ""
    said = _wording(words, link.channel, to)
    if link.stopped_all:
        heading = said["stopped"]
    elif link.stopped_booking:
        heading = said["ask_all"]
    else:
        heading = said["ask"]
    notice = ""
    if done == "booking":
        notice = words("Done: no more messages about transfer %(reservation_no)s.", reservation_no=reservation_no)
    elif done == "all":
        notice = words("Done: no more messages about any transfer.")
    asked = _asked(request)
    context: dict[str, Any] = {
        "lang": language,
        "title": f"{heading} {reservation_no}",
        "css": CSS,
        "refresh": 0,
        "tone": "done" if link.stopped_all else "",
        "brand": link.brand,
        "reservation_no": reservation_no,
        "heading": heading,
        "sub": said["sub"],
        "button": said["button"],
        "to": to,
        "stopped_booking": link.stopped_booking,
        "stopped_all": link.stopped_all,
        "action": f"{OPTOUT_PATH}{token}" + (f"?lang={asked}" if asked else ""),
        "chosen": chosen,
        "notice": notice,
        "problem": words("Choose whether to stop messages about this transfer only or about every transfer.")
        if problem
        else "",
    }
    html = _template(language, "optout.html").render(**context)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


@router.get(OPTOUT_PATH + "{token}")
async def optout_page(request: Request, token: str) -> Response:
    link = await optouts.open_link(_services(request), token)
    if link is None:
        return _not_found(request)
    return _page(request, token, link, done=request.query_params.get("done", ""))


@router.post(OPTOUT_PATH + "{token}")
async def optout_post(request: Request, token: str) -> Response:
    """The form's post; on success the page again (303), saying what stopped."""
    svc = _services(request)
    link = await optouts.open_link(svc, token)
    if link is None:
        return _not_found(request)
    form = await request.form()
    scope = form.get("scope")
    if not isinstance(scope, str) or scope not in SCOPES:
        return _page(request, token, link, status=422, problem=True)
    await optouts.stop(svc, link, scope)
    asked = _asked(request)
    back = f"{OPTOUT_PATH}{token}?done={scope}" + (f"&lang={asked}" if asked else "")
    return RedirectResponse(back, status_code=303, headers=HEADERS)
