"""Sign in (``/console/login``, fields ``Email`` and ``Password``, button ``Sign in``) and sign out."""

from __future__ import annotations

from typing import Any

import structlog
from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.console.auth import PREFIX, Signed, realm_of, services
from transfers.console.render import page, utc
from transfers.operators import service as operators
from transfers.webauth.http import (
    check_login_csrf,
    clear_session_cookie,
    login_csrf,
    session_token,
    set_login_csrf_cookie,
    set_session_cookie,
)
from transfers.webauth.sessions import end_session
from transfers.webauth.signin import MAX_EMAIL_CHARS, Outcome, sign_in

router = APIRouter()
log = structlog.get_logger("transfers.console")
NOTICES = {
    "ended": "Your session has ended, so nothing was done. Sign in and try again.",
    "signed_out": "You are signed out.",
}


def _next_path(value: object) -> str:
    """Where to go after signing in: a console path only (never another site)."""
    if isinstance(value, str) and value.startswith(f"{PREFIX}/") and not value.startswith("//") \
            and "\\" not in value and len(value) <= 2000:
        return value
    return f"{PREFIX}/"


def _login_page(request: Request, *, status_code: int = 200, error: str = "", email: str = "",
                next_path: str = "", notice: str = "") -> Response:
    realm = realm_of(request)
    token = login_csrf(request, realm)
    context: dict[str, Any] = {"login_csrf": token, "error": error, "email": email, "next": next_path,
                               "notice": notice}
    response = page(request, "login.html", context, status_code=status_code, title="Sign in")
    set_login_csrf_cookie(response, realm, token)
    return response


@router.get("/login")
async def login_form(request: Request) -> Response:
    notice = next((text for key, text in NOTICES.items() if request.query_params.get(key)), "")
    return _login_page(request, next_path=_next_path(request.query_params.get("next")), notice=notice)


@router.post("/login")
async def login_submit(request: Request) -> Response:
    svc, realm = services(request), realm_of(request)
    form = await request.form()
    check_login_csrf(request, realm, form)
    email, password = form.get("email"), form.get("password")
    email = email if isinstance(email, str) else ""
    password = password if isinstance(password, str) else ""
    next_path = _next_path(form.get("next"))
    shown = email[:MAX_EMAIL_CHARS]
    if not email.strip() or not password:
        return _login_page(request, status_code=400, error="Enter your email and password.", email=shown,
                           next_path=next_path)
    result = await sign_in(svc.db, svc.clock, realm, email, password, operators.credentials)
    if result.outcome is Outcome.LOCKED:
        log.warning("console_sign_in_locked", locked_until=result.locked_until.isoformat()
                    if result.locked_until else None)
        error = f"Too many failed sign-ins for this email. Try again after {utc(result.locked_until)}."
        return _login_page(request, status_code=429, email=shown, next_path=next_path, error=error)
    if result.outcome is not Outcome.SIGNED_IN or result.opened is None:
        return _login_page(request, status_code=401, error="Wrong email or password.", email=shown,
                           next_path=next_path)
    operator = await operators.active_operator(svc.db, result.opened.session.user_id)
    if operator is not None:
        await operators.record_session_event(svc.db, svc.clock, operator, "operator.sign_in")
    response = RedirectResponse(next_path, status_code=303)
    set_session_cookie(response, realm, result.opened.token)
    response.delete_cookie(realm.login_csrf_cookie, path=realm.path)
    return response


@router.post("/logout")
async def logout(request: Request, viewer: Signed) -> Response:
    await viewer.form(request)  # CSRF: nobody signs an operator out from another site
    svc, realm = services(request), realm_of(request)
    await end_session(svc.db, realm, session_token(request, realm))
    await operators.record_session_event(svc.db, svc.clock, viewer.operator, "operator.sign_out")
    response = RedirectResponse(f"{PREFIX}/login?signed_out=1", status_code=303)
    clear_session_cookie(response, realm)
    return response
