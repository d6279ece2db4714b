"""``Book`` with ``TRANSFERS_GEOCODER=nominatim`` (docs/rules/agency-portal.md#geocoder): a service whose
geocoder is a Nominatim-shaped server on loopback (``FakeNominatim`` of the adapter's own tests).
The place typed is searched there near the airport, the matches offered as choices without
JavaScript and as JSON for the suggestions; when that server fails (503), the page says so beside
the destination and asks for coordinates, and nothing is searched or written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from tests.agency.conftest import AgencyBrowser, MakeAgency, sign_in
from tests.agency.test_agency_book import search_form
from tests.conftest import make_settings
from tests.integration.test_geocoder_nominatim import FakeNominatim
from tests.servers import serving
from transfers.app import create_app
from transfers.clock import ShiftedClock


@pytest.fixture
async def nominatim_portal(
    database_url: str, workdir: Path, clock: ShiftedClock
) -> AsyncIterator[tuple[FakeNominatim, httpx.AsyncClient]]:
    fake = FakeNominatim()
    async with serving(Starlette(routes=[Route("/search", fake.search)])) as server:
        settings = make_settings(database_url, workdir, geocoder="nominatim", geocoder_url=server.url)
        app = create_app(settings, clock=clock, configure_logs=False)
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://agency") as http:
                yield fake, http
        finally:
            fake.release.set()
            await app.state.services.db.dispose()


async def test_the_destination_comes_from_the_nominatim_server(
    nominatim_portal: tuple[FakeNominatim, httpx.AsyncClient], make_agency: MakeAgency, clock: ShiftedClock
) -> None:
    fake, http = nominatim_portal
    agency = await make_agency()
    web = AgencyBrowser(http)
    assert (await sign_in(web, agency.agent.email, agency.agent.password)).status_code == 303
    await web.get("/agency/book")
    answer = await web.post("/agency/book", search_form(clock, airport="ZRH", lat="", lng="", place="Zürich"))
    # No partner serves ZRH here: the offers are none, but the place was found and used.
    assert answer.status_code == 200, answer.text[:800]
    assert "to Zürich, CH" in answer.text and 'name="pick"' in answer.text  # the airport offered as a choice
    asked = fake.seen[-1]
    assert asked.query_params["q"] == "Zürich" and "viewbox" in asked.query_params
    suggestions = await web.get("/agency/book/places", params={"q": "Zürich", "airport": "ZRH"})
    assert [p["country"] for p in suggestions.json()["places"]] == ["CH", "CH"]
    fake.mode = "503"
    down = await web.post("/agency/book", search_form(clock, airport="ZRH", lat="", lng="", place="Zürich"))
    assert down.status_code == 422
    error = down.text.split('id="place-error">')[1].split("</span>")[0]
    assert "Enter the coordinates instead." in error
    failing = await web.get("/agency/book/places", params={"q": "Zürich", "airport": "ZRH"})
    assert failing.json()["places"] == [] and failing.json()["problem"]
