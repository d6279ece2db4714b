"""Outermost request plumbing, as plain ASGI (no per-request task or body copy):

* ``X-Request-ID`` on every response (echoed when the caller sent a sane one);
* request bodies over ``max_body_bytes`` refused with 413 before any parsing;
* a caller that left mid-body is counted as 499, nothing answered;
* any exception that escaped the routes becomes 500 ``INTERNAL_ERROR`` (or 503 ``UNAVAILABLE``
  when the database is unreachable), logged with its traceback, never shown to the caller;
* the ``RateLimit-*`` headers of an allowed request (``api/ratelimit.py``);
* ``X-Content-Type-Options: nosniff`` on every answer, and on a capability URL's answers (``/t/``,
  ``/d/``, ``/m/``, ``/r/``: the token in the path is the whole authorisation) ``Referrer-Policy:
  no-referrer`` and ``Cache-Control: no-store``, whatever the route set (docs/operations/security.md);
* the HTTP metrics (``api/metrics.py``) and one structured access-log line per request
  (``transfers.logging.log_request``);
* a client's ``/api/`` request into the request log's buffer (``requestlog/``,
  docs/rules/agency-portal.md#request-log): method, path (never the query string), status, request
  id, idempotency key, duration; never a body, a key or another header. Written later, in batches.

Two entries, one plumbing: ``__call__`` is the middleware every request FastAPI routes passes
through; ``direct`` does the same for a direct route (``api/direct_routes.py``), called by the app
itself before any of FastAPI's layers, with the route's function in place of the app and its answer
sent with the headers added, without a send wrapper. Each ASGI layer costs every request a call
frame per message (docs/operations/performance-history.md#profile and #served-request-path).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from transfers.api.errors import handle_domain_error, handle_http_error
from transfers.api.metrics import ResponseSeen, observe_request
from transfers.api.ratelimit import allowed_headers
from transfers.api.responses import dumps, service_error_body
from transfers.context import request_id_var
from transfers.db.errors import is_database_unavailable
from transfers.errors import DomainError, ErrorCode
from transfers.logging import CAPABILITY_PATH_PREFIXES, log_request
from transfers.observability.metrics import CLIENT_CLOSED_REQUEST
from transfers.requestlog.buffer import RequestLogBuffer

log = structlog.get_logger("transfers.http")
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$").match

Endpoint = Callable[[Request], Awaitable[Response]]


NOSNIFF = (b"x-content-type-options", b"nosniff")
_CAPABILITY_HEADERS = ((b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"), NOSNIFF)
_CAPABILITY_REPLACED = frozenset(name for name, _ in _CAPABILITY_HEADERS)


def with_safety_headers(path: str, headers: list[Any]) -> list[Any]:
    """``headers`` (an answer's raw, lower-case head) with ``nosniff`` added when the route did not
    set it, and on a capability URL the no-referrer, no-store trio in place of whatever was there."""
    if path[:3] in CAPABILITY_PATH_PREFIXES:
        kept = [(k, v) for k, v in headers if k not in _CAPABILITY_REPLACED]
        kept.extend(_CAPABILITY_HEADERS)
        return kept
    for name, _ in headers:
        if name == b"x-content-type-options":
            return headers
    headers.append(NOSNIFF)
    return headers


class BodyTooLarge(Exception):
    pass


def _request_id(headers: dict[bytes, bytes]) -> str:
    incoming = headers.get(b"x-request-id", b"").decode("latin-1")
    return incoming if _SANE_REQUEST_ID(incoming) else os.urandom(16).hex()  # = uuid4().hex's form


class Plumbing:
    """What both entries share: the limits, the error answers and the bookkeeping of a finished request."""

    def __init__(self, *, max_body_bytes: int, request_log: RequestLogBuffer | None = None) -> None:
        self.max_body_bytes = max_body_bytes
        self.request_log = request_log

    async def direct(self, scope: Scope, receive: Receive, send: Send, endpoint: Endpoint, seen: ResponseSeen) -> None:
        """One request of a direct route (``scope["route"]``, ``["endpoint"]`` and ``["app"]`` already
        set, no ``root_path``): exactly what ``__call__`` does around FastAPI, around ``endpoint``. A
        ``DomainError`` or ``HTTPException`` is answered by the app's own handlers (``api/errors.py``),
        as FastAPI's exception middleware would; the answer's head gets ``X-Request-ID`` and the
        ``RateLimit-*`` headers, in the order ``__call__``'s send wrapper adds them."""
        started = time.perf_counter()
        headers = dict(scope["headers"])
        request_id = _request_id(headers)
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        try:
            if self._declared_too_large(headers):
                await self._error(
                    self._sender(scope, send, seen, request_id), ErrorCode.PAYLOAD_TOO_LARGE, self._too_large_message()
                )
                return
            request = Request(scope, self._limited(receive))
            try:
                response = await endpoint(request)
            except DomainError as exc:
                response = await handle_domain_error(request, exc)
            except StarletteHTTPException as exc:
                response = await handle_http_error(request, exc)
            seen.status = status = response.status_code
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": with_safety_headers(
                        scope["path"],
                        [*response.raw_headers, (b"x-request-id", request_id.encode()), *allowed_headers(scope)],
                    ),
                }
            )
            await send({"type": "http.response.body", "body": response.body})
        except BodyTooLarge:
            if not seen.status:
                await self._error(
                    self._sender(scope, send, seen, request_id), ErrorCode.PAYLOAD_TOO_LARGE, self._too_large_message()
                )
        except ClientDisconnect:  # as in __call__
            if not seen.status:
                seen.status = CLIENT_CLOSED_REQUEST
        except Exception as exc:
            await self._failed(exc, scope, seen, self._sender(scope, send, seen, request_id), request_id)
        finally:
            self._finish(scope, headers, seen, started, request_id, "")
            request_id_var.reset(token)

    @staticmethod
    def _sender(scope: Scope, send: Send, seen: ResponseSeen, request_id: str) -> Send:
        """``send`` adding ``X-Request-ID``, the ``RateLimit-*`` and the safety headers to the answer's head, and
        noting its status in ``seen``."""
        rid_header = (b"x-request-id", request_id.encode())
        path = scope["path"]

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen.start(message)
                message["headers"] = with_safety_headers(
                    path, [*message.get("headers", []), rid_header, *allowed_headers(scope)]
                )
            await send(message)

        return send_with_id

    def _declared_too_large(self, headers: dict[bytes, bytes]) -> bool:
        declared = headers.get(b"content-length")
        return declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes

    async def _failed(self, exc: Exception, scope: Scope, seen: ResponseSeen, send: Send, request_id: str) -> None:
        """An exception that escaped the route: 503 when the database is unreachable, else a logged 500
        (nothing sent if the answer had started)."""
        if is_database_unavailable(exc):
            log.warning("database_unavailable", error=type(exc).__name__, path=scope["path"])
            if not seen.status:
                await self._error(send, ErrorCode.UNAVAILABLE, None, extra_headers=[(b"retry-after", b"5")])
        else:
            log.exception("unhandled_error", path=scope["path"])
            if not seen.status:
                await self._error(
                    send, ErrorCode.INTERNAL_ERROR, f"Internal error; quote request id {request_id} to support."
                )

    def _finish(
        self,
        scope: Scope,
        headers: dict[bytes, bytes],
        seen: ResponseSeen,
        started: float,
        request_id: str,
        entry_root_path: str,
    ) -> None:
        """The metrics, the request log's entry and the access line of a finished request."""
        state = scope.get("state", {})
        seconds = time.perf_counter() - started
        observe_request(scope, entry_root_path, seen, seconds)
        client_id = state.get("client_id")
        if client_id is not None and self.request_log is not None and scope["path"].startswith("/api/"):
            idempotency_key = headers.get(b"idempotency-key")
            self.request_log.record(
                client_id,
                scope["method"],
                scope["path"],
                seen.status,
                request_id,
                None if idempotency_key is None else idempotency_key.decode("latin-1"),
                seconds,
            )
        log_request(
            scope["method"],
            scope["path"],
            seen.status,
            round(seconds * 1000, 2),
            client_id,
            state.get("partner_id"),
            state.get("reservation_no"),
        )

    def _too_large_message(self) -> str:
        return f"The request body is larger than {self.max_body_bytes} bytes."

    def _limited(self, receive: Receive) -> Receive:
        seen = 0
        limit = self.max_body_bytes

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge()
            return message

        return wrapped

    @staticmethod
    async def _error(
        send: Send,
        code: ErrorCode,
        message: str | None,
        extra_headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        body = dumps(service_error_body(code, message))
        headers: list[Any] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *(extra_headers or []),
        ]
        await send({"type": "http.response.start", "status": code.http_status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class RequestPlumbing(Plumbing):
    """The plumbing as FastAPI's outermost middleware of ours: every request the router answers."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, request_log: RequestLogBuffer | None = None) -> None:
        super().__init__(max_body_bytes=max_body_bytes, request_log=request_log)
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        request_id = _request_id(headers)
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        entry_root_path = scope.get("root_path", "") or ""
        seen = ResponseSeen()
        send_with_id = self._sender(scope, send, seen, request_id)
        try:
            if self._declared_too_large(headers):
                await self._error(send_with_id, ErrorCode.PAYLOAD_TOO_LARGE, self._too_large_message())
                return
            await self.app(scope, self._limited(receive), send_with_id)
        except BodyTooLarge:
            if not seen.status:
                await self._error(send_with_id, ErrorCode.PAYLOAD_TOO_LARGE, self._too_large_message())
        except ClientDisconnect:  # the caller left while sending its body: nothing was read, nothing done,
            # no one to answer; counted as 499 (as nginx does), not as the server's 500 with a traceback
            if not seen.status:
                seen.status = CLIENT_CLOSED_REQUEST
        except Exception as exc:
            await self._failed(exc, scope, seen, send_with_id, request_id)
        finally:
            self._finish(scope, headers, seen, started, request_id, entry_root_path)
            request_id_var.reset(token)
