"""The nominatim geocoder against a real HTTP server on loopback that answers in Nominatim's
published ``/search?format=jsonv2`` shape, and fails the ways a real one does: 429, 5xx, an answer
slower than the deadline, an empty list, and bodies that are not the documented array."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.servers import serving
from transfers.geo import GeocoderUnavailable, NominatimGeocoder

ZURICH = {
    "place_id": 170352,
    "licence": "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
    "osm_type": "relation",
    "osm_id": "1682248",
    "lat": "47.3744489",
    "lon": "8.5410422",
    "category": "boundary",
    "type": "administrative",
    "place_rank": 12,
    "importance": 0.76,
    "addresstype": "city",
    "name": "Zürich",
    "display_name": "Zürich, Bezirk Zürich, Zürich, Schweiz/Suisse/Svizzera/Svizra",
    "address": {"city": "Zürich", "state": "Zürich", "country": "Schweiz", "country_code": "ch"},
    "boundingbox": ["47.3202187", "47.4346662", "8.4480061", "8.6254413"],
}
AIRPORT = {
    **ZURICH,
    "place_id": 1,
    "lat": "47.4582165",
    "lon": "8.5554755",
    "category": "aeroway",
    "type": "aerodrome",
    "addresstype": "aeroway",
    "name": "Flughafen Zürich",
    "display_name": "Flughafen Zürich, Kloten, Schweiz",
}


@dataclass
class FakeNominatim:
    """Answers by the query text: ``mode`` overrides it for the failure cases."""

    mode: str = "ok"
    seen: list[Request] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def search(self, request: Request) -> Response:
        self.seen.append(request)
        if self.mode == "429":
            return JSONResponse({"error": "Too many requests"}, status_code=429)
        if self.mode == "503":
            return Response("<html>Service Unavailable</html>", status_code=503, media_type="text/html")
        if self.mode == "slow":
            await self.release.wait()  # released by the fixture at teardown; the client gives up first
            return JSONResponse([])
        if self.mode == "garbage":
            return Response(b"\xff\xfe<not json", media_type="application/json")
        if self.mode == "object":
            return JSONResponse({"error": {"code": 400, "message": "Nothing to search for."}})
        if self.mode == "odd-items":
            items = [42, {"lat": "north", "lon": "8.5", "name": "x"}, {"lat": "91", "lon": "0", "name": "y"}, ZURICH]
            return JSONResponse(items)
        if self.mode == "redirect":
            return Response(status_code=302, headers={"Location": "http://127.0.0.1:9/elsewhere"})
        if self.mode == "huge":
            return JSONResponse([ZURICH] * 2000)
        query = request.query_params.get("q", "")
        return JSONResponse([ZURICH, AIRPORT] if "rich" in query.lower() else [])


@pytest.fixture
async def nominatim() -> AsyncIterator[tuple[FakeNominatim, NominatimGeocoder]]:
    fake = FakeNominatim()
    app = Starlette(routes=[Route("/search", fake.search)])
    async with serving(app) as server:
        geocoder = NominatimGeocoder(server.url + "/", timeout_seconds=0.5)
        try:
            yield fake, geocoder
        finally:
            fake.release.set()
            await geocoder.aclose()


async def test_places_in_the_published_shape(nominatim: tuple[FakeNominatim, NominatimGeocoder]) -> None:
    fake, geocoder = nominatim
    places = await geocoder.search("Zürich", near=(47.46, 8.55), limit=5)
    assert [(p.name, p.country, p.kind) for p in places] == [
        ("Zürich", "CH", "city"),
        ("Flughafen Zürich", "CH", "airport"),
    ]
    assert places[0].lat == pytest.approx(47.3744489)
    assert places[0].lng == pytest.approx(8.5410422)
    asked = fake.seen[-1]
    assert asked.url.path == "/search"
    assert asked.query_params["q"] == "Zürich"
    assert asked.query_params["format"] == "jsonv2"
    assert asked.query_params["limit"] == "5"
    assert asked.query_params["addressdetails"] == "1"
    west, north, east, south = map(float, asked.query_params["viewbox"].split(","))
    assert west < 8.55 < east and south < 47.46 < north
    assert asked.headers["user-agent"].startswith("transfers-geocoder/")


async def test_an_empty_list_is_no_places(nominatim: tuple[FakeNominatim, NominatimGeocoder]) -> None:
    _, geocoder = nominatim
    assert await geocoder.search("nowhere at all") == []


async def test_blank_text_does_not_call_the_server(nominatim: tuple[FakeNominatim, NominatimGeocoder]) -> None:
    fake, geocoder = nominatim
    assert await geocoder.search("  \x00 ") == []
    assert fake.seen == []


async def test_the_query_is_cleaned_and_bounded(nominatim: tuple[FakeNominatim, NominatimGeocoder]) -> None:
    fake, geocoder = nominatim
    await geocoder.search("Zü\x07rich   " + "x" * 10_000)
    assert len(fake.seen[-1].query_params["q"]) == 200
    assert "\x07" not in fake.seen[-1].query_params["q"]


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        ("429", "too many requests"),
        ("503", "HTTP 503"),
        ("slow", "did not answer in time"),
        ("garbage", "not JSON"),
        ("object", "not a list"),
        ("redirect", "HTTP 302"),
        ("huge", "too much"),
    ],
)
async def test_failures_are_unavailable_in_words(
    nominatim: tuple[FakeNominatim, NominatimGeocoder], mode: str, words: str
) -> None:
    fake, geocoder = nominatim
    fake.mode = mode
    with pytest.raises(GeocoderUnavailable, match=words):
        await geocoder.search("Zürich")
    assert len(fake.seen) == 1  # one attempt: a 429 is not hammered, a redirect not followed


async def test_items_without_usable_coordinates_are_skipped(nominatim: tuple[FakeNominatim, NominatimGeocoder]) -> None:
    fake, geocoder = nominatim
    fake.mode = "odd-items"
    assert [p.name for p in await geocoder.search("Zürich")] == ["Zürich"]


async def test_a_server_that_is_not_there() -> None:
    geocoder = NominatimGeocoder("http://127.0.0.1:9", timeout_seconds=0.5)
    try:
        with pytest.raises(GeocoderUnavailable, match="cannot be reached"):
            await geocoder.search("Zürich")
    finally:
        await geocoder.aclose()
