"""The yardstick's plain fan-out: the search as a competent engineer writes it in an afternoon.

``POST /search`` validates the body with a small pydantic model, asks every partner of the pickup
airport at once through one shared aiohttp ``ClientSession`` (kept-alive connections,
``ClientTimeout`` 1 s), parses the answers, marks every price up 10 % (``Decimal``, half-up), sorts
by price and answers JSON with a uuid4 search id. No database, keys, rate limit, request signing or
stored search: what is left of the service's search once everything it promises beyond the
fan-out is taken away. ``bench/yardstick.py`` loads it in the same run as the service, against the
same partner process (docs/operations/performance.md#yardstick).

The partners come from ``BENCH_FANOUT_PARTNERS``, JSON: ``{"LHR": ["http://127.0.0.1:9101", ...]}``.

    uvicorn --factory bench.fanout:create_app --loop uvloop --http httptools --workers 1 --no-access-log
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal

import aiohttp
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

MARKUP = Decimal("1.10")
CENT = Decimal("0.01")
TIMEOUT = aiohttp.ClientTimeout(total=1.0)


class Airport(BaseModel):
    type: Literal["AIRPORT"]
    iata_code: str = Field(min_length=3, max_length=3)


class Point(BaseModel):
    type: Literal["POINT"]
    lat: float = Field(ge=-90, le=90)
    lng: float = Field(ge=-180, le=180)
    name: str


class Travelers(BaseModel):
    adult: int = Field(ge=1)
    children: int = Field(ge=0)
    infant: int = Field(ge=0)


class SearchRequest(BaseModel):
    pickup_datetime: str
    pickup_location: Airport
    dropoff_location: Point
    travelers: Travelers


def sell_price(net: str) -> Decimal:
    return (Decimal(net) * MARKUP).quantize(CENT, rounding=ROUND_HALF_UP)


async def ask(session: aiohttp.ClientSession, base_url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """One partner's vehicles, priced; a partner that fails or is late offers nothing."""
    try:
        async with session.post(base_url + "/booking/search", json=body) as answer:
            if answer.status != 200:
                return []
            parsed = await answer.json()
    except (TimeoutError, aiohttp.ClientError, ValueError):
        return []
    offers = []
    for vehicle in parsed.get("vehicles", []):
        offers.append(
            {
                "partner": base_url,
                "id": vehicle["id"],
                "make": vehicle["make"],
                "model": vehicle["model"],
                "type": vehicle["type"],
                "price": sell_price(vehicle["price"]),
                "currency": vehicle["currency"],
            }
        )
    return offers


def create_app() -> FastAPI:
    partners: dict[str, list[str]] = json.loads(os.environ.get("BENCH_FANOUT_PARTNERS", "{}"))
    session: aiohttp.ClientSession | None = None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        nonlocal session
        session = aiohttp.ClientSession(timeout=TIMEOUT)
        try:
            yield
        finally:
            await session.close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/search")
    async def search(query: SearchRequest) -> dict[str, Any]:
        assert session is not None
        urls = partners.get(query.pickup_location.iata_code, [])
        if not urls:
            raise HTTPException(404, "no partner serves this airport")
        body = {
            "booking_type": "ONEWAY",
            "from": {"type": "AIRPORT", "iata_code": query.pickup_location.iata_code},
            "to": query.dropoff_location.model_dump(),
            "date": query.pickup_datetime,
            "passengers": query.travelers.model_dump(),
        }
        answers = await asyncio.gather(*(ask(session, url, body) for url in urls))
        offers = sorted((offer for answer in answers for offer in answer), key=lambda offer: offer["price"])
        for offer in offers:
            offer["price"] = str(offer["price"])
        return {"search_id": str(uuid.uuid4()), "vehicles": offers}

    return app
