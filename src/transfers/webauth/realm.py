"""What makes one signed-in web area different from another: its name in the shared tables, its
cookie, where its sign-in page is, and how long its sessions live.

In live the cookies are named with the ``__Host-`` prefix: a browser then keeps them only when they are
``Secure``, for ``Path=/`` and without a ``Domain``, so no other host of the domain (and no plain-HTTP
page) can set or overwrite them. The sandbox serves plain HTTP, which the prefix forbids: there the
cookies keep their plain names, limited to the area's path."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, slots=True)
class Realm:
    name: str  # "console" | "partner": the ``realm`` column of web_sessions and web_signin_failures
    cookie_name: str  # e.g. "transfers_console"; "__Host-transfers_console" in live
    path: str  # the area's URL prefix, e.g. "/console": the cookie is sent only there
    login_path: str  # e.g. "/console/login"
    secure_cookie: bool  # True in live (HTTPS only)
    session_lifetime: timedelta = timedelta(hours=12)  # absolute: sign in again after it
    idle_timeout: timedelta = timedelta(hours=2)  # a session unused this long has ended
    slow_after_failures: int = 1  # failures within the window before answers are slowed
    max_failures: int = 5  # failures within ``failure_window`` that lock the e-mail out
    failure_window: timedelta = timedelta(minutes=15)
    lockout: timedelta = timedelta(minutes=15)
    # sign-in attempts a minute per client address, every realm together (webauth/throttle.py)
    attempts_per_address: int = 10

    @property
    def login_csrf_cookie(self) -> str:
        return f"{self.cookie_name}_login"

    @property
    def cookie_path(self) -> str:
        """``/`` for a ``__Host-`` cookie (the prefix requires it; the name is the area's own), else the
        area's path."""
        return "/" if self.cookie_name.startswith(HOST_PREFIX) else self.path


HOST_PREFIX = "__Host-"


def area_realm(name: str, cookie_name: str, path: str, *, sandbox: bool, attempts_per_address: int = 10) -> Realm:
    """The usual realm of an area at ``path``: sign-in at ``{path}/login``; in live HTTPS-only cookies
    with the ``__Host-`` prefix, in the sandbox plain ones limited to the area's path."""
    return Realm(
        name=name,
        cookie_name=cookie_name if sandbox else HOST_PREFIX + cookie_name,
        path=path,
        login_path=f"{path}/login",
        secure_cookie=not sandbox,
        attempts_per_address=attempts_per_address,
    )
