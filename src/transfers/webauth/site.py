"""One signed-in area (the console, the partner portal, the next one) as its own ASGI application.

Its own app, not routes of the API, so that it has HTML error pages instead of the API's JSON
envelope, stays out of the OpenAPI document, and carries ``SecurityHeaders`` on every answer (a
strict CSP with ``frame-ancestors 'none'``, no caching). Built here once so every area words its
error pages, redirects and status codes the same way; an area gives its realm, static files,
routers and page renderer. Its routes, and the use cases they call, raise ``transfers.errors``'
``DomainError``s: ``error_page_for`` is the one mapping of those to pages for every area."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from fastapi import APIRouter, FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Match
from starlette.staticfiles import StaticFiles

from transfers.db.errors import is_database_unavailable
from transfers.errors import Conflict, DomainError, Invalid, NotFound, Refused, Unavailable
from transfers.observability.metrics import CLIENT_CLOSED_REQUEST
from transfers.services import Services
from transfers.webauth.http import CsrfRefused, SecurityHeaders, SignInRequired, add_security_headers
from transfers.webauth.login_routes import PageRenderer
from transfers.webauth.realm import Realm

CSRF_MESSAGE = CsrfRefused.default_message
NOTHING_CHANGED = " Nothing was changed."
UNAVAILABLE_MESSAGE = "The database cannot be reached just now; nothing was changed. Try again in a moment."


@dataclass(frozen=True, slots=True)
class ErrorPage:
    heading: str
    message: str
    status: int


def error_page_for(exc: DomainError) -> ErrorPage:
    """The page of a domain error in any signed-in area (the console, the partner portal)."""
    if isinstance(exc, CsrfRefused):
        return ErrorPage("Refused", exc.message, 403)
    if isinstance(exc, NotFound):
        return ErrorPage("Not found", exc.message, 404)
    if isinstance(exc, Conflict):
        return ErrorPage("Changed meanwhile", exc.message + NOTHING_CHANGED, 409)
    if isinstance(exc, Invalid):
        return ErrorPage("Refused", exc.message + NOTHING_CHANGED, 422)
    if isinstance(exc, Unavailable):
        return ErrorPage("Unavailable", UNAVAILABLE_MESSAGE, 503)
    if isinstance(exc, Refused):
        return ErrorPage("Not allowed", exc.message + NOTHING_CHANGED, 403)
    return ErrorPage("Refused", exc.message + NOTHING_CHANGED, 400)


def build_area(
    svc: Services,
    realm: Realm,
    *,
    package: str,
    routers: Iterable[APIRouter],
    page: PageRenderer,
    html_500: bool = False,
) -> FastAPI:
    """The area's app; ``package`` serves its ``static/`` folder at ``/static``. ``html_500``: an
    unexpected error answers an HTML page (503 when the database is down) rather than the plain 500."""
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.services = svc
    app.state.realm = realm
    app.mount("/static", StaticFiles(packages=[(package, "static")]), name="static")
    for router in routers:
        app.include_router(router)
    _install_error_pages(app, realm, page, html_500)
    app.add_middleware(SecurityHeaders)
    return app


def page_above(app: FastAPI, root: str, path: str) -> str | None:
    """The nearest address above ``path`` (the area's ``root`` included) that a GET opens, or None:
    ``/console/clients/5/keys`` -> ``/console/clients/5``."""
    inside = path[len(root) :] if root and path.startswith(root) else path
    parts = inside.rstrip("/").split("/")
    while len(parts) > 1:
        parts.pop()
        candidate = root + ("/".join(parts) or "/")
        scope = {"type": "http", "method": "GET", "path": candidate, "root_path": root, "headers": []}
        if any(route.matches(scope)[0] is Match.FULL for route in app.router.routes):
            return candidate
    return None


def _install_error_pages(app: FastAPI, realm: Realm, page: PageRenderer, html_500: bool) -> None:
    def error_page(request: Request, heading: str, message: str, status: int, title: str = "") -> Response:
        return page(
            request,
            "webauth/error.html",
            {"heading": heading, "message": message},
            status_code=status,
            title=title or heading,
        )

    async def sign_in_required(request: Request, exc: Exception) -> Response:
        # A form replayed after sign-out (or posted after the session ended): nothing was done.
        if isinstance(exc, SignInRequired) and exc.posted:
            return RedirectResponse(f"{realm.login_path}?ended=1", status_code=303)
        wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"{realm.login_path}?next={quote(wanted, safe='')}", status_code=303)

    async def domain_error(request: Request, exc: Exception) -> Response:
        if not isinstance(exc, DomainError):  # the only class it is registered for
            raise exc
        shown = error_page_for(exc)
        response = error_page(request, shown.heading, shown.message, shown.status)
        if shown.status == 503:
            response.headers["Retry-After"] = "5"
        return response

    async def not_found(request: Request, exc: Exception) -> Response:
        return error_page(request, "Not found", "There is no such page.", 404)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        if status == 404:
            return await not_found(request, exc)
        if status == 405 and request.method in ("GET", "HEAD"):
            # A form's action opened as an address (a reload of the page the post answered, a pasted
            # link): the page it belongs to, the nearest one above it; nothing is done.
            above = page_above(app, request.scope.get("root_path", ""), request.url.path)
            if above is not None:
                return RedirectResponse(above, status_code=303)
        message = "This address does not take that kind of request." if status == 405 else "The request was refused."
        return error_page(request, f"Error {status}", message, status)

    async def unexpected(request: Request, exc: Exception) -> Response:
        """An HTML page instead of the API's JSON envelope; the error itself propagates to the
        outer plumbing afterwards, which logs it with the request id (as for any request)."""
        request_id = request.scope.get("state", {}).get("request_id", "")
        if is_database_unavailable(exc):
            response = error_page(
                request,
                "Unavailable",
                UNAVAILABLE_MESSAGE,
                503,
            )
            response.headers["Retry-After"] = "5"
            return add_security_headers(response)
        return add_security_headers(
            error_page(
                request,
                "Something went wrong",
                (
                    f"Nothing is known to have changed; look before trying again. Quote request id {request_id} to "
                    "whoever runs the service."
                ),
                500,
                title="Error",
            )
        )

    async def client_left(request: Request, exc: Exception) -> Response:
        """A browser that gives up a post while sending it (the first click of a double click, a
        page left while its form was on its way): nothing was read, so nothing was done, and there is
        no one to answer. Counted as 499, not as the server's 500 with a traceback."""
        return PlainTextResponse("The browser left before its request arrived.", status_code=CLIENT_CLOSED_REQUEST)

    if html_500:
        app.add_exception_handler(Exception, unexpected)
    app.add_exception_handler(ClientDisconnect, client_left)
    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(DomainError, domain_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
