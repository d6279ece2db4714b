"""One signed-in area (the console, the partner portal, the next one) as its own ASGI application.

Its own app, not routes of the API, so that it has HTML error pages instead of the API's JSON
envelope, stays out of the OpenAPI document, and carries ``SecurityHeaders`` on every answer (a
strict CSP with ``frame-ancestors 'none'``, no caching). Built here once so every area words its
error pages, redirects and status codes the same way; an area gives its realm, static files,
routers and page renderer; its routes raise ``refusals.NotAllowed`` / ``refusals.PageNotFound``."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import quote

from fastapi import APIRouter, FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from transfers.db.errors import is_database_unavailable
from transfers.services import Services
from transfers.webauth.http import CsrfRefused, SecurityHeaders, SignInRequired, add_security_headers
from transfers.webauth.login_routes import PageRenderer
from transfers.webauth.realm import Realm
from transfers.webauth.refusals import NotAllowed, PageNotFound

CSRF_MESSAGE = (
    "This form was refused: its security token is missing or out of date. Nothing was changed. "
    "Reload the page and try again."
)


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

    async def csrf_refused(request: Request, _exc: Exception) -> Response:
        return error_page(request, "Refused", CSRF_MESSAGE, 403)

    async def forbidden(request: Request, exc: Exception) -> Response:
        message = exc.message if isinstance(exc, NotAllowed) else "Refused."
        return error_page(request, "Not allowed", message + " Nothing was changed.", 403)

    async def not_found(request: Request, exc: Exception) -> Response:
        message = exc.message if isinstance(exc, PageNotFound) else "There is no such page."
        return error_page(request, "Not found", message, 404)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        if status == 404:
            return await not_found(request, exc)
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
                ("The database cannot be reached just now; nothing was changed. Try again in a moment."),
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

    if html_500:
        app.add_exception_handler(Exception, unexpected)
    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(CsrfRefused, csrf_refused)
    app.add_exception_handler(NotAllowed, forbidden)
    app.add_exception_handler(PageNotFound, not_found)
    app.add_exception_handler(StarletteHTTPException, http_error)
