"""The signed POST to a client's endpoint (docs/rules/webhooks.md): the ``Transport`` of every kind of
``webhook_deliveries`` (client events, ``webhooks/kind.py``; driver positions, ``webhooks/positions.py``),
one sender and one HTTP session for all of them, kept alive between deliveries.

Standard Webhooks headers (``webhook-id`` = the event id on every attempt, ``webhook-timestamp``,
``webhook-signature``: ``v1,<sig>`` and, for 24 h after a rotation, a second ``v1,<sig>`` by the
previous secret, space separated), one deadline for the whole exchange, no redirects, the webhooks'
SSRF guard (``webhooks/guard.py``) unless it is lifted. The answer's body is not used: a little is read, so the
connection can be reused. Transport failures come back as a ``CallResult``, never raised.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import aiohttp
import structlog
from aiohttp import hdrs
from yarl import URL

from transfers.clock import Clock
from transfers.delivery.transport import CallResult
from transfers.partners.secrets_box import SecretBox
from transfers.partners.signing import sign
from transfers.partners.ssrf import BlockedDestination, GuardedResolver, Resolver, refuse_literal_host, system_resolver
from transfers.webhooks.guard import failure_words
from transfers.webhooks.models import WebhookDelivery

log = structlog.get_logger("transfers.webhooks")
USER_AGENT = "transfers/0.1 (+client webhooks)"
_MAX_ANSWER_BYTES = 64 * 1024  # the answer is not used: read a little, so the connection can be reused


class WebhookSender:
    """The one HTTP session for client endpoints (``start``: opened in the running loop when the
    webhook dispatcher starts, or at its first use; ``aclose`` when it stops): the ``Transport`` of
    every kind of ``webhook_deliveries``, a signed POST."""

    def __init__(
        self,
        *,
        allow_private: bool,
        per_host: int,
        box: SecretBox,
        clock: Clock,
        resolver: Resolver = system_resolver,
    ) -> None:
        """``allow_private``: ``TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS`` (the guard off); ``resolver``: how
        hosts are resolved before the guard checks them (``Services.webhook_resolver``)."""
        self._allow_private = allow_private
        self._resolver = resolver
        self._per_host = per_host
        self._box = box
        self._clock = clock
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opened: dict[str, str] = {}  # sealed secret -> secret: decrypted once per process

    def _http(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is not None and self._loop is loop and not self._session.closed:
            return self._session
        connector = aiohttp.TCPConnector(
            limit=0,
            limit_per_host=self._per_host,
            keepalive_timeout=4.0,
            # The guard (webhooks/guard.py): resolve, check every address, connect to a checked one.
            resolver=None if self._allow_private else GuardedResolver(self._resolver),
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers={hdrs.USER_AGENT: USER_AGENT},
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None),
            trust_env=False,
        )
        self._loop = loop
        return self._session

    def start(self) -> None:
        """Open the session now (in the running loop), so the first delivery finds it ready."""
        self._http()

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
            await session.close()

    def _open(self, sealed: str) -> str:
        opened = self._opened.get(sealed)
        if opened is None:
            if len(self._opened) > 10_000:
                self._opened.clear()
            opened = self._opened[sealed] = self._box.open(sealed)
        return opened

    async def send(self, kind: str, message: WebhookDelivery, *, timeout: float, target: object) -> CallResult:
        """Sign and POST the delivery's fixed body: ``webhook-id`` is the event's id (or the
        delivery's own) on every attempt."""
        return await self.signed_post(
            message.url,
            message.body.encode(),
            message.event_id,
            secret_enc=message.secret_enc,
            old_secret_enc=message.old_secret_enc,
            old_secret_until=message.old_secret_until,
            timeout=timeout,
        )

    async def signed_post(
        self,
        url: str,
        body: bytes,
        webhook_id: str,
        *,
        secret_enc: str,
        old_secret_enc: str | None,
        old_secret_until: datetime | None,
        timeout: float,
    ) -> CallResult:
        """POST ``body`` signed by the endpoint's secret (and, for 24 h after a rotation, its previous one)."""
        now = self._clock.now()
        secrets = [self._open(secret_enc)]
        if old_secret_enc and old_secret_until and old_secret_until > now:
            secrets.append(self._open(old_secret_enc))
        timestamp = int(now.timestamp())
        headers = {
            "Content-Type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature_header(secrets, webhook_id, timestamp, body),
        }
        return await self.post(url, body, headers, timeout=timeout)

    async def post(self, url: str, body: bytes, headers: dict[str, str], *, timeout: float) -> CallResult:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                if not self._allow_private:
                    refuse_literal_host(URL(url).raw_host or "")
                async with self._http().post(url, data=body, headers=headers, allow_redirects=False) as answer:
                    await answer.content.read(_MAX_ANSWER_BYTES)
                    status = answer.status
        # Outcomes in words (webhooks/guard.py): the delivery log is the client's, never an exception's name.
        except TimeoutError as exc:
            return CallResult("timeout", None, None, failure_words(exc, timeout), _ms(started))
        except BlockedDestination as exc:
            log.info("webhook_refused", host=exc.host, address=exc.address, reason=exc.reason)
            return CallResult("blocked", None, None, failure_words(exc, timeout), _ms(started))
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return CallResult("connect_error", None, None, failure_words(exc, timeout), _ms(started))
        if 200 <= status < 300:
            return CallResult("ok", status, None, None, _ms(started))
        return CallResult("http_error", status, None, f"HTTP {status}", _ms(started))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def signature_header(secrets: list[str], event_id: str, timestamp: int, body: bytes) -> str:
    return " ".join(sign(secret, event_id, timestamp, body) for secret in secrets)
