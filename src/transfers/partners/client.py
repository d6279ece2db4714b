"""The one outbound HTTP client for partner calls.

Every call is: JSON, ``Authorization: Bearer <outbound token>``, Standard Webhooks signature,
the caller's request id in ``X-Request-ID``, an overall deadline covering connect, send and a
slowly dripped body, no redirects followed, and the answer capped at ``max_response_bytes``.
Transport exceptions never escape: callers get a ``CallResult`` saying what happened.

The transport is ``partners/http11.py``: kept-alive connections on bare asyncio protocols with
httptools' C parser. First httpx, then aiohttp: a 10-partner search spent about half of its CPU in
httpx/httpcore/h11/anyio, and aiohttp's request machinery still cost ~0.07 ms of CPU per exchange
against ~0.015 ms for the bare protocol (docs/operations/performance-history.md#search-fan-out). httpx remains the
SDK's and the tests' client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any, TypeVar, cast
from urllib.parse import quote

import aiohttp
import orjson
import structlog

from transfers.context import request_id_var
from transfers.delivery.transport import EXCERPT_CHARS as EXCERPT_CHARS  # re-exported for callers
from transfers.delivery.transport import CallResult as CallResult
from transfers.delivery.transport import Outcome as Outcome
from transfers.delivery.transport import answer_excerpt as answer_excerpt
from transfers.observability.metrics import observe_partner_call
from transfers.partners.http11 import AnswerTooLarge, Http11Client, PartnerTransportError, UnusableRequest, target
from transfers.partners.signing import signed
from transfers.partners.ssrf import BlockedDestination, Resolver, system_resolver
from transfers.rows import row_type

log = structlog.get_logger("transfers.partners")
T = TypeVar("T")

USER_AGENT = "transfers/0.1 (+partner webhooks)"
# Connections per partner (scheme, host, port) at once; a hanging partner can hold at most this many,
# never the others' (the pool is keyed by partner: a request looks up only its own host's idle connections).
CONNECTIONS_PER_PARTNER = 200
KEEPALIVE_SECONDS = 4.0  # under the 5 s idle timeout of uvicorn and Node servers: a reused connection is rarely stale


@dataclass(frozen=True)
class PartnerEndpoint:
    """What is needed to call one partner (secrets already decrypted, in memory only)."""

    partner_id: int
    name: str
    base_url: str
    outbound_token: str
    signing_secret: str
    previous_signing_secret: str | None = None
    """The secret a rotation replaced (partners/rotation.py): calls carry its signature as well
    until ``previous_until``, so a partner still verifying with it keeps accepting them."""
    previous_until: datetime | None = None
    hosted: bool = False  # no server; the outbox answers for it in-process (hosted/inprocess.py)

    def extra_secrets(self, now: datetime) -> tuple[str, ...]:
        if self.previous_signing_secret and self.previous_until is not None and now < self.previous_until:
            return (self.previous_signing_secret,)
        return ()

    @cached_property
    def authorization(self) -> str:
        """``Bearer <token>``, formatted once per endpoint (the directory keeps one endpoint per
        partner for the life of its snapshot, so a search does not format it per call)."""
        return f"Bearer {self.outbound_token}"


class SharedDeadline:
    """One timer for calls made together (in a search's fan-out, the calls that need a new connection and
    so run in a task: ``CallBatch``), where ``asyncio.timeout`` per call
    armed and cancelled a timer per call (5.5 µs a call against 0.8 µs;
    docs/operations/performance-history.md#search-fifth-pass). Each call keeps its own deadline, ``seconds`` after it
    entered ``bound``, as under ``asyncio.timeout``: when the timer fires, the calls whose deadline has passed are
    cancelled and see ``TimeoutError`` (same outcome, same duration measured by the call), and the timer is set again
    for the next deadline if a call entered later (calls of one fan-out enter within microseconds of each other, so it
    almost never is). A cancellation from elsewhere (the search's own) still propagates as
    ``CancelledError``, as ``asyncio.timeout`` decides it."""

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._seconds = seconds
        # a call's task -> (its cancelling() when it entered, its deadline on the loop's clock)
        self._running: dict[asyncio.Task[Any], tuple[int, float]] = {}
        self._fired: set[asyncio.Task[Any]] = set()
        self._handle: asyncio.TimerHandle | None = self._loop.call_at(self._loop.time() + seconds, self._expire)

    def _expire(self) -> None:
        self._handle = None
        now = self._loop.time()
        later: float | None = None
        for task, (_, when) in self._running.items():
            if task in self._fired:
                continue
            if when <= now:
                self._fired.add(task)
                task.cancel()
            elif later is None or when < later:
                later = when
        if later is not None:
            self._handle = self._loop.call_at(later, self._expire)

    def close(self) -> None:
        """The calls are over: the timer is not needed any more."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    async def bound(self, exchange: Awaitable[T]) -> T:
        task = cast("asyncio.Task[Any]", asyncio.current_task())  # always inside a task: the fan-out's
        cancelling = task.cancelling()
        when = self._loop.time() + self._seconds
        self._running[task] = (cancelling, when)
        if self._handle is None:  # the timer has fired (or was closed): this call's own deadline
            self._handle = self._loop.call_at(when, self._expire)
        try:
            return await exchange
        except asyncio.CancelledError:
            # Ours (and no other cancellation pending, as asyncio.timeout decides): the deadline.
            if task in self._fired and task.uncancel() <= cancelling:
                raise TimeoutError from None
            raise
        finally:
            del self._running[task]
            self._fired.discard(task)


@row_type
class PreparedCall:
    """A partner call made ready to send (``PartnerClient.prepare``): where it goes, its body and its
    signature, made once. ``headers()`` and ``head_lines()`` are its headers in the two forms the
    transport takes: a dict (``Http11Client.request``) or the request's header lines
    (``Http11Client.start``, what a search's batch writes on a kept-alive connection)."""

    partner: PartnerEndpoint
    method: str
    path: str
    url: str
    body: bytes
    has_payload: bool  # a JSON body (``Content-Type`` sent), even an empty one
    signature: tuple[str, str, str]  # ``webhook-id``, ``webhook-timestamp``, ``webhook-signature``

    def headers(self) -> dict[str, str]:
        """The call's headers, in the order they are sent (``head_lines`` writes the same ones)."""
        wid, timestamp, signatures = self.signature
        headers = {
            "Authorization": self.partner.authorization,
            "Accept": "application/json",
            "webhook-id": wid,
            "webhook-timestamp": timestamp,
            "webhook-signature": signatures,
        }
        if self.has_payload:
            headers["Content-Type"] = "application/json"
        request_id = request_id_var.get()
        if request_id:
            headers["X-Request-ID"] = request_id
        return headers

    def head_lines(self) -> str | None:
        """``headers()`` as ``Http11Client.header_lines`` writes them (``Name: value\\r\\n`` each, same
        order), in one format instead of a dict and a loop over it: a search's batch writes ten
        (docs/operations/performance-history.md#search-seventh-pass; tests/unit/test_partner_call_counting.py compares
        the two). ``None`` when the token or the request id holds a line break: the caller then takes
        ``headers()`` and the transport refuses it as it refuses any such header."""
        wid, timestamp, signatures = self.signature
        authorization = self.partner.authorization
        request_id = request_id_var.get()
        if "\n" in authorization or "\r" in authorization:
            return None
        lines = (
            f"Authorization: {authorization}\r\nAccept: application/json\r\nwebhook-id: {wid}\r\n"
            f"webhook-timestamp: {timestamp}\r\nwebhook-signature: {signatures}\r\n"
        )
        if self.has_payload:
            lines += "Content-Type: application/json\r\n"
        if request_id:
            if "\n" in request_id or "\r" in request_id:
                return None
            lines += f"X-Request-ID: {request_id}\r\n"
        return lines


class PartnerClient:
    """Partner calls over kept-alive connections (``partners/http11.py``), made lazily inside the
    running event loop (``Services`` builds this client before there is one).

    ``call`` is the whole of a call. Calls made together (a search's fan-out, ``call_batch.CallBatch``)
    use its steps: ``prepare`` (sign once), ``transport`` (write it on an idle connection), ``send``
    (the rest of ``call`` for one that needs a new connection), ``judge_answer`` and ``judge_failure``
    (the outcome and its log, as ``call`` gives them)."""

    def __init__(
        self,
        *,
        max_response_bytes: int = 1_048_576,
        allow_private: bool = True,
        resolver: Resolver = system_resolver,
        trusted_url: str | None = None,
    ) -> None:
        """``trusted_url``: the built-in sandbox partner's base URL (``Settings.sandbox_partner_url``), called
        with the SSRF guard on although it is on this service's own (often loopback) address: it is
        trusted by that identity, never by turning the guard off. Only URLs under it are; any other
        URL on the same host and port meets the guard as usual."""
        self._max = max_response_bytes
        self._allow_private = allow_private
        self._resolver = resolver
        self._trusted_url = trusted_url.rstrip("/") if trusted_url else None
        self._trusted_origin = target(self._trusted_url).key if self._trusted_url else None
        self._transport: Http11Client | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def transport(self) -> Http11Client:
        """The transport of the running event loop (made on first use in it)."""
        loop = asyncio.get_running_loop()
        transport = self._transport
        if transport is not None and self._loop is loop:
            return transport
        if transport is not None:
            # Made on another (finished) event loop: its connections are unusable here.
            transport.close()
        self._transport = Http11Client(
            max_response_bytes=self._max,
            user_agent=USER_AGENT,
            keepalive_seconds=KEEPALIVE_SECONDS,
            per_host=CONNECTIONS_PER_PARTNER,
            # Hardening (SSRF guard, partners/ssrf.py): resolve, check every address, connect to a
            # checked one. Unguarded (sandbox): the loop's own resolver.
            guarded=not self._allow_private,
            resolver=self._resolver,
            trusted=frozenset() if self._trusted_origin is None else frozenset({self._trusted_origin}),
        )
        self._loop = loop
        return self._transport

    async def aclose(self) -> None:
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()

    async def call(
        self,
        partner: PartnerEndpoint,
        method: str,
        path: str,
        payload: dict[str, Any] | None,
        *,
        timeout: float,
        webhook_id: str | None = None,
        observe: bool = True,
        body: bytes | None = None,
        deadline: SharedDeadline | None = None,
    ) -> CallResult:
        """``observe=False``: the caller records the metric itself, once it has judged the answer.
        ``body``: ``payload`` already serialised (a search sends one payload to every partner and
        serialises it once); ``payload`` is then only its ``None``-ness. ``deadline``: the one
        deadline of calls made together (a search's fan-out), instead of a timer per call;
        ``timeout`` is then what the timeout outcome's error says."""
        if body is None:
            body = b"" if payload is None else orjson.dumps(payload)
        prepared = self.prepare(partner, method, path, body, has_payload=payload is not None, webhook_id=webhook_id)
        result = await self.send(prepared, timeout=timeout, deadline=deadline)
        if observe:  # hardening: partner_calls_total / partner_call_duration_seconds
            observe_partner_call(partner.name, path, result.outcome, result.duration_ms)
        return result

    @staticmethod
    def prepare(
        partner: PartnerEndpoint,
        method: str,
        path: str,
        body: bytes,
        *,
        has_payload: bool = True,
        webhook_id: str | None = None,
    ) -> PreparedCall:
        """The call ``method path`` with ``body``, signed (Standard Webhooks; with the previous secret too
        during a rotation). ``webhook_id``: the id to sign under (an outbox message's); None: a new one."""
        also = partner.extra_secrets(datetime.now(UTC)) if partner.previous_signing_secret else ()
        signature = signed(partner.signing_secret, body, webhook_id, also=also)
        return PreparedCall(partner, method, path, partner.base_url.rstrip("/") + path, body, has_payload, signature)

    async def send(self, call: PreparedCall, *, timeout: float, deadline: SharedDeadline | None = None) -> CallResult:
        """The exchange of a prepared call, judged (not observed in the metrics: ``call`` does that). The
        deadline is ``timeout`` (``asyncio.timeout``) or, when given, ``deadline``'s."""
        headers = call.headers()
        started = time.perf_counter()
        try:
            self.refuse_beside_trusted(call.url)
            if deadline is None:
                async with asyncio.timeout(timeout):
                    status, raw = await self.transport().request(call.method, call.url, headers, call.body)
            else:
                status, raw = await deadline.bound(self.transport().request(call.method, call.url, headers, call.body))
        except (
            TimeoutError,
            AnswerTooLarge,
            BlockedDestination,
            PartnerTransportError,
            UnusableRequest,
            OSError,
        ) as exc:
            return self.judge_failure(call, exc, timeout, elapsed_ms(started, time.perf_counter()))
        return self.judge_answer(call, status, raw, elapsed_ms(started, time.perf_counter()))

    def refuse_beside_trusted(self, url: str) -> None:
        """The trusted origin serves the built-in partner under its own path only: a URL elsewhere on that
        host and port (the service's own API, say) is refused as the guard would refuse it
        (``BlockedDestination``; nothing when no origin is trusted or the guard is off)."""
        if self._trusted_origin is None or self._allow_private:
            return
        where = target(url)
        trusted = self._trusted_url or ""
        if where.key == self._trusted_origin and not (url == trusted or url.startswith(trusted + "/")):
            raise BlockedDestination(where.host, where.host, "not the built-in sandbox partner's URL")

    def judge_failure(self, call: PreparedCall, exc: BaseException, timeout: float, duration: float) -> CallResult:
        """An exchange that brought no answer (``exc``), as the outcome it is counted under, logged."""
        if isinstance(exc, TimeoutError):
            return _result("timeout", None, None, f"no answer within {timeout:g}s", duration, call)
        if isinstance(exc, AnswerTooLarge):
            return _result("too_large", None, None, f"answer over {self._max} bytes", duration, call)
        if isinstance(exc, BlockedDestination):
            return _result("blocked", None, None, f"SSRF guard: {exc}", duration, call)
        return _result("connect_error", None, None, transport_error_name(exc), duration, call)

    @staticmethod
    def judge_answer(call: PreparedCall, status: int, raw: bytes, duration: float) -> CallResult:
        """An answer, as the outcome it is counted under (a failed one logged)."""
        if 300 <= status < 400:
            return _result("redirect", status, None, "redirects are not followed", duration, call, raw)
        parsed: Any = None
        if raw:
            try:
                parsed = orjson.loads(raw)
            except orjson.JSONDecodeError:
                outcome: Outcome = "http_error" if status >= 400 else "invalid"
                return _result(outcome, status, None, "answer is not JSON", duration, call, raw)
        if status >= 400:
            return _result("http_error", status, parsed, f"HTTP {status}", duration, call, raw)
        return CallResult("ok", status, parsed, None, duration, raw)  # ``_result``'s, with nothing to log


def _result(
    outcome: Outcome,
    status: int | None,
    body: Any,
    error: str | None,
    duration: float,
    call: PreparedCall,
    raw: bytes | None = None,
) -> CallResult:
    if outcome != "ok":
        log.warning(
            "partner_call_failed",
            partner=call.partner.name,
            partner_id=call.partner.partner_id,
            path=call.path,
            outcome=outcome,
            http_status=status,
            error=error,
            duration_ms=duration,
        )
    return CallResult(outcome, status, body, error, duration, raw)


def elapsed_ms(started: float, ended: float) -> float:
    """A call's duration as reported: milliseconds between two ``time.perf_counter()`` readings, to 0.01."""
    return round((ended - started) * 1000, 2)


def transport_error_name(exc: BaseException) -> str:
    """The name a transport failure is reported under (logs, ``transfers partners check``): the
    names operators knew before the move to aiohttp, so reports and alerts keep matching."""
    if isinstance(exc, PartnerTransportError):
        return exc.name
    if isinstance(exc, UnusableRequest):
        return "InvalidURL"
    if isinstance(exc, aiohttp.ClientConnectorError):  # refused, unreachable, DNS, TLS handshake
        return "ConnectError"
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientResponseError):
        return "RemoteProtocolError"  # closed mid-answer, or not HTTP
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return "InvalidURL"
    if isinstance(exc, aiohttp.ClientOSError | OSError):
        return "ReadError"  # reset while sending or reading
    return type(exc).__name__


def info_path(reservation_no: str) -> str:
    """``/booking/info/{reservation_no}`` with the number percent-encoded (no path or query games)."""
    return "/booking/info/" + quote(reservation_no, safe="")
