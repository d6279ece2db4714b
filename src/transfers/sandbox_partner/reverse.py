"""The sandbox partner's calls to the service's reverse API.

Retries are bounded on purpose: a partner that retried forever would hide a broken service, and
the service does not depend on these calls arriving (it reconciles stale bookings through
``GET /booking/info``). Transient failures (connection errors, timeouts, 429, 5xx) are retried
with growing, jittered delays; any other answer is final.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import structlog

log = structlog.get_logger("transfers.sandbox_partner")

UPDATE_PATH = "/api/v1/reverse/booking/update"
EVENTS_PATH = "/api/v1/reverse/booking/events"
POSITIONS_PATH = "/api/v1/reverse/booking/positions"


class ReverseApi:
    def __init__(
        self, service_url: str, api_key: str, *, retry_delays: tuple[float, ...], timeout_seconds: float
    ) -> None:
        self._base = service_url.rstrip("/")
        self._url = self._base + UPDATE_PATH
        self._api_key = api_key
        self._delays = retry_delays
        self._timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        # Created on first use, so the app also works mounted inside another app, whose lifespan
        # never runs ours; closed by aclose().
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout),
                follow_redirects=False,
                trust_env=False,
                headers={"User-Agent": "transfers-sandbox-partner/0.1", "Accept": "application/json"},
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def update(self, body: dict[str, Any]) -> bool:
        """PUT the status update; True once the service accepted it."""
        return await self.send("PUT", self._url, body)

    async def event(self, body: dict[str, Any]) -> bool:
        """POST a driver event (docs/rules/ride.md#events); True once the service accepted it."""
        return await self.send("POST", self._base + EVENTS_PATH, body)

    async def positions(self, body: dict[str, Any]) -> bool:
        """POST a batch of positions (docs/rules/ride.md#positions); True once the service accepted it."""
        return await self.send("POST", self._base + POSITIONS_PATH, body)

    async def send(self, method: str, url: str, body: dict[str, Any]) -> bool:
        reservation_no = body.get("reservation_no")
        attempts = len(self._delays) + 1
        for attempt in range(1, attempts + 1):
            try:
                response = await self._http().request(
                    method, url, json=body, headers={"Authorization": f"Bearer {self._api_key}"}
                )
            except httpx.HTTPError as exc:
                outcome = type(exc).__name__
            else:
                if response.is_success:
                    log.info(
                        "sandbox_reverse_update_sent",
                        reservation_no=reservation_no,
                        status=body.get("status"),
                        attempt=attempt,
                    )
                    return True
                outcome = f"HTTP {response.status_code}"
                if response.status_code != 429 and response.status_code < 500:
                    log.warning(
                        "sandbox_reverse_update_refused",
                        reservation_no=reservation_no,
                        status=body.get("status"),
                        http_status=response.status_code,
                        answer=response.text[:500],
                    )
                    return False
            if attempt == attempts:
                break
            delay = self._delays[attempt - 1] * random.uniform(0.8, 1.2)
            log.warning(
                "sandbox_reverse_update_retry",
                reservation_no=reservation_no,
                outcome=outcome,
                attempt=attempt,
                retry_in_s=round(delay, 2),
            )
            await asyncio.sleep(delay)
        log.warning(
            "sandbox_reverse_update_gave_up",
            reservation_no=reservation_no,
            status=body.get("status"),
            attempts=attempts,
        )
        return False
