"""A test partner: a real HTTP server that records every request and misbehaves on demand.

Modes (``partner.mode``): ``ok``; ``slow`` (sleeps ``delay`` then answers); ``hang`` (never
answers); ``status`` (answers ``status_code``); ``invalid_json``; ``error_body``
(``{"status":"Error"}``); ``huge_body``; ``redirect``; ``garbage`` (answers ``garbage`` as JSON).
``create_status`` chooses what a create answers (PENDING, APPROVED, DECLINED); ``amend_status``
what an ``AMENDED`` update answers (Success, Error). ``create_message`` adds a ``message`` to the
create answer (a long valid body); ``status_body`` is what ``status`` mode answers (a refusal's body).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from transfers.partners.signing import verify


def default_vehicles(price: str = "40.00", currency: str = "EUR") -> list[dict[str, Any]]:
    return [
        {
            "id": "car-1",
            "make": "Toyota",
            "model": "Corolla",
            "type": "SEDAN",
            "price": price,
            "currency": currency,
            "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
            "extras": [
                {"id": "child-seat", "name": "Child seat", "price": "5.00", "pricing_type": "PER_ITEM"},
                {"id": "meet", "name": "Meet & greet", "price": "12.50", "pricing_type": "PER_BOOKING"},
            ],
        },
        {
            "id": "van-1",
            "make": "Mercedes",
            "model": "Vito",
            "type": "MINIVAN",
            "price": "70.00",
            "currency": currency,
            "capacity": {"passengers": 7, "suitcases": 7, "small_bags": 7},
            "extras": [],
        },
    ]


@dataclass
class Recorded:
    method: str
    path: str
    raw_path: str
    headers: dict[str, str]
    body: Any
    signature_ok: bool
    started: float
    finished: float = 0.0


@dataclass
class FakePartner:
    name: str = "Test partner"
    mode: str = "ok"
    delay: float = 0.0
    status_code: int = 500
    garbage: Any = None
    vehicles: list[dict[str, Any]] = field(default_factory=default_vehicles)
    distance_km: int | None = None
    create_status: str = "PENDING"
    info_status: str = "PENDING"
    driver: dict[str, str] | None = None
    signing_secret: str = ""
    token: str = ""
    requests: list[Recorded] = field(default_factory=list)
    url: str = ""
    # What an ``"status": "AMENDED"`` update answers (docs/rules/cancellation.md):
    # ``{"status": amend_status, "message": ...}``
    amend_status: str = "Success"
    amend_message: str = "ok"
    create_message: str | None = None
    status_body: bytes = b'{"status":"Error","message":"down"}'
    # docs/rules/return-trips.md#create: answer DECLINED to the create of this leg of a return trip
    decline_leg: int | None = None
    # ... or fail (HTTP 503) the create of this leg: a partner down for one leg only
    down_for_leg: int | None = None

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/booking/search", self._handle, methods=["POST"]),
                Route("/booking/create", self._handle, methods=["POST"]),
                Route("/booking/info/{reservation_no:path}", self._handle, methods=["GET"]),
                Route("/booking/update", self._handle, methods=["PUT"]),
            ]
        )

    def calls(self, path_prefix: str) -> list[Recorded]:
        return [r for r in self.requests if r.path.startswith(path_prefix)]

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        record = Recorded(
            method=request.method,
            path=request.url.path,
            raw_path=request.scope.get("raw_path", b"").decode(),
            headers=headers,
            body=orjson.loads(raw) if raw else None,
            signature_ok=bool(self.signing_secret)
            and verify(self.signing_secret, headers, raw)
            and headers.get("authorization") == f"Bearer {self.token}",
            started=time.monotonic(),
        )
        self.requests.append(record)
        try:
            return await self._answer(request, record)
        finally:
            record.finished = time.monotonic()

    async def _answer(self, request: Request, record: Recorded) -> Response:
        mode = self.mode
        if mode == "hang":
            await asyncio.sleep(3600)
        if mode == "slow":
            await asyncio.sleep(self.delay)
        if mode == "status":
            return Response(self.status_body, status_code=self.status_code, media_type="application/json")
        if mode == "invalid_json":
            return Response(b"<html>oops</html>", media_type="text/html")
        if mode == "error_body":
            return _json({"status": "Error", "message": "refused"})
        if mode == "huge_body":
            return Response(b'{"vehicles":[' + b'{"x":1},' * 400_000 + b"{}]}", media_type="application/json")
        if mode == "redirect":
            return Response(status_code=302, headers={"location": "http://169.254.169.254/latest"})
        if mode == "garbage":
            return _json(self.garbage)
        path = record.path
        if path == "/booking/search":
            return _json({"distance_km": self.distance_km, "vehicles": self.vehicles})
        if path == "/booking/create":
            leg = (record.body.get("trip") or {}).get("leg") if isinstance(record.body, dict) else None
            if leg is not None and leg == self.down_for_leg:
                return Response(b'{"status":"Error","message":"down"}', status_code=503, media_type="application/json")
            if leg is not None and leg == self.decline_leg:
                return _json({"status": "DECLINED", "message": "no car that evening"})
            answer: dict[str, Any] = {"reservation_no": f"P-{len(self.requests)}", "status": self.create_status}
            if self.create_status == "APPROVED" and self.driver:
                answer["driver_info"] = self.driver
                answer["meeting_point"] = "Arrivals, by the pharmacy"
            if self.create_message is not None:
                answer["message"] = self.create_message
            return _json(answer)
        if path.startswith("/booking/info/"):
            info: dict[str, Any] = {"status": self.info_status}
            if self.info_status == "APPROVED":
                info["driver_info"] = self.driver or {
                    "name": "Sam Driver",
                    "phone": "+447400123458",
                    "plate": "AB12 CDE",
                }
                info["meeting_point"] = "Arrivals hall"
            return _json(info)
        if isinstance(record.body, dict) and record.body.get("status") == "AMENDED":
            return _json({"status": self.amend_status, "message": self.amend_message})
        return _json({"status": "Success", "message": "ok"})


def _json(value: Any) -> Response:
    return Response(orjson.dumps(value), media_type="application/json")
