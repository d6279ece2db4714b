"""The one place where domain errors (``transfers.errors``) become HTTP responses, in the contract's
exact envelopes; the framework's own 404/405/400 take the same shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import Match

from transfers.api.responses import (
    JSONBody,
    booking_not_found_body,
    service_error_body,
    spec_error_body,
)
from transfers.errors import Code, Conflict, DomainError, ErrorCode, NotFound, Unavailable

_HTTP_CODES = {404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED}
# The reverse API (partners): its own error shape for errors without a code (docs/rules/partners.md#reverse-api).
REVERSE_PREFIX = "/api/v1/reverse"


@dataclass(frozen=True, slots=True)
class Rendered:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


def render(exc: DomainError, *, reverse_api: bool = False) -> Rendered | None:
    """The one mapping of a domain error to the API's answer (None: no answer fits, a bug: the
    caller lets it become the plain 500 with a request id).

    * a SPEC ``Code``: 422 ``{"status":"Error","code":<int>,"message":<NAME>}``;
    * an ``ErrorCode``: its HTTP status, ``{"status":"Error","code":<NAME>,"message":...}``;
    * no code, ``Unavailable``: 503 ``UNAVAILABLE`` (retry in 5 s);
    * no code, on the reverse API: ``NotFound`` 404 (the fixed "Booking not found" body),
      ``Conflict`` 409, anything else 422, as ``{"status":"Error","message":...}``.
    """
    code = exc.code
    if isinstance(code, Code):
        return Rendered(422, spec_error_body(int(code), code.name), exc.headers)
    if isinstance(code, ErrorCode):
        return Rendered(code.http_status, service_error_body(code, exc.message), exc.headers)
    if isinstance(exc, Unavailable):
        fallback = ErrorCode.UNAVAILABLE
        return Rendered(fallback.http_status, service_error_body(fallback), {"Retry-After": "5"})
    if not reverse_api:
        return None
    if isinstance(exc, NotFound):
        return Rendered(404, booking_not_found_body(), exc.headers)
    status = 409 if isinstance(exc, Conflict) else 422
    return Rendered(status, {"status": "Error", "message": exc.message}, exc.headers)


async def handle_domain_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, DomainError):  # the only class it is registered for
        raise exc
    rendered = render(exc, reverse_api=request.url.path.startswith(REVERSE_PREFIX))
    if rendered is None:
        raise exc
    return JSONBody(rendered.body, status_code=rendered.status, headers=rendered.headers)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves on this path. Starlette's own ``Allow`` names only the first
    route that matched the path, so a path served by several routes (GET, POST and DELETE on
    /booking-api/booking) would advertise one of them; RFC 9110 15.5.6 wants them all."""
    allowed = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.routes):
            allowed.append(method)
    return allowed


async def handle_http_error(request: Request, exc: Exception) -> Response:
    if not isinstance(exc, StarletteHTTPException):  # the only class it is registered for
        raise exc
    code = _HTTP_CODES.get(exc.status_code)
    message = code.default_message if code is not None else str(exc.detail)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = _allowed_methods(request)
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    return JSONBody(
        service_error_body(code or ErrorCode.HTTP_ERROR, message), status_code=exc.status_code, headers=headers
    )


async def _validation_error(_: Request, exc: Exception) -> Response:
    # Routes parse their own input to return spec codes; this only catches framework-level
    # parameter errors (none are declared today) so they never leak FastAPI's own body shape.
    code = ErrorCode.MALFORMED_REQUEST
    return JSONBody(service_error_body(code), status_code=code.http_status)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(DomainError, handle_domain_error)
    app.add_exception_handler(StarletteHTTPException, handle_http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
