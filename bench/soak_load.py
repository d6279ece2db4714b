"""The soak's client side (``bench/soak.py``): agencies and partners calling the service over loopback
HTTP at a steady rate, every attempt recorded (operation, time, status, error code, which API).

A request that changes something carries an ``Idempotency-Key`` and is sent again with that key, on
the other API process, after no answer (a killed process), a 503 or a 409 ``IDEMPOTENCY_KEY_IN_USE``,
until it gets a final answer or its deadline passes: what a well-behaved client does, and what lets
the soak say of every key whether it was answered ``Success``. Reads are tried once more on the
other API after no answer, and not after a 503.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx

API = "/api/v1/booking-api"
REVERSE = "/api/v1/reverse"
AIRPORT_TZ = ZoneInfo("Europe/London")  # every airport of the soak is a London one
CITY = {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square, London"}
PASSENGER = {"name": "Ada", "surname": "Lovelace", "phone": "+447911123456", "email": "ada@example.com"}
DRIVER = {"name": "Sam Driver", "phone": "+447400123456", "plate": "LX71 ABC"}
SETTLE_SECONDS = 90.0


@dataclass
class Attempt:
    op: str
    sent: float  # seconds since the soak's start
    took: float
    status: int | str  # HTTP status, or the transport error's name
    code: str | None
    api: int


@dataclass
class Booked:
    """One create (single, return pair, ride) as the client saw it."""

    key: str
    client: int
    kind: str  # oneway | return | ride | delayed | hosted
    partner: str
    flight: str
    status: int | None = None  # the final answer's HTTP status
    answer: dict[str, Any] = field(default_factory=dict)
    reservation_nos: list[str] = field(default_factory=list)
    totals: list[str] = field(default_factory=list)
    cancels: dict[str, tuple[int | None, dict[str, Any]]] = field(default_factory=dict)
    amends: dict[str, int | None] = field(default_factory=dict)
    approved: set[str] = field(default_factory=set)
    incident: str | None = None
    pickup: datetime | None = None
    currency: str = "EUR"  # the search's, hence the wallet debited
    approved_ok: set[str] = field(default_factory=set)  # approvals its partner was answered 200 for


class Http:
    """Two API processes, one client each; every attempt recorded."""

    def __init__(self, urls: list[str], started: float, max_attempts: int) -> None:
        self.https = [
            httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(20.0), limits=httpx.Limits(max_connections=64))
            for url in urls
        ]
        self.started = started
        self.attempts: list[Attempt] = []
        self.max_attempts = max_attempts
        self.turn = 0

    async def aclose(self) -> None:
        for http in self.https:
            await http.aclose()

    @property
    def exhausted(self) -> bool:
        return len(self.attempts) >= self.max_attempts

    async def once(self, op: str, api: int, method: str, path: str, **kwargs: Any) -> httpx.Response | None:
        sent = time.monotonic()
        try:
            response = await self.https[api].request(method, path, **kwargs)
        except httpx.TransportError as exc:
            self.attempts.append(
                Attempt(op, sent - self.started, time.monotonic() - sent, type(exc).__name__, None, api)
            )
            return None
        code = _code(response) if response.status_code >= 400 else None
        self.attempts.append(Attempt(op, sent - self.started, time.monotonic() - sent, response.status_code, code, api))
        return response

    async def call(
        self,
        op: str,
        method: str,
        path: str,
        *,
        key: str,
        idem: str | None = None,
        settle: bool = False,
        **kwargs: Any,
    ) -> httpx.Response | None:
        headers = {"Authorization": f"Bearer {key}"}
        if idem:
            headers["Idempotency-Key"] = idem
        self.turn += 1
        api = self.turn % len(self.https)
        deadline = time.monotonic() + SETTLE_SECONDS
        tries = 0
        while True:
            tries += 1
            response = await self.once(op, api, method, path, headers=headers, **kwargs)
            retry = response is None or (
                settle and (response.status_code == 503 or _code(response) == "IDEMPOTENCY_KEY_IN_USE")
            )
            if not retry or self.exhausted:
                return response
            if not settle and tries >= 2:
                return response
            if time.monotonic() > deadline:
                return response
            api = (api + 1) % len(self.https)
            await asyncio.sleep(0.3 if response is None else 1.0)


def _code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    code = body.get("code") or (body.get("error") or {}).get("code")
    return code if isinstance(code, str) else None


def local(moment: datetime) -> str:
    return moment.astimezone(AIRPORT_TZ).strftime("%Y-%m-%d %H:%M")


def search_body(
    airport: str, pickup: datetime, *, back: datetime | None = None, currency: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "pickup_datetime": local(pickup),
        "pickup_location": {"type": "AIRPORT", "iata_code": airport},
        "dropoff_location": CITY,
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }
    if back is not None:
        body["return_datetime"] = local(back)
    if currency is not None:
        body["currency"] = currency
    return body


def far_pickup(rng: random.Random) -> datetime:
    """Days ahead, on the hour or half hour in the airport's day."""
    day = datetime.now(UTC) + timedelta(days=rng.randint(3, 60))
    return day.astimezone(AIRPORT_TZ).replace(
        hour=rng.randint(7, 20), minute=rng.choice((0, 30)), second=0, microsecond=0
    )


def soon_pickup() -> datetime:
    """The next whole minute at least 90 s away (the soak's minimum lead is 60 s)."""
    moment = datetime.now(UTC) + timedelta(seconds=90)
    return (moment + timedelta(minutes=1)).replace(second=0, microsecond=0)


def pick(vehicles: list[dict[str, Any]], company: str | None, rng: random.Random) -> dict[str, Any] | None:
    fitting = [v for v in vehicles if company is None or v.get("company") == company]
    return rng.choice(fitting) if fitting else None


def new_key(kind: str) -> str:
    return f"soak-{kind}-{uuid.uuid4().hex[:12]}"
