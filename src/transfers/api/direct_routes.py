"""The busiest booking-API calls answered by their route's own function, before any of FastAPI's layers.

``DirectApp`` is the FastAPI application whose ``__call__`` is the outermost ASGI callable of the
API process. A request whose exact method and path (no ``root_path``) is one of its direct routes
(``POST /api/v1/booking-api/search``, ``GET`` and ``POST /api/v1/booking-api/booking``) is answered
by ``Plumbing.direct`` (``api/middleware.py``: request id, body limit, error envelopes, metrics,
request log, access line) calling that route's function; everything else goes on to FastAPI as
before: forwarded headers (``trust_forwarded``, what uvicorn's ``ProxyHeadersMiddleware`` did),
FastAPI's and Starlette's ``__call__``, ``ServerErrorMiddleware``, the telemetry and body-limit
middlewares, ``RequestPlumbing``, the exception middleware, exit stack, router, included-router
dispatch and request handler (docs/operations/performance-history.md#search-third-pass, #get-booking, #create-cpu and
#served-request-path).

What the skipped layers did for these routes is done here the same way, and nothing else is skipped:

* ``scope["app"]`` (``request.app``), ``["route"]``, ``["endpoint"]`` (the metrics' route label) and
  ``["path_params"]`` set as Starlette and the router set them;
* a ``DomainError`` or ``HTTPException`` answered by the app's own handlers (``api/errors.py``), any
  other exception by the plumbing's 500/503 envelope, as ``RequestPlumbing`` answers it; an exception
  of the plumbing itself by ``ServerErrorMiddleware``'s plain ``500 Internal Server Error`` (if no
  answer had started) and passed on to the server, as before;
* FastAPI's telemetry and body-limit middlewares do nothing here: the body limit is the plumbing's
  (the app sets no ``max_body_size``), and FastAPI's OpenTelemetry middlewares act only when an
  OpenTelemetry provider is configured (the project configures none). If one is, the direct routes
  go through FastAPI like every other request, spans and all: that is decided on the first direct
  request after start-up (FastAPI configures OpenTelemetry from the environment just before the
  lifespan starts; OpenTelemetry's providers are set once);
* the forwarded headers (``X-Forwarded-For``/``-Proto`` from a trusted proxy) set ``scope["client"]``
  and ``["scheme"]``, which nothing on a direct route reads (its function, the plumbing, the logs,
  the request log): only the requests passed on to FastAPI get them.

Only a route whose function takes the ``Request`` alone and returns a ``Response`` can be direct
(checked at start-up): nothing FastAPI would have parsed, validated or serialised is skipped. The
routes stay declared to FastAPI, so the served OpenAPI document is unchanged, and they still answer
under a ``root_path``, through FastAPI.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from transfers.api.metrics import ResponseSeen
from transfers.api.middleware import Endpoint, Plumbing
from transfers.observability.metrics import CLIENT_CLOSED_REQUEST


class DirectApp(FastAPI):
    """FastAPI whose direct routes are answered before FastAPI's own ``__call__`` (module docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._direct: dict[tuple[str, str], tuple[APIRoute, Endpoint]] = {}
        self._plumbing: Plumbing | None = None
        self._passed_on: ASGIApp = super().__call__
        self._telemetry_on: bool | None = None  # FastAPI's OpenTelemetry middlewares; None: not decided yet

    def trust_forwarded(self, trusted_hosts: list[str] | str) -> None:
        """What uvicorn's ``proxy_headers`` does, for the requests passed on to FastAPI (``transfers
        serve`` calls this with uvicorn's own ``forwarded_allow_ips`` and turns uvicorn's off)."""
        proxy = ProxyHeadersMiddleware(super().__call__, trusted_hosts=trusted_hosts)  # type: ignore[arg-type]
        self._passed_on = cast(ASGIApp, proxy)

    def answer_directly(self, plumbing: Plumbing, routes: dict[tuple[str, str], APIRoute]) -> None:
        self._plumbing = plumbing
        self._direct = {key: (route, cast(Endpoint, route.endpoint)) for key, route in routes.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            direct = self._direct.get((scope["method"], scope["path"]))
            if direct is not None and self._plumbing is not None and not scope.get("root_path") and not self.root_path:
                telemetry_on = self._telemetry_on
                if telemetry_on is None:
                    telemetry_on = self._telemetry_on = self._native_telemetry.enabled()
                if not telemetry_on:
                    await self._answer(direct, self._plumbing, scope, receive, send)
                    return
        elif scope["type"] == "lifespan":
            self._telemetry_on = None  # decided again after FastAPI's start-up configuration
        await self._passed_on(scope, receive, send)

    async def _answer(
        self, direct: tuple[APIRoute, Endpoint], plumbing: Plumbing, scope: Scope, receive: Receive, send: Send
    ) -> None:
        route, endpoint = direct
        scope["app"] = self
        scope["route"] = route
        scope["endpoint"] = endpoint
        scope["path_params"] = {}
        seen = ResponseSeen()
        try:
            await plumbing.direct(scope, receive, send, endpoint, seen)
        except Exception:  # the plumbing's own failure: ServerErrorMiddleware's answer, then the server's log
            if seen.status in (0, CLIENT_CLOSED_REQUEST):  # nothing sent yet
                await PlainTextResponse("Internal Server Error", status_code=500)(scope, receive, send)
            raise


def install_direct_routes(app: DirectApp, routes: Iterable[tuple[APIRouter, str, str]], plumbing: Plumbing) -> None:
    """Answer ``(router, method, path)`` through ``plumbing`` before FastAPI's layers. Each route is the
    router's own (the one the router would put in ``scope["route"]``); one that takes more than the
    ``Request`` (a dependency, a parameter, a body model) is refused, since skipping FastAPI would skip
    its parsing."""
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
    app.answer_directly(plumbing, found)
