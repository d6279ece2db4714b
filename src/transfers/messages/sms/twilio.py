"""Twilio's published Messages API over plain HTTP (docs/rules/messages.md#sending); no vendor SDK.

``POST {TRANSFERS_SMS_PROVIDER_URL}/2010-04-01/Accounts/{AccountSid}/Messages.json``, HTTP basic auth
``AccountSid:AuthToken``, a form with ``To``, ``From``, ``Body`` and ``StatusCallback``. Twilio answers
``201 Created`` with the Message resource as JSON (``sid`` ``SM...``, ``status`` ``queued``/``accepted``,
``to``, ``from``, ``num_segments``, ...), or an error as JSON: ``{"code": 21211, "message": "...",
"more_info": "...", "status": 400}``. What each answer becomes (``SmsAnswer``, ``provider.py``):

| answer | outcome | why |
|---|---|---|
| 2xx with a ``sid`` | ``sent`` | Twilio took it; its receipt comes to the status callback |
| 2xx without a readable ``sid`` | ``retry``, ambiguous | Twilio may have taken it: not sent again blindly |
| 429, 5xx | ``retry`` | Twilio asks us to come back |
| any other 4xx (21211, 21610, 21614, 20003: invalid, unsubscribed, not mobile, credentials) | ``failed`` | refused |
| 1xx, 3xx | ``retry`` | not Twilio's answer (redirects are never followed); kept until the message expires |
| no connection | ``retry`` | nothing was sent |
| no answer after the request went out (timeout, connection dropped) | ``retry``, ambiguous | Twilio may have taken it |

One deadline bounds the whole call (``TRANSFERS_SMS_TIMEOUT_SECONDS``), a slowly dripped answer included;
at most ``MAX_ANSWER_BYTES`` of the answer are read. The message's text is never logged or put in an error.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import httpx

from transfers.messages.sms.provider import SmsAnswer, SmsProbeFailed

API_VERSION = "2010-04-01"
MAX_ANSWER_BYTES = 64 * 1024  # a Message resource or an error is well under 4 kB
MAX_ERROR_CHARS = 300
USER_AGENT = "transfers/0.1 (+traveller messages)"
# Twilio's error codes that have a word of their own in the message's reason; any other refusal: refused.
REFUSAL_REASONS = {21211: "invalid_number", 21610: "unsubscribed", 21614: "not_mobile"}


class _Exchange:
    """Whether the request's first bytes were written (httpx's ``trace`` extension): from then on, a
    missing answer means the provider may have taken the message."""

    def __init__(self) -> None:
        self.request_written = False

    async def trace(self, event: str, info: dict[str, Any]) -> None:
        if event.endswith("send_request_headers.started"):  # http11. or http2.
            self.request_written = True


class TwilioProvider:
    name = "twilio"

    def __init__(
        self,
        base_url: str,
        account_sid: str,
        auth_token: str,
        *,
        timeout_seconds: float = 10.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.account_sid = account_sid
        self._auth = httpx.BasicAuth(account_sid, auth_token)
        self._timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    @property
    def messages_url(self) -> str:
        return f"{self.base_url}/{API_VERSION}/Accounts/{quote(self.account_sid, safe='')}/Messages.json"

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout),
                follow_redirects=False,
                auth=self._auth,
                headers={"Accept": "application/json", "User-Agent": USER_AGENT},
                limits=httpx.Limits(max_connections=50, max_keepalive_connections=20),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def send(self, to: str, sender: str, body: str, status_callback: str | None) -> SmsAnswer:
        form = {"To": to, "From": sender, "Body": body}
        if status_callback:
            form["StatusCallback"] = status_callback
        exchange = _Exchange()
        try:
            async with asyncio.timeout(self._timeout):
                status, answer = await self._post(form, exchange)
        except (TimeoutError, httpx.TimeoutException):
            return _no_answer(exchange, f"twilio did not answer within {self._timeout:g} s", "timeout")
        except httpx.HTTPError as exc:
            return _no_answer(exchange, f"twilio cannot be reached: {type(exc).__name__}", "unreachable")
        return judge(status, answer)

    async def _post(self, form: dict[str, str], exchange: _Exchange) -> tuple[int, bytes]:
        request = self._http().build_request("POST", self.messages_url, data=form, extensions={"trace": exchange.trace})
        answer = await self._http().send(request, stream=True)
        try:
            return answer.status_code, await _read_bounded(answer)
        finally:
            await answer.aclose()

    async def probe(self) -> str:
        """Reads the account (``GET .../Accounts/{sid}.json``): proves the URL and the credentials, sends nothing."""
        url = f"{self.base_url}/{API_VERSION}/Accounts/{quote(self.account_sid, safe='')}.json"
        try:
            async with asyncio.timeout(self._timeout):
                answer = await self._http().get(url)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise SmsProbeFailed(f"twilio at {self.base_url} did not answer within {self._timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise SmsProbeFailed(f"twilio at {self.base_url} cannot be reached: {type(exc).__name__}") from exc
        if answer.status_code in (401, 403):
            raise SmsProbeFailed(
                f"twilio at {self.base_url} refused the account SID and auth token (HTTP {answer.status_code})"
            )
        if answer.status_code != 200:
            raise SmsProbeFailed(f"twilio at {self.base_url} answered HTTP {answer.status_code}")
        account = _json_object(answer.content[:MAX_ANSWER_BYTES])
        state = account.get("status") if account else None
        if state not in (None, "active"):
            raise SmsProbeFailed(f"the Twilio account {self.account_sid} is {state}")
        return f"twilio at {self.base_url} answered for account {self.account_sid}"


def judge(status: int, answer: bytes) -> SmsAnswer:
    """What Twilio's answer to a create means (the table in the module's docstring)."""
    document = _json_object(answer)
    if 200 <= status < 300:
        sid = document.get("sid") if document else None
        if isinstance(sid, str) and sid.strip():
            return SmsAnswer("sent", provider_id=sid.strip())
        return SmsAnswer(
            "retry",
            error=f"twilio answered HTTP {status} without a readable message sid; it may have taken the message",
            ambiguous=True,
            reason="malformed_answer",
        )
    said = _twilio_error(document)
    if status == 429:
        return SmsAnswer("retry", error=_line(f"twilio: too many requests (HTTP 429){said}"), reason="rate_limited")
    if 400 <= status < 500:
        code = document.get("code") if document else None
        reason = REFUSAL_REASONS.get(code, "refused") if isinstance(code, int) else "refused"
        return SmsAnswer("failed", error=_line(f"twilio refused the message (HTTP {status}){said}"), reason=reason)
    return SmsAnswer("retry", error=_line(f"twilio answered HTTP {status}{said}"), reason="provider_error")


def _no_answer(exchange: _Exchange, error: str, reason: str) -> SmsAnswer:
    if exchange.request_written:
        return SmsAnswer(
            "retry",
            error=error + " after the request was sent; it may have taken the message",
            ambiguous=True,
            reason=reason,
        )
    return SmsAnswer("retry", error=error, reason=reason)


async def _read_bounded(answer: httpx.Response) -> bytes:
    """At most ``MAX_ANSWER_BYTES`` (what is beyond is left unread: the answer is judged on its start,
    which then fails to parse, as a malformed answer)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in answer.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_ANSWER_BYTES:
            break
    return b"".join(chunks)[:MAX_ANSWER_BYTES]


def _json_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _twilio_error(document: dict[str, Any] | None) -> str:
    """``, code 21211: The 'To' number ... is not a valid phone number.`` from Twilio's error JSON."""
    if not document:
        return ""
    code, message = document.get("code"), document.get("message")
    parts = [
        f"code {code}" if isinstance(code, int | str) and str(code) else "",
        message if isinstance(message, str) else "",
    ]
    text = ": ".join(part for part in parts if part)
    return f", {text}" if text else ""


def _line(text: str) -> str:
    """One line of bounded length (Twilio's message is echoed into last_error)."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
