"""The console as its own ASGI application, mounted by ``transfers.app`` under ``/console``.

Its own app (not routes of the API) so that it has HTML error pages instead of the API's JSON
envelope, stays out of the OpenAPI document, and carries its security headers on every answer
(``webauth.http.SecurityHeaders``): a strict CSP with ``frame-ancestors 'none'``, no caching."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import FastAPI
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from transfers.console.auth import PREFIX, Forbidden, PageNotFound, console_realm
from transfers.console.render import page
from transfers.console.routes import (
    audit,
    bookings,
    clients,
    dashboard,
    deliveries,
    login,
    operators,
    partner_users,
    partners,
)
from transfers.db.errors import is_database_unavailable
from transfers.services import Services
from transfers.webauth.http import CsrfRefused, SecurityHeaders, SignInRequired, add_security_headers

CSRF_MESSAGE = ("This form was refused: its security token is missing or out of date. Nothing was changed. "
                "Reload the page and try again.")


def build_console(svc: Services) -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    app.state.services = svc
    app.state.realm = console_realm(svc.settings)
    app.mount("/static", StaticFiles(packages=[("transfers.console", "static")]), name="static")
    for module in (login, dashboard, bookings, audit, clients, partners, deliveries, partner_users,
                   operators):
        app.include_router(module.router)
    _install_error_pages(app)
    app.add_middleware(SecurityHeaders)
    return app


def _install_error_pages(app: FastAPI) -> None:
    async def sign_in_required(request: Request, exc: Exception) -> Response:
        # A form replayed after sign-out (or posted after the session ended): nothing was done.
        if isinstance(exc, SignInRequired) and exc.posted:
            return RedirectResponse(f"{PREFIX}/login?ended=1", status_code=303)
        wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"{PREFIX}/login?next={quote(wanted, safe='')}", status_code=303)

    async def csrf_refused(request: Request, _exc: Exception) -> Response:
        return page(request, "error.html", {"heading": "Refused", "message": CSRF_MESSAGE}, status_code=403,
                    title="Refused")

    async def forbidden(request: Request, exc: Exception) -> Response:
        message = exc.message if isinstance(exc, Forbidden) else "Refused."
        return page(request, "error.html", {"heading": "Not allowed", "message": message + " Nothing was changed."},
                    status_code=403, title="Not allowed")

    async def not_found(request: Request, exc: Exception) -> Response:
        message = exc.message if isinstance(exc, PageNotFound) else "There is no such page."
        return page(request, "error.html", {"heading": "Not found", "message": message}, status_code=404,
                    title="Not found")

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        if status == 404:
            return await not_found(request, exc)
        message = "This address does not take that kind of request." if status == 405 else "The request was refused."
        return page(request, "error.html", {"heading": f"Error {status}", "message": message}, status_code=status,
                    title=f"Error {status}")

    async def unexpected(request: Request, exc: Exception) -> Response:
        """An HTML page instead of the API's JSON envelope; the error itself propagates to the
        outer plumbing afterwards, which logs it with the request id (as for any request)."""
        request_id = request.scope.get("state", {}).get("request_id", "")
        if is_database_unavailable(exc):
            response = page(request, "error.html", {"heading": "Unavailable", "message": (
                "The database cannot be reached just now; nothing was changed. Try again in a moment.")},
                status_code=503, title="Unavailable")
            response.headers["Retry-After"] = "5"
            return add_security_headers(response)
        return add_security_headers(page(request, "error.html", {"heading": "Something went wrong", "message": (
            f"Nothing is known to have changed; look before trying again. Quote request id {request_id} to "
            "whoever runs the service.")}, status_code=500, title="Error"))

    app.add_exception_handler(Exception, unexpected)
    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(CsrfRefused, csrf_refused)
    app.add_exception_handler(Forbidden, forbidden)
    app.add_exception_handler(PageNotFound, not_found)
    app.add_exception_handler(StarletteHTTPException, http_error)
