"""The one outbound HTTP client for partner calls.

Every call is: JSON, ``Authorization: Bearer <outbound token>``, Standard Webhooks signature,
the caller's request id in ``X-Request-ID``, an overall deadline covering connect, send and a
slowly dripped body, no redirects followed, and the answer capped at ``max_response_bytes``.
Transport exceptions never escape: callers get a ``CallResult`` saying what happened.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

import httpx
import orjson
import structlog

from transfers.api.context import request_id_var
from transfers.observability.metrics import observe_partner_call
from transfers.partners.signing import signature_headers
from transfers.partners.ssrf import BlockedDestination, GuardedTransport, Resolver, system_resolver

log = structlog.get_logger("transfers.partners")

Outcome = Literal["ok", "timeout", "connect_error", "http_error", "invalid", "too_large", "redirect", "blocked"]


@dataclass(frozen=True)
class PartnerEndpoint:
    """What is needed to call one partner (secrets already decrypted, in memory only)."""

    partner_id: int
    name: str
    base_url: str
    outbound_token: str
    signing_secret: str


@dataclass(frozen=True)
class CallResult:
    outcome: Outcome
    http_status: int | None
    body: Any
    error: str | None
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class PartnerClient:
    def __init__(self, *, max_response_bytes: int = 1_048_576,
                 transport: httpx.AsyncBaseTransport | None = None,
                 allow_private: bool = True, resolver: Resolver = system_resolver) -> None:
        self._max = max_response_bytes
        self._limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        self._allow_private = allow_private
        self._resolver = resolver
        self._ssl = httpx.create_ssl_context(trust_env=False)
        # One connection pool per partner (its base URL), unless a transport is injected: httpcore
        # checks every pooled connection on each request (``has_expired``, a socket poll each), so a
        # pool shared by all partners costs O(every partner's connections) per call (bench/README.md,
        # "Profile"); and a hanging partner can no longer use up the connections of the others.
        self._shared = self._new_client(transport) if transport is not None else None
        self._pools: dict[str, httpx.AsyncClient] = {}

    def _new_client(self, transport: httpx.AsyncBaseTransport | None) -> httpx.AsyncClient:
        if transport is None:
            transport = (httpx.AsyncHTTPTransport(verify=self._ssl, limits=self._limits, trust_env=False)
                         if self._allow_private
                         # Hardening (SSRF guard, partners/ssrf.py): resolve, check every address, connect to a
                         # checked one.
                         else GuardedTransport(limits=self._limits, resolver=self._resolver))
        return httpx.AsyncClient(
            follow_redirects=False,
            timeout=httpx.Timeout(30.0),
            limits=self._limits,
            transport=transport,
            headers={"User-Agent": "transfers/0.1 (+partner webhooks)"},
            trust_env=False,
        )

    def _http(self, base_url: str) -> httpx.AsyncClient:
        if self._shared is not None:
            return self._shared
        client = self._pools.get(base_url)
        if client is None:
            client = self._pools[base_url] = self._new_client(None)
        return client

    async def aclose(self) -> None:
        clients = [*self._pools.values(), *([self._shared] if self._shared is not None else [])]
        self._pools.clear()
        for client in clients:
            await client.aclose()

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
    ) -> CallResult:
        """``observe=False``: the caller records the metric itself, once it has judged the answer."""
        result = await self._call(partner, method, path, payload, timeout=timeout, webhook_id=webhook_id)
        if observe:  # hardening: partner_calls_total / partner_call_duration_seconds
            observe_partner_call(partner.name, path, result.outcome, result.duration_ms)
        return result

    async def _call(self, partner: PartnerEndpoint, method: str, path: str, payload: dict[str, Any] | None, *,
                    timeout: float, webhook_id: str | None) -> CallResult:
        url = partner.base_url.rstrip("/") + path
        body = b"" if payload is None else orjson.dumps(payload)
        headers = {
            "Authorization": f"Bearer {partner.outbound_token}",
            "Accept": "application/json",
            **signature_headers(partner.signing_secret, body, webhook_id),
        }
        if payload is not None:
            headers["Content-Type"] = "application/json"
        request_id = request_id_var.get()
        if request_id:
            headers["X-Request-ID"] = request_id
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                status, raw = await self._exchange(self._http(partner.base_url), method, url, headers, body,
                                                   timeout)
        except TimeoutError:
            return self._result("timeout", None, None, f"no answer within {timeout:g}s", started, partner, path)
        except _TooLarge:
            return self._result("too_large", None, None, f"answer over {self._max} bytes", started, partner, path)
        except BlockedDestination as exc:
            return self._result("blocked", None, None, f"SSRF guard: {exc}", started, partner, path)
        except httpx.TransportError as exc:
            return self._result("connect_error", None, None, type(exc).__name__, started, partner, path)
        if 300 <= status < 400:
            return self._result("redirect", status, None, "redirects are not followed", started, partner, path)
        parsed: Any = None
        if raw:
            try:
                parsed = orjson.loads(raw)
            except orjson.JSONDecodeError:
                outcome: Outcome = "http_error" if status >= 400 else "invalid"
                return self._result(outcome, status, None, "answer is not JSON", started, partner, path)
        if status >= 400:
            return self._result("http_error", status, parsed, f"HTTP {status}", started, partner, path)
        return self._result("ok", status, parsed, None, started, partner, path)

    async def _exchange(self, http: httpx.AsyncClient, method: str, url: str, headers: dict[str, str],
                        body: bytes, timeout: float) -> tuple[int, bytes]:
        request = http.build_request(
            method, url, headers=headers, content=body or None,
            timeout=httpx.Timeout(timeout),
        )
        response = await http.send(request, stream=True)
        try:
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self._max:
                raise _TooLarge()
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self._max:
                    raise _TooLarge()
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)
        finally:
            await response.aclose()

    @staticmethod
    def _result(outcome: Outcome, status: int | None, body: Any, error: str | None, started: float,
                partner: PartnerEndpoint, path: str) -> CallResult:
        duration = round((time.perf_counter() - started) * 1000, 2)
        if outcome != "ok":
            log.warning("partner_call_failed", partner=partner.name, partner_id=partner.partner_id,
                        path=path, outcome=outcome, http_status=status, error=error, duration_ms=duration)
        return CallResult(outcome, status, body, error, duration)


class _TooLarge(Exception):
    pass


def info_path(reservation_no: str) -> str:
    """``/booking/info/{reservation_no}`` with the number percent-encoded (no path or query games)."""
    return "/booking/info/" + quote(reservation_no, safe="")
