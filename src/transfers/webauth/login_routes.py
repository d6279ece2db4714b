"""The sign-in and sign-out routes of a realm (``{path}/login``: fields ``Email`` and ``Password``,
button ``Sign in``; ``POST {path}/logout``), built once here so every signed-in area answers a wrong
password, a lock-out, a stale form or a sign-out in the same words and status codes.

An area gives how its users are found (``UserLookup``), how it renders a page, its viewer
dependency, and optional hooks for what it records on sign-in and sign-out (the console audits
both); the shared template is ``webauth/login.html``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

import structlog
from fastapi import APIRouter, Depends
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from transfers.services import Services
from transfers.webauth.http import (
    check_login_csrf,
    clear_session_cookie,
    login_csrf,
    session_token,
    set_login_csrf_cookie,
    set_session_cookie,
)
from transfers.webauth.realm import Realm
from transfers.webauth.sessions import end_session
from transfers.webauth.signin import MAX_EMAIL_CHARS, Outcome, UserLookup, sign_in
from transfers.webauth.viewer import realm_of, services

log = structlog.get_logger("transfers.webauth")
LOGIN_TEMPLATE = "webauth/login.html"
NOTICES = {
    "ended": "Your session has ended, so nothing was done. Sign in and try again.",
    "signed_out": "You are signed out.",
}


class PageRenderer(Protocol):
    def __call__(
        self,
        request: Request,
        template: str,
        context: dict[str, Any] | None = None,
        *,
        status_code: int = 200,
        title: str = "",
    ) -> HTMLResponse: ...


LOGIN_CSRF_PURPOSE = "webauth.login-csrf"


def login_csrf_key(svc: Services) -> bytes:
    """The key that signs the sign-in form's CSRF cookie, derived from the service's secret key."""
    return svc.box.derive(LOGIN_CSRF_PURPOSE)


OnSignIn = Callable[[Services, int], Awaitable[None]]  # (services, user id)
OnSignOut = Callable[[Services, Any], Awaitable[None]]  # (services, the area's viewer)


def utc(value: datetime | None) -> str:
    """An instant as the pages show it: ``2026-11-23 17:30 UTC``."""
    if value is None:
        return "—"
    return value.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%d %H:%M UTC")


def next_path(realm: Realm, value: object) -> str:
    """Where to go after signing in: a path of this realm only (never another site)."""
    if (
        isinstance(value, str)
        and value.startswith(f"{realm.path}/")
        and not value.startswith("//")
        and "\\" not in value
        and len(value) <= 2000
    ):
        return value
    return f"{realm.path}/"


def login_router(
    *,
    credentials: UserLookup,
    page: PageRenderer,
    signed_in: Callable[..., Awaitable[Any]],
    on_sign_in: OnSignIn | None = None,
    on_sign_out: OnSignOut | None = None,
) -> APIRouter:
    """``GET``/``POST /login`` and ``POST /logout`` for the realm in the app's state."""
    router = APIRouter()

    def login_page(
        request: Request,
        *,
        status_code: int = 200,
        error: str = "",
        email: str = "",
        next_to: str = "",
        notice: str = "",
    ) -> Response:
        realm = realm_of(request)
        token = login_csrf(request, realm, login_csrf_key(services(request)))
        context: dict[str, Any] = {
            "login_csrf": token,
            "error": error,
            "email": email,
            "next": next_to,
            "notice": notice,
            "login_action": realm.login_path,
        }
        response = page(request, LOGIN_TEMPLATE, context, status_code=status_code, title="Sign in")
        set_login_csrf_cookie(response, realm, token)
        return response

    @router.get("/login")
    async def login_form(request: Request) -> Response:
        notice = next((text for key, text in NOTICES.items() if request.query_params.get(key)), "")
        return login_page(
            request, next_to=next_path(realm_of(request), request.query_params.get("next")), notice=notice
        )

    @router.post("/login")
    async def login_submit(request: Request) -> Response:
        svc, realm = services(request), realm_of(request)
        form = await request.form()
        check_login_csrf(request, realm, form, login_csrf_key(svc))
        email, password = form.get("email"), form.get("password")
        email = email if isinstance(email, str) else ""
        password = password if isinstance(password, str) else ""
        next_to = next_path(realm, form.get("next"))
        shown = email[:MAX_EMAIL_CHARS]
        if not email.strip() or not password:
            return login_page(
                request, status_code=400, error="Enter your email and password.", email=shown, next_to=next_to
            )
        client_host = request.client.host if request.client else None
        result = await sign_in(svc.db, svc.clock, realm, email, password, credentials, client_host=client_host)
        if result.outcome is Outcome.BUSY:
            log.warning(f"{realm.name}_sign_in_refused_for_address", retry_after=result.retry_after)
            error = (
                "Too many sign-in attempts from your network in the last minute. "
                f"Try again in {result.retry_after} seconds."
            )
            response = login_page(request, status_code=429, email=shown, next_to=next_to, error=error)
            response.headers["Retry-After"] = str(result.retry_after)
            return response
        if result.outcome is Outcome.LOCKED:
            log.warning(
                f"{realm.name}_sign_in_locked",
                locked_until=result.locked_until.isoformat() if result.locked_until else None,
            )
            error = f"Too many failed sign-ins for this email. Try again after {utc(result.locked_until)}."
            return login_page(request, status_code=429, email=shown, next_to=next_to, error=error)
        if result.outcome is not Outcome.SIGNED_IN or result.opened is None:
            return login_page(request, status_code=401, error="Wrong email or password.", email=shown, next_to=next_to)
        if on_sign_in is not None:
            await on_sign_in(svc, result.opened.session.user_id)
        response = RedirectResponse(next_to, status_code=303)
        set_session_cookie(response, realm, result.opened.token)
        response.delete_cookie(
            realm.login_csrf_cookie, path=realm.cookie_path, httponly=True, samesite="lax", secure=realm.secure_cookie
        )
        return response

    @router.post("/logout")
    async def logout(request: Request, viewer: Any = Depends(signed_in)) -> Response:
        await viewer.form(request)  # CSRF: nobody signs anyone out from another site
        svc, realm = services(request), realm_of(request)
        await end_session(svc.db, realm, session_token(request, realm))
        if on_sign_out is not None:
            await on_sign_out(svc, viewer)
        response = RedirectResponse(f"{realm.login_path}?signed_out=1", status_code=303)
        clear_session_cookie(response, realm)
        return response

    return router
