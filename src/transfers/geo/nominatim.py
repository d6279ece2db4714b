"""The ``nominatim`` geocoder (``TRANSFERS_GEOCODER=nominatim``, ``TRANSFERS_GEOCODER_URL``): any
server speaking Nominatim's published search API (``GET {url}/search?q=...&format=jsonv2``, an
array of places whose ``lat``/``lon`` are decimal strings, with ``address.country_code`` when
``addressdetails=1``). Self-hosted Nominatim, or a provider with a compatible endpoint.

Why this shape of client: the answer feeds a page a person is waiting on, so one attempt with a
short timeout, no redirects (the configured URL is the only host ever called), a bounded body, and
every failure (429, 5xx, timeout, a body that is not the documented array) turned into
``GeocoderUnavailable`` in words; the page then offers coordinates. A 429 is not retried: the
server asked us to slow down, and the person can search again.
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx

from transfers.geo.places import DEFAULT_LIMIT, GeocoderUnavailable, Place, PlaceKind, clean_query

MAX_BODY_BYTES = 512 * 1024
MAX_LIMIT = 40
USER_AGENT = "transfers-geocoder/1 (+https://github.com/transfers)"
NEAR_DEGREES = 1.5  # the viewbox around ``near`` that Nominatim prefers (not a bound)
_AIRPORT_TYPES = frozenset({"aerodrome", "airport"})
_CITY_TYPES = frozenset({"city", "town", "village", "hamlet", "municipality", "suburb"})


class NominatimGeocoder:
    """``Geocoder`` over HTTP. ``client`` is injectable for tests; by default one is made and kept."""

    name = "nominatim"

    def __init__(self, base_url: str, *, timeout_seconds: float = 3.0, client: httpx.AsyncClient | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._timeout = timeout_seconds
        self._client = client

    def start_warming(self) -> None:
        """Nothing to prepare: the server holds the index."""

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._timeout),
                follow_redirects=False,
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _params(self, query: str, near: tuple[float, float] | None, limit: int) -> dict[str, str]:
        params = {"q": query, "format": "jsonv2", "addressdetails": "1", "limit": str(min(limit, MAX_LIMIT))}
        if near is not None:
            lat, lng = near
            params["viewbox"] = ",".join(
                f"{v:.4f}"
                for v in (
                    max(lng - NEAR_DEGREES, -180),
                    min(lat + NEAR_DEGREES, 90),
                    min(lng + NEAR_DEGREES, 180),
                    max(lat - NEAR_DEGREES, -90),
                )
            )
        return params

    async def search(
        self, text: str, *, near: tuple[float, float] | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[Place]:
        query = clean_query(text)
        if not query or limit < 1:
            return []
        body = await self._get(self._params(query, near, limit))
        return parse_answer(body)[:limit]

    async def _get(self, params: dict[str, str]) -> bytes:
        try:
            async with self._http().stream("GET", f"{self.base_url}/search", params=params) as answer:
                if answer.status_code == 429:
                    raise GeocoderUnavailable("The place search is busy (too many requests): try again in a minute.")
                if answer.status_code >= 400:
                    raise GeocoderUnavailable(f"The place search failed (HTTP {answer.status_code}).")
                if answer.status_code != 200:
                    raise GeocoderUnavailable(f"The place search answered HTTP {answer.status_code}, not results.")
                chunks: list[bytes] = []
                size = 0
                async for chunk in answer.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        raise GeocoderUnavailable("The place search answered too much to read.")
                    chunks.append(chunk)
                return b"".join(chunks)
        except httpx.TimeoutException as exc:
            raise GeocoderUnavailable("The place search did not answer in time.") from exc
        except httpx.HTTPError as exc:
            raise GeocoderUnavailable("The place search cannot be reached.") from exc


def _kind(item: dict[str, Any]) -> PlaceKind:
    kinds = {str(item.get(key) or "") for key in ("type", "addresstype")}
    if kinds & _AIRPORT_TYPES:
        return "airport"
    return "city" if kinds & _CITY_TYPES else "place"


def _coordinate(value: Any, bound: float) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and -bound <= number <= bound else None


def parse_answer(body: bytes) -> list[Place]:
    """The places of a Nominatim search answer (``json`` or ``jsonv2``); GeocoderUnavailable when
    the body is not an array of objects. An item without usable coordinates is skipped, not fatal."""
    try:
        items = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise GeocoderUnavailable("The place search answered something that is not JSON.") from exc
    if not isinstance(items, list):
        raise GeocoderUnavailable("The place search answered JSON that is not a list of places.")
    places: list[Place] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        lat, lng = _coordinate(item.get("lat"), 90), _coordinate(item.get("lon"), 180)
        display = str(item.get("display_name") or "").strip()
        name = str(item.get("name") or "").strip() or display.split(",")[0].strip()
        if lat is None or lng is None or not name:
            continue
        address = item.get("address") if isinstance(item.get("address"), dict) else {}
        country = str((address or {}).get("country_code") or "").upper()[:2]
        places.append(Place(name[:200], country, lat, lng, _kind(item)))
    return places
