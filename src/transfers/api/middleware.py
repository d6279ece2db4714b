"""Outermost request plumbing, as plain ASGI (no per-request task or body copy):

* ``X-Request-ID`` on every response (echoed when the caller sent a sane one);
* request bodies over ``max_body_bytes`` refused with 413 before any parsing;
* a caller that left mid-body is counted as 499, nothing answered;
* any exception that escaped the routes becomes 500 ``INTERNAL_ERROR`` (or 503 ``UNAVAILABLE``
  when the database is unreachable), logged with its traceback, never shown to the caller;
* the ``RateLimit-*`` headers of an allowed request (``api/ratelimit.py``);
* the HTTP metrics (``api/metrics.py``) and one structured access-log line per request;
* a client's ``/api/`` request into the request log's buffer (``requestlog/``,
  docs/rules/agency-portal.md#request-log): method, path (never the query string), status, request
  id, idempotency key, duration; never a body, a key or another header. Written later, in batches.

One layer with one send wrapper on purpose: each ASGI layer costs every request a call frame
per message, and a GET booking is short enough for that to show (bench/README.md, "Profile").
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import structlog
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from transfers.api.metrics import ResponseSeen, observe_request
from transfers.api.ratelimit import allowed_headers
from transfers.api.responses import dumps, service_error_body
from transfers.context import request_id_var
from transfers.db.errors import is_database_unavailable
from transfers.errors import ErrorCode
from transfers.observability.metrics import CLIENT_CLOSED_REQUEST
from transfers.requestlog.buffer import RequestLogBuffer

log = structlog.get_logger("transfers.http")
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class BodyTooLarge(Exception):
    pass


class RequestPlumbing:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int, request_log: RequestLogBuffer | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.request_log = request_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        incoming = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SANE_REQUEST_ID.match(incoming) else os.urandom(16).hex()  # = uuid4().hex's form
        token = request_id_var.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        entry_root_path = scope.get("root_path", "") or ""
        seen = ResponseSeen()
        rid_header = (b"x-request-id", request_id.encode())

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen.start(message)
                message["headers"] = [*message.get("headers", []), rid_header, *allowed_headers(scope)]
            await send(message)

        try:
            declared = headers.get(b"content-length")
            if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
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
            if is_database_unavailable(exc):
                log.warning("database_unavailable", error=type(exc).__name__, path=scope["path"])
                if not seen.status:
                    await self._error(
                        send_with_id,
                        ErrorCode.UNAVAILABLE,
                        None,
                        extra_headers=[(b"retry-after", b"5")],
                    )
            else:
                log.exception("unhandled_error", path=scope["path"])
                if not seen.status:
                    await self._error(
                        send_with_id,
                        ErrorCode.INTERNAL_ERROR,
                        f"Internal error; quote request id {request_id} to support.",
                    )
        finally:
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
            log.info(
                "request",
                method=scope["method"],
                path=scope["path"],
                status=seen.status,
                duration_ms=round(seconds * 1000, 2),
                client_id=state.get("client_id"),
                partner_id=state.get("partner_id"),
                reservation_no=state.get("reservation_no"),
            )
            request_id_var.reset(token)

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
