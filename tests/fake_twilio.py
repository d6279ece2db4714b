"""A local server answering like Twilio's Messages API (docs/rules/messages.md#sending), for the tests.

A real HTTP server on loopback (``tests/servers.py``): ``POST /2010-04-01/Accounts/{sid}/Messages.json``
with HTTP basic auth and a form (``To``, ``From``, ``Body``, ``StatusCallback``) answers ``201`` and the
Message resource as Twilio publishes it (``sid`` ``SM`` + 32 hex digits, ``status`` ``queued``, ...);
``GET /2010-04-01/Accounts/{sid}.json`` answers the account. Every request is recorded (form, basic-auth
user and password). Wrong credentials: 401 with Twilio's error JSON (code 20003).

Misbehaving on demand: ``mode`` for every request, ``queue`` for the next few (first first), or
``by_number[To]`` for the next texts to one number (the tests share one database: other bookings' texts
may come through the same server): ``ok``;
``429``, ``500``, ``503`` (Twilio's error JSON); ``malformed`` (a 201 whose body is not JSON);
``html503`` (a proxy's HTML page); ``hang`` (takes the request, never answers). Numbers in ``invalid``
are refused ``400`` code 21211, numbers in ``unsubscribed`` ``400`` code 21610, as Twilio refuses them.

``callback(sid, "delivered")`` posts a status callback for a created message to its ``StatusCallback``,
signed as Twilio signs (``X-Twilio-Signature``, computed here on its own, not by the service's code);
``inbound(url, from_=..., body=...)`` posts an incoming text the same way.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from urllib.parse import parse_qsl

import httpx
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers import LiveServer

ACCOUNT_SID = "AC" + "0123456789abcdef" * 2
AUTH_TOKEN = "test-auth-token-0123456789abcdef"
API = "/2010-04-01"


def twilio_signature(auth_token: str, url: str, fields: list[tuple[str, str]]) -> str:
    """As Twilio's documentation computes it: the URL, then each field's name and value sorted by name,
    HMAC-SHA1 with the auth token, base64."""
    text = url
    for name, value in sorted(fields):
        text += name + value
    return base64.b64encode(hmac.new(auth_token.encode(), text.encode(), hashlib.sha1).digest()).decode()


@dataclass
class TwilioRequest:
    method: str
    path: str
    form: dict[str, str]
    user: str | None
    password: str | None
    answered: int | None = None  # the status it was answered with (None: it hung)


@dataclass
class FakeTwilio:
    account_sid: str = ACCOUNT_SID
    auth_token: str = AUTH_TOKEN
    mode: str = "ok"
    queue: list[str] = field(default_factory=list)
    by_number: dict[str, list[str]] = field(default_factory=dict)  # modes for the next texts to one number
    invalid: set[str] = field(default_factory=set)
    unsubscribed: set[str] = field(default_factory=set)
    requests: list[TwilioRequest] = field(default_factory=list)
    messages: dict[str, dict[str, Any]] = field(default_factory=dict)  # sid -> the Message resource
    callbacks: dict[str, str] = field(default_factory=dict)  # sid -> its StatusCallback
    url: str = ""
    _server: LiveServer | None = None
    _release: asyncio.Event = field(default_factory=asyncio.Event)

    # -- the server ------------------------------------------------------------------------------
    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(API + "/Accounts/{sid}/Messages.json", self._create, methods=["POST"]),
                Route(API + "/Accounts/{sid}.json", self._account, methods=["GET"]),
            ]
        )

    async def start(self) -> FakeTwilio:
        self._server = await LiveServer(self.app()).start()
        self.url = self._server.url
        return self

    async def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            await self._server.stop()

    @property
    def sent(self) -> list[TwilioRequest]:
        """The creates Twilio answered with 201 (messages it took)."""
        return [r for r in self.requests if r.path.endswith("/Messages.json") and r.answered == 201]

    def _record(self, request: Request, form: dict[str, str]) -> TwilioRequest:
        user, password = _basic(request.headers.get("authorization", ""))
        record = TwilioRequest(request.method, request.url.path, form, user, password)
        self.requests.append(record)
        return record

    def _authorised(self, request: Request, record: TwilioRequest) -> bool:
        return (
            request.path_params["sid"] == self.account_sid
            and record.user == self.account_sid
            and record.password == self.auth_token
        )

    async def _create(self, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        record = self._record(request, form)
        answer = await self._create_answer(request, record)
        record.answered = answer.status_code
        return answer

    async def _create_answer(self, request: Request, record: TwilioRequest) -> Response:
        if not self._authorised(request, record):
            return _error(401, 20003, "Authenticate")
        waiting = self.by_number.get(record.form.get("To", ""))
        mode = waiting.pop(0) if waiting else self.queue.pop(0) if self.queue else self.mode
        if mode == "hang":
            await self._release.wait()
            return Response(status_code=504)
        if mode in ("429", "500", "503"):
            return _error(
                int(mode), 20429 if mode == "429" else 20500, "Too Many Requests" if mode == "429" else "Internal error"
            )
        if mode == "html503":
            return Response(b"<html><body>Service Unavailable</body></html>", status_code=503, media_type="text/html")
        form = record.form
        to = form.get("To", "")
        if not to or not form.get("From") or not form.get("Body"):
            return _error(400, 21604 if not to else 21602, "A 'To' phone number and a 'Body' are required.")
        if to in self.invalid:
            return _error(400, 21211, f"The 'To' number {to} is not a valid phone number.")
        if to in self.unsubscribed:
            return _error(400, 21610, "Attempt to send to unsubscribed recipient")
        sid = "SM" + secrets.token_hex(16)
        if mode == "malformed":
            self.messages[sid] = {"sid": sid}
            return Response(b'{"sid": "SM', status_code=201, media_type="application/json")
        now = formatdate(usegmt=True)
        resource = {
            "account_sid": self.account_sid,
            "api_version": "2010-04-01",
            "body": form["Body"],
            "date_created": now,
            "date_sent": None,
            "date_updated": now,
            "direction": "outbound-api",
            "error_code": None,
            "error_message": None,
            "from": form["From"],
            "messaging_service_sid": None,
            "num_media": "0",
            "num_segments": "1",
            "price": None,
            "price_unit": "USD",
            "sid": sid,
            "status": "queued",
            "subresource_uris": {"media": f"{API}/Accounts/{self.account_sid}/Messages/{sid}/Media.json"},
            "to": to,
            "uri": f"{API}/Accounts/{self.account_sid}/Messages/{sid}.json",
        }
        self.messages[sid] = resource
        if form.get("StatusCallback"):
            self.callbacks[sid] = form["StatusCallback"]
        return Response(orjson.dumps(resource), status_code=201, media_type="application/json")

    async def _account(self, request: Request) -> Response:
        record = self._record(request, {})
        if not self._authorised(request, record):
            answer = _error(401, 20003, "Authenticate")
        else:
            answer = Response(
                orjson.dumps({"sid": self.account_sid, "friendly_name": "Test", "status": "active", "type": "Full"}),
                media_type="application/json",
            )
        record.answered = answer.status_code
        return answer

    # -- what Twilio posts to the service ----------------------------------------------------------
    async def callback(
        self, sid: str, status: str, *, url: str | None = None, error_code: str | None = None, token: str | None = None
    ) -> httpx.Response:
        """Twilio's status callback for message ``sid`` (``sent``, ``delivered``, ``undelivered``, ``failed``)
        to its StatusCallback (or ``url``), signed with ``token`` (default: the account's)."""
        message = self.messages.get(sid, {"to": "+15005550006", "from": "+15005550001"})
        fields = [
            ("AccountSid", self.account_sid),
            ("ApiVersion", "2010-04-01"),
            ("From", str(message.get("from", ""))),
            ("MessageSid", sid),
            ("MessageStatus", status),
            ("SmsSid", sid),
            ("SmsStatus", status),
            ("To", str(message.get("to", ""))),
        ]
        if error_code is not None:
            fields.append(("ErrorCode", error_code))
        return await self.post_signed(url or self.callbacks[sid], fields, token=token)

    async def inbound(
        self, url: str, *, from_: str, body: str, to: str = "+15005550001", token: str | None = None
    ) -> httpx.Response:
        """An incoming text, as Twilio posts it to the number's messaging webhook."""
        sid = "SM" + secrets.token_hex(16)
        fields = [
            ("AccountSid", self.account_sid),
            ("ApiVersion", "2010-04-01"),
            ("Body", body),
            ("From", from_),
            ("FromCountry", "US"),
            ("MessageSid", sid),
            ("NumMedia", "0"),
            ("NumSegments", "1"),
            ("SmsMessageSid", sid),
            ("SmsSid", sid),
            ("SmsStatus", "received"),
            ("To", to),
        ]
        return await self.post_signed(url, fields, token=token)

    async def post_signed(self, url: str, fields: list[tuple[str, str]], *, token: str | None = None) -> httpx.Response:
        signature = twilio_signature(self.auth_token if token is None else token, url, fields)
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(
                url,
                data=dict(fields),
                headers={"X-Twilio-Signature": signature, "User-Agent": "TwilioProxy/1.1"},
            )


def _error(status: int, code: int, message: str) -> Response:
    body = {
        "code": code,
        "message": message,
        "more_info": f"https://www.twilio.com/docs/errors/{code}",
        "status": status,
    }
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def _basic(header: str) -> tuple[str | None, str | None]:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None, None
    try:
        user, _, password = base64.b64decode(value).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None, None
    return user, password
