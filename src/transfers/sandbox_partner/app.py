"""The sandbox partner over HTTP: the partner side of the webhook contract (PARTNER_API.md).

A plain Starlette app so it can be mounted inside the service (``/sandbox-partner``), served by a
test's ``LiveServer`` or run on its own (``transfers sandbox-partner``). When mounted, the host
app's lifespan must call ``app.state.aclose()``: Starlette runs no lifespan for mounts.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import orjson
import structlog
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from transfers.auth.keys import bearer_token
from transfers.partners.signing import verify
from transfers.sandbox_partner.config import SandboxPartnerConfig
from transfers.sandbox_partner.partner import Answer, SandboxPartner, error
from transfers.sandbox_partner.requests import CreateIn, SearchIn, UpdateIn, first_error

log = structlog.get_logger("transfers.sandbox_partner")

M = TypeVar("M", bound=BaseModel)
_SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


def _json(answer: Answer) -> Response:
    status, body = answer
    headers = {"Retry-After": "5"} if status == 503 else None
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


class _Rejected(Exception):
    def __init__(self, answer: Answer) -> None:
        self.answer = answer


class _Gate:
    """Authentication and parsing shared by every partner endpoint."""

    def __init__(self, config: SandboxPartnerConfig) -> None:
        self.config = config

    async def body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.config.max_body_bytes:
            raise _Rejected(error(413, "Request body too large"))
        body = await request.body()
        if len(body) > self.config.max_body_bytes:
            raise _Rejected(error(413, "Request body too large"))
        token = bearer_token(request.headers.get("authorization"))
        if token is None or not hmac.compare_digest(token.encode(), self.config.outbound_token.encode()):
            log.warning("sandbox_rejected_call", path=request.url.path, reason="bearer token")
            raise _Rejected(error(401, "Missing or wrong bearer token"))
        headers = {name: request.headers.get(name, "") for name in _SIGNATURE_HEADERS}
        if not verify(
            self.config.signing_secret, headers, body, tolerance_seconds=self.config.signature_tolerance_seconds
        ):
            log.warning("sandbox_rejected_call", path=request.url.path, reason="signature")
            raise _Rejected(error(401, "Missing, stale or invalid webhook signature"))
        return body

    @staticmethod
    def parse(model: type[M], body: bytes) -> M:
        try:
            data: Any = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise _Rejected(error(400, "The body is not JSON")) from None
        if not isinstance(data, dict):
            raise _Rejected(error(400, "The body must be a JSON object"))
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise _Rejected(error(422, f"Invalid request: {first_error(exc)}")) from None


def _endpoint(handler: Callable[[Request], Awaitable[Answer]]) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        try:
            return _json(await handler(request))
        except _Rejected as rejected:
            return _json(rejected.answer)

    return run


def create_sandbox_partner_app(config: SandboxPartnerConfig) -> Starlette:
    partner = SandboxPartner(config)
    gate = _Gate(config)

    async def search(request: Request) -> Answer:
        return partner.search(gate.parse(SearchIn, await gate.body(request)))

    async def create(request: Request) -> Answer:
        req = gate.parse(CreateIn, await gate.body(request))
        return partner.create(req, request.headers.get("webhook-id"))

    async def info(request: Request) -> Answer:
        await gate.body(request)
        return partner.info(request.path_params["reservation_no"])

    async def update(request: Request) -> Answer:
        return partner.update(gate.parse(UpdateIn, await gate.body(request)))

    async def healthz(_: Request) -> Response:
        return _json((200, {"status": "ok"}))

    async def http_error(_: Request, exc: Exception) -> Response:
        code = exc.status_code if isinstance(exc, HTTPException) else 500
        return _json(error(code, "Not found" if code == 404 else "Method not allowed" if code == 405 else "Error"))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        log.info(
            "sandbox_partner_started",
            service_url=config.service_url,
            approve_after_seconds=config.approve_after_seconds,
        )
        try:
            yield
        finally:
            await partner.aclose()

    app = Starlette(
        routes=[
            Route("/booking/search", _endpoint(search), methods=["POST"]),
            Route("/booking/create", _endpoint(create), methods=["POST"]),
            Route("/booking/info/{reservation_no:path}", _endpoint(info), methods=["GET"]),
            Route("/booking/update", _endpoint(update), methods=["PUT"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        exception_handlers={404: http_error, 405: http_error},
        lifespan=lifespan,
    )
    app.state.partner = partner
    app.state.aclose = partner.aclose  # what a host app that mounts us calls on shutdown
    return app
