"""The one place where domain errors become HTTP responses, in the contract's exact envelopes."""

from __future__ import annotations

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
from transfers.errors import ErrorCode, PartnerApiError, ServiceError, SpecError

_HTTP_CODES = {404: ErrorCode.NOT_FOUND, 405: ErrorCode.METHOD_NOT_ALLOWED}


async def _spec_error(_: Request, exc: Exception) -> Response:
    if not isinstance(exc, SpecError):  # the only class it is registered for
        raise exc
    return JSONBody(spec_error_body(int(exc.code), exc.code.name), status_code=422)


async def _service_error(_: Request, exc: Exception) -> Response:
    if not isinstance(exc, ServiceError):  # the only class it is registered for
        raise exc
    return JSONBody(service_error_body(exc.code, exc.message), status_code=exc.http_status, headers=exc.headers)


async def _partner_error(_: Request, exc: Exception) -> Response:
    if not isinstance(exc, PartnerApiError):  # the only class it is registered for
        raise exc
    if exc.http_status == 404:
        return JSONBody(booking_not_found_body(), status_code=404)
    return JSONBody({"status": "Error", "message": exc.message}, status_code=exc.http_status)


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


async def _http_error(request: Request, exc: Exception) -> Response:
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
    app.add_exception_handler(SpecError, _spec_error)
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(PartnerApiError, _partner_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
