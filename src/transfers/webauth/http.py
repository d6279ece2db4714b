"""The HTTP side of signed-in pages, shared by every realm: the session cookie, CSRF checks and the
security headers every HTML answer carries.

CSRF: every form carries a hidden ``csrf_token``. Signed in, it must equal the session's own token
(stored server-side with the session). The sign-in form has no session yet: it is a signed
double-submit token, a random value and its HMAC under a key derived from the service's secret key, in
a short-lived cookie of its own (``Realm.login_csrf_cookie``) that the form must repeat. The signature
means a cookie planted by someone else (a sibling sub-domain, a plain-HTTP hop) is refused unless this
service made it; the ``__Host-`` names of live keep such cookies out in the first place. All compared
in constant time. SameSite=Lax on the cookies is a second wall."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from transfers.errors import Refused
from transfers.webauth.realm import Realm
from transfers.webauth.sessions import Session

CSRF_FIELD = "csrf_token"
MAX_CSRF_CHARS = 100

# A strict CSP: nothing from elsewhere, no inline script or style, no framing (docs/rules/console.md).
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
NO_STORE = (b"cache-control", b"no-store")


class CsrfRefused(Refused):
    """A form without the right CSRF token: answered 403, nothing done."""

    default_message = (
        "This form was refused: its security token is missing or out of date. Nothing was changed. "
        "Reload the page and try again."
    )


class SignInRequired(Exception):
    """No live session: a page read is sent to the sign-in page; a form post is refused there too,
    with nothing done ("your session ended")."""

    def __init__(self, *, posted: bool) -> None:
        super().__init__("sign-in required")
        self.posted = posted


def session_token(request: Request, realm: Realm) -> str | None:
    return request.cookies.get(realm.cookie_name)


def set_session_cookie(response: Response, realm: Realm, token: str) -> None:
    response.set_cookie(
        realm.cookie_name,
        token,
        max_age=int(realm.session_lifetime.total_seconds()),
        path=realm.cookie_path,
        httponly=True,
        samesite="lax",
        secure=realm.secure_cookie,
    )


def clear_session_cookie(response: Response, realm: Realm) -> None:
    response.delete_cookie(
        realm.cookie_name, path=realm.cookie_path, httponly=True, samesite="lax", secure=realm.secure_cookie
    )


def _login_signature(key: bytes, realm: Realm, nonce: str) -> str:
    return hmac.new(key, f"{realm.name}:{nonce}".encode(), hashlib.sha256).hexdigest()[:32]


def signed_login_token(key: bytes, realm: Realm, token: str | None) -> bool:
    """Whether ``token`` is ``{nonce}.{signature}`` made by ``login_csrf`` under ``key`` for this realm."""
    if not token or len(token) > MAX_CSRF_CHARS or "." not in token:
        return False
    nonce, signature = token.rsplit(".", 1)
    return hmac.compare_digest(signature.encode(), _login_signature(key, realm, nonce).encode())


def login_csrf(request: Request, realm: Realm, key: bytes) -> str:
    """The sign-in form's token: the one already in the visitor's cookie when this service signed it,
    else a new one (``{nonce}.{signature}``)."""
    current = request.cookies.get(realm.login_csrf_cookie)
    if signed_login_token(key, realm, current):
        return str(current)
    nonce = secrets.token_urlsafe(24)
    return f"{nonce}.{_login_signature(key, realm, nonce)}"


def set_login_csrf_cookie(response: Response, realm: Realm, token: str) -> None:
    response.set_cookie(
        realm.login_csrf_cookie,
        token,
        max_age=3600,
        path=realm.cookie_path,
        httponly=True,
        samesite="lax",
        secure=realm.secure_cookie,
    )


def tokens_match(expected: str | None, given: object) -> bool:
    if not expected or not isinstance(given, str) or not given or len(given) > MAX_CSRF_CHARS:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def check_login_csrf(request: Request, realm: Realm, form: FormData | Mapping[str, object], key: bytes) -> None:
    """The form repeats the cookie, and the cookie is one this service signed."""
    cookie = request.cookies.get(realm.login_csrf_cookie)
    if not signed_login_token(key, realm, cookie) or not tokens_match(cookie, form.get(CSRF_FIELD)):
        raise CsrfRefused()


def check_csrf(session: Session, form: FormData | Mapping[str, object]) -> None:
    if not tokens_match(session.csrf_token, form.get(CSRF_FIELD)):
        raise CsrfRefused()


def add_security_headers(response: Response) -> Response:
    """For answers made outside ``SecurityHeaders`` (Starlette renders a last-resort error handler's
    page in its outermost middleware, around the app's own)."""
    for name, value in (*SECURITY_HEADERS, NO_STORE):
        response.headers[name.decode()] = value.decode()
    return response


class SecurityHeaders:
    """ASGI middleware for a realm's sub-application: the security headers above on every answer
    (pages, errors, static files), and ``Cache-Control: no-store`` on everything but static files,
    so a signed-in page never sits in a shared cache or the back button after sign-out."""

    def __init__(self, app: ASGIApp, *, static_prefix: str = "/static/") -> None:
        self.app = app
        self.static_prefix = static_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # Starlette keeps the full path in a mounted app's scope; root_path is the mount point.
        path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
        static = path.startswith(root + self.static_prefix) or path.startswith(self.static_prefix)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"cache-control" or static]
                headers.extend(SECURITY_HEADERS)
                if not static:
                    headers.append(NO_STORE)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
