"""The busiest booking-API calls answered by their route's own function, skipping FastAPI's layers.

``DirectRoutes`` is an ASGI layer just inside ``RequestPlumbing``. A request whose exact method and
path (no ``root_path``) is one of its routes (``POST /api/v1/booking-api/search``, ``GET`` and
``POST /api/v1/booking-api/booking``) is answered by calling that route's function; FastAPI's exception
middleware, exit stack, router (matching the path against every route), included-router dispatch and
request handler (dependency solving with nothing to solve) are skipped: about seven call layers and
their per-request objects (bench/README.md, "Search fan-out alone", "GET booking after issues
21-27" and, for the create, issue 21's "The create's CPU"). Every other request passes through
untouched, to the same routes as before.

What the skipped layers did for these routes is done here the same way: ``scope["route"]`` and
``scope["endpoint"]`` set as the router sets them (the metrics' route label), a ``DomainError`` or
``HTTPException`` answered by the app's own handlers (``api/errors.py``), anything else left to
``RequestPlumbing`` (500/503, as before). Only a route whose function takes the ``Request`` alone
and returns a ``Response`` can be direct (checked at start-up): nothing FastAPI would have parsed,
validated or serialised is skipped. The routes stay declared to FastAPI, so the served OpenAPI
document is unchanged, and they still answer under a ``root_path`` or without this layer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import cast

from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from transfers.api.errors import handle_domain_error, handle_http_error
from transfers.errors import DomainError

Endpoint = Callable[[Request], Awaitable[Response]]


class DirectRoutes:
    """ASGI layer: ``(method, path)`` of a direct route -> that route's own function (module docstring)."""

    def __init__(self, app: ASGIApp, *, routes: dict[tuple[str, str], APIRoute]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self.routes.get((scope.get("method", ""), scope["path"])) if scope["type"] == "http" else None
        if route is None or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        endpoint = cast(Endpoint, route.endpoint)
        scope["route"] = route
        scope["endpoint"] = endpoint
        scope["path_params"] = {}
        request = Request(scope, receive)
        try:
            response = await endpoint(request)
        except DomainError as exc:
            response = await handle_domain_error(request, exc)
        except StarletteHTTPException as exc:
            response = await handle_http_error(request, exc)
        await send({"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers})
        await send({"type": "http.response.body", "body": response.body})


def install_direct_routes(app: FastAPI, routes: Iterable[tuple[APIRouter, str, str]]) -> None:
    """Put ``DirectRoutes`` for ``(router, method, path)`` inside the middleware added next
    (``RequestPlumbing``): call it just before that ``add_middleware``. Each route is the router's own
    (the one the router would put in ``scope["route"]``); one that takes more than the ``Request``
    (a dependency, a parameter, a body model) is refused, since skipping FastAPI would skip its parsing."""
    found: dict[tuple[str, str], APIRoute] = {}
    for router, method, path in routes:
        route = next(
            (r for r in router.routes if isinstance(r, APIRoute) and r.path == path and method in (r.methods or ())),
            None,
        )
        if route is None:
            raise LookupError(f"no {method} {path} route to answer directly")
        d = route.dependant
        if d.request_param_name is None or any(
            (d.path_params, d.query_params, d.header_params, d.cookie_params, d.body_params, d.dependencies)
        ):
            raise ValueError(f"{method} {path}: only a route taking the Request alone can be answered directly")
        found[(method, path)] = route
    app.add_middleware(DirectRoutes, routes=found)
