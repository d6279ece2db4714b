"""The traveller's page in the traveller's language (docs/rules/messages.md#page-language) over real HTTP, on
the session's database: ``?lang=``, then the booking's passenger language, then ``Accept-Language`` (by its
q-values), then the agency's default language, then English; ``<html lang>``, the dates and times as the
language writes them, the language links; what the page never shows stays away in every language;
``/t/{token}.json`` stays in English."""

from __future__ import annotations

import re
from datetime import datetime
from html import unescape

import httpx
import pytest
from sqlalchemy import insert, update

from tests.conftest import ClientFactory
from tests.hosted.conftest import HostedFactory
from tests.ride_pages.helpers import MEETING_POINT, Ride, accept, book_hosted, services_of
from tests.ride_pages.test_traveller_page import forbidden
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings
from transfers.db.tables.messages import client_message_settings
from transfers.i18n.dates import clock as clock_text
from transfers.i18n.dates import long_date
from transfers.i18n.languages import LANGUAGES


@pytest.fixture
async def ride(
    http: httpx.AsyncClient, make_client: ClientFactory, make_hosted: HostedFactory, db: Database, service: LiveServer
) -> Ride:
    _, key = await make_client()
    partner_id = await make_hosted(airports=("GLA",), name="Polyglot Cars")
    booked = await book_hosted(http, key, "Polyglot Cars", db, partner_id)
    await accept(services_of(service), booked)
    return booked


async def page(http: httpx.AsyncClient, ride: Ride, query: str = "", accept_language: str | None = None) -> str:
    headers = {} if accept_language is None else {"Accept-Language": accept_language}
    answer = await http.get(f"/t/{ride.token}{query}", headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.text


def spoken(html: str) -> str:
    found = re.search(r'<html lang="([a-z]+)">', html)
    assert found is not None
    return found.group(1)


async def set_passenger_language(db: Database, ride: Ride, tag: str | None) -> None:
    async with db.write() as conn:
        await conn.execute(
            update(bookings).where(bookings.c.reservation_no == ride.reservation_no).values(passenger_language=tag)
        )


async def set_default_language(db: Database, clock: ShiftedClock, ride: Ride, language: str) -> None:
    async with db.write() as conn:
        client_id = (
            (await conn.execute(bookings.select().where(bookings.c.reservation_no == ride.reservation_no)))
            .one()
            .client_id
        )
        await conn.execute(
            insert(client_message_settings).values(
                client_id=client_id, channels=[], default_language=language, updated_at=clock.now()
            )
        )


async def test_english_by_default(http: httpx.AsyncClient, ride: Ride) -> None:
    html = await page(http, ride)
    assert spoken(html) == "en"
    assert "Your driver has not set off yet" in html and "Confirmed" in html and "Meeting point" in html


async def test_each_language_speaks_its_words_dates_and_times(http: httpx.AsyncClient, ride: Ride) -> None:
    facts = (await http.get(f"/t/{ride.token}.json")).json()
    local = datetime.fromisoformat(facts["pickup"]["local_time"])
    expected = {
        "de": ("Ihr Fahrer ist noch nicht losgefahren", "Bestätigt", "Treffpunkt"),
        "fr": ("Votre chauffeur n'est pas encore parti", "Confirmé", "Point de rendez-vous"),
        "es": ("Su conductor aún no ha salido", "Confirmado", "Punto de encuentro"),
        "it": ("Il suo autista non è ancora partito", "Confermato", "Punto d'incontro"),
        "pt": ("O seu motorista ainda não partiu", "Confirmado", "Ponto de encontro"),
        "nl": ("Uw chauffeur is nog niet vertrokken", "Bevestigd", "Ontmoetingspunt"),
    }
    for language, words in expected.items():
        html = await page(http, ride, f"?lang={language}")
        assert spoken(html) == language
        html = unescape(html)
        for word in words:
            assert word in html, (language, word)
        assert long_date(local, language) in html, (language, long_date(local, language))
        assert clock_text(local, language) in html
        assert "Your driver has not set off yet" not in html
        assert MEETING_POINT in html  # the agency's own words are shown as written
        for secret in forbidden(ride):
            assert secret not in html, (language, secret)
        # the other languages as plain links; this one named, not linked
        for other in LANGUAGES:
            if other != language:
                assert f'href="?lang={other}"' in html
        assert f'href="?lang={language}"' not in html


async def test_the_order_lang_booking_browser_client_english(
    http: httpx.AsyncClient, ride: Ride, db: Database, clock: ShiftedClock
) -> None:
    browser_french = "fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7"
    assert spoken(await page(http, ride, accept_language=browser_french)) == "fr"
    assert spoken(await page(http, ride, accept_language="sv-SE, nl;q=0.5, en;q=0.3")) == "nl"  # by q, spoken only
    assert spoken(await page(http, ride, accept_language="en;q=0.2, it;q=0.9")) == "it"
    await set_default_language(db, clock, ride, "de")
    assert spoken(await page(http, ride)) == "de"  # the agency's default, nothing else asked
    assert spoken(await page(http, ride, accept_language=browser_french)) == "fr"  # the browser before the agency
    await set_passenger_language(db, ride, "pt-BR")
    assert spoken(await page(http, ride, accept_language=browser_french)) == "pt"  # the booking before the browser
    assert spoken(await page(http, ride, "?lang=es", accept_language=browser_french)) == "es"  # ?lang= first
    assert spoken(await page(http, ride, "?lang=sv")) == "pt"  # unsupported: the next in the order
    assert spoken(await page(http, ride, "?lang=%3Cscript%3E")) == "pt"  # malformed: likewise
    await set_passenger_language(db, ride, "zh-Hant")
    assert spoken(await page(http, ride)) == "de"


async def test_the_json_stays_in_english(http: httpx.AsyncClient, ride: Ride) -> None:
    facts = (await http.get(f"/t/{ride.token}.json?lang=de", headers={"Accept-Language": "de"})).json()
    assert facts["stage_text"] == "Your driver has not set off yet" and facts["status_text"] == "Confirmed"


async def test_unknown_and_closed_pages_in_the_language_asked(http: httpx.AsyncClient, ride: Ride) -> None:
    unknown = await http.get("/t/" + "x" * 22, headers={"Accept-Language": "es-ES,es;q=0.9"})
    assert unknown.status_code == 404
    assert spoken(unknown.text) == "es" and "Traslado no encontrado" in unknown.text
    asked = await http.get("/t/" + "x" * 22 + "?lang=nl")
    assert spoken(asked.text) == "nl" and "Transfer niet gevonden" in asked.text
