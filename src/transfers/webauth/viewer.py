"""Who is signed in to a realm's page, for every realm at once.

Each area's sub-application keeps its ``Services`` and its ``Realm`` in ``app.state``; every area
answers "no live session" the same way (``SignInRequired``: a page read goes to the sign-in page, a
form post is refused there with nothing done). What differs is only how a session's user becomes
that area's viewer (an active operator, an active partner user of an enabled partner): so an area
passes that one step to ``session_dependency`` and gets its FastAPI dependency back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.datastructures import FormData
from starlette.requests import Request

from transfers.services import Services
from transfers.webauth.http import SignInRequired, check_csrf, session_token
from transfers.webauth.realm import Realm
from transfers.webauth.sessions import Session, find_session

V = TypeVar("V")
ViewerLoader = Callable[[Services, Session], Awaitable[V | None]]


def services(request: Request) -> Services:
    svc: Services = request.app.state.services
    return svc


def realm_of(request: Request) -> Realm:
    realm: Realm = request.app.state.realm
    return realm


def session_dependency(load: ViewerLoader[V]) -> Callable[[Request], Awaitable[V]]:
    """A dependency giving the signed-in viewer, or ending the request with ``SignInRequired``.

    ``load`` returns None for a user disabled meanwhile (their sessions are gone already; this is
    the end of that race), which is answered exactly like no session at all."""

    async def signed_in(request: Request) -> V:
        svc, realm = services(request), realm_of(request)
        posted = request.method not in ("GET", "HEAD")
        session = await find_session(svc.db, svc.clock, realm, session_token(request, realm))
        viewer = None if session is None else await load(svc, session)
        if viewer is None:
            raise SignInRequired(posted=posted)
        return viewer

    return signed_in


async def checked_form(request: Request, session: Session) -> FormData:
    """The posted form, once its CSRF token is the session's (CsrfRefused otherwise: a 403 page)."""
    form = await request.form()
    check_csrf(session, form)
    return form
