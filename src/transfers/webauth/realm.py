"""What makes one signed-in web area different from another: its name in the shared tables, its
cookie, where its sign-in page is, and how long its sessions live."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True, slots=True)
class Realm:
    name: str  # "console" | "partner": the ``realm`` column of web_sessions and web_signin_failures
    cookie_name: str  # e.g. "transfers_console"
    path: str  # the area's URL prefix, e.g. "/console": the cookie is sent only there
    login_path: str  # e.g. "/console/login"
    secure_cookie: bool  # True in live (HTTPS only)
    session_lifetime: timedelta = timedelta(hours=12)  # absolute: sign in again after it
    idle_timeout: timedelta = timedelta(hours=2)  # a session unused this long has ended
    slow_after_failures: int = 1  # failures within the window before answers are slowed
    max_failures: int = 5  # failures within ``failure_window`` that lock the e-mail out
    failure_window: timedelta = timedelta(minutes=15)
    lockout: timedelta = timedelta(minutes=15)

    @property
    def login_csrf_cookie(self) -> str:
        return f"{self.cookie_name}_login"


def area_realm(name: str, cookie_name: str, path: str, *, sandbox: bool) -> Realm:
    """The usual realm of an area at ``path``: sign-in at ``{path}/login``, HTTPS-only cookies
    except in the sandbox."""
    return Realm(name=name, cookie_name=cookie_name, path=path, login_path=f"{path}/login", secure_cookie=not sandbox)
