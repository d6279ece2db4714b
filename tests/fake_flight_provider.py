"""A local server answering in AeroDataBox's published shape (``GET /flights/number/{number}/{date}``: an array
of flights with ``departure``/``arrival`` movements whose times are ``{"utc", "local"}``; docs/rules/flights.md
#aerodatabox), with the real one's failures chosen by ``mode``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

SCHEDULED = datetime(2026, 3, 29, 6, 30, tzinfo=UTC)  # 07:30 BST at Heathrow, the day the clocks went forward


def _time(utc: str, local: str) -> dict[str, str]:
    return {"utc": utc, "local": local}


def flight(
    status: str = "EnRoute",
    *,
    arrival_iata: str = "LHR",
    scheduled: str = "2026-03-29 06:30Z",
    revised: str | None = "2026-03-29 07:15Z",
    departed: str = "2026-03-29 04:10Z",
    runway: str | None = None,
) -> dict[str, Any]:
    """One flight as AeroDataBox publishes it (``FlightContract``: what the adapter reads, and some more)."""
    arrival: dict[str, Any] = {
        "airport": {"icao": "EGLL", "iata": arrival_iata, "name": "London Heathrow", "timeZone": "Europe/London"},
        "scheduledTime": _time(scheduled, "2026-03-29 07:30+01:00"),
        "terminal": "5",
        "gate": "A10",
        "baggageBelt": "7",
        "quality": ["Basic", "Live"],
    }
    if revised is not None:
        arrival["revisedTime"] = _time(revised, "2026-03-29 08:15+01:00")
        arrival["predictedTime"] = _time(revised, "2026-03-29 08:15+01:00")
    if runway is not None:
        arrival["runwayTime"] = _time(runway, "2026-03-29 08:20+01:00")
    return {
        "greatCircleDistance": {"meter": 1_522_999.16, "km": 1522.999},
        "departure": {
            "airport": {"icao": "LEMD", "iata": "MAD", "name": "Madrid Barajas", "timeZone": "Europe/Madrid"},
            "scheduledTime": _time("2026-03-29 04:00Z", "2026-03-29 06:00+02:00"),
            "revisedTime": _time(departed, "2026-03-29 06:10+02:00"),
            "terminal": "4S",
            "quality": ["Basic", "Live"],
        },
        "arrival": arrival,
        "lastUpdatedUtc": "2026-03-29 05:01Z",
        "number": "BA 459",
        "callSign": "BAW459",
        "status": status,
        "codeshareStatus": "IsOperator",
        "isCargo": False,
        "aircraft": {"reg": "G-EUYA", "modeS": "4007F2", "model": "Airbus A320"},
        "airline": {"name": "British Airways", "iata": "BA", "icao": "BAW"},
    }


@dataclass
class FakeAeroDataBox:
    mode: str = "ok"
    seen: list[Request] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def by_number(self, request: Request) -> Response:
        self.seen.append(request)
        mode = self.mode
        if request.headers.get("x-magicapi-key") != "k-123":
            return JSONResponse({"message": "You are not subscribed to this API."}, status_code=401)
        if mode == "429":
            return JSONResponse({"message": "Too many requests"}, status_code=429, headers={"Retry-After": "17"})
        if mode == "500":
            return Response("upstream error", status_code=500)
        if mode == "503":
            return Response("<html>Service Unavailable</html>", status_code=503, media_type="text/html")
        if mode in ("slow", "silence"):
            await self.release.wait()  # released at teardown; the client gives up first
            return JSONResponse([])
        if mode == "drip":

            async def drip() -> AsyncIterator[bytes]:
                for _ in range(200):
                    yield b" "
                    await asyncio.sleep(0.05)

            return StreamingResponse(drip(), media_type="application/json")
        if mode == "empty":
            return JSONResponse([])
        if mode == "204":
            return Response(status_code=204)
        if mode == "404":
            return JSONResponse({"message": "Flight not found"}, status_code=404)
        if mode == "garbage":
            return Response(b"\xff\xfe<not json", media_type="application/json")
        if mode == "object":
            return JSONResponse({"message": "oops"})
        if mode == "bad-time":
            broken = flight()
            broken["arrival"]["revisedTime"] = {"utc": "tomorrow-ish", "local": "?"}
            return JSONResponse([broken])
        if mode == "huge":
            body = b"[" + b" " * (10 * 1024 * 1024) + b"]"
            return Response(body, media_type="application/json")
        if mode == "before-departure":
            return JSONResponse([flight(revised="2026-03-29 03:00Z")])
        if mode == "two":
            # the same number twice on one date: the morning flight (ours) and an evening one
            evening = flight("Expected", scheduled="2026-03-29 18:30Z", revised="2026-03-29 20:00Z")
            return JSONResponse([evening, flight()])
        if mode == "two-legs":
            first_leg = flight(arrival_iata="MAD", scheduled="2026-03-29 06:20Z", revised="2026-03-29 09:00Z")
            return JSONResponse([first_leg, flight()])
        if mode == "landed":
            return JSONResponse([flight("Arrived", revised="2026-03-29 07:10Z", runway="2026-03-29 07:05Z")])
        if mode in ("Canceled", "Diverted", "CanceledUncertain", "Unknown", "Weird"):
            return JSONResponse([flight(mode, revised=None)])
        return JSONResponse([flight()])
