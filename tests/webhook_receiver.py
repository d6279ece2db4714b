"""A client's webhook receiver for the tests: a real HTTP server that records every delivery and
checks its Standard Webhooks signatures against the secrets it is told.

``answers``: HTTP statuses to answer in turn (then ``status``, 200 by default); ``hang``: accept
the request and never answer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from transfers.partners.signing import sign


@dataclass
class Delivery:
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    signed_by: list[str]  # the secrets (of ``receiver.secrets``) whose v1 signature is present
    peer: tuple[str, int] | None = None  # the sender's address and port: one port, one kept-alive connection


@dataclass
class Receiver:
    secrets: list[str] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    status: int = 200
    hang: bool = False
    delay: float = 0.0  # seconds before answering
    received: list[Delivery] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/hook", self._hook, methods=["POST"])])

    @property
    def hook_url(self) -> str:
        return f"{self.url}/hook"

    async def _hook(self, request: Request) -> Response:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        signatures = headers.get("webhook-signature", "").split()
        signed_by = [
            secret
            for secret in self.secrets
            if sign(secret, headers.get("webhook-id", ""), int(headers.get("webhook-timestamp", "0")), raw)
            in signatures
        ]
        peer = (request.client.host, request.client.port) if request.client else None
        self.received.append(Delivery(headers, orjson.loads(raw), raw, signed_by, peer))
        if self.hang:
            await asyncio.sleep(3600)
        if self.delay:
            await asyncio.sleep(self.delay)
        status = self.answers.pop(0) if self.answers else self.status
        return Response(b"", status_code=status)

    def of_type(self, prefix: str = "booking.") -> list[Delivery]:
        return [d for d in self.received if d.body["type"].startswith(prefix)]
