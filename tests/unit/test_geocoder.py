"""The builtin geocoder (transfers/geo/builtin.py): names folded (accents, case, scripts), ranked
near the airport, airports by code and by name; bad input answers nothing rather than failing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from transfers.config import Settings
from transfers.geo import BuiltinGeocoder, NominatimGeocoder, Place, fold, from_settings

HEATHROW = (51.4706, -0.4619)
TORONTO = (43.6777, -79.6248)


@pytest.mark.parametrize(
    ("typed", "folded"),
    [
        ("Zürich", "zurich"),
        ("ZÜRICH", "zurich"),
        ("São  Paulo", "sao paulo"),
        ("Straße", "strasse"),
        ("Saint-Étienne", "saint etienne"),
        ("L'Aquila", "l aquila"),
        ("Москва", "москва"),
    ],
)
def test_fold_ignores_accents_case_and_separators(typed: str, folded: str) -> None:
    assert fold(typed) == folded


async def search(text: str, near: tuple[float, float] | None = HEATHROW, limit: int = 8) -> list[Place]:
    return await BuiltinGeocoder().search(text, near=near, limit=limit)


@pytest.mark.parametrize("typed", ["Zürich", "zurich", "ZURICH", "  zürich "])
async def test_zurich_with_or_without_its_accent(typed: str) -> None:
    first = (await search(typed, near=None))[0]
    assert (first.name, first.country, first.kind) == ("Zürich", "CH", "city")
    assert first.lat == pytest.approx(47.37, abs=0.05)
    assert first.lng == pytest.approx(8.54, abs=0.05)


async def test_other_languages_names_find_the_city() -> None:
    assert (await search("München"))[0].name == "Munich"
    assert (await search("Москва"))[0].country == "RU"


async def test_near_decides_between_places_of_the_same_name() -> None:
    assert (await search("London", near=HEATHROW))[0].country == "GB"
    assert (await search("London", near=TORONTO))[0].country == "CA"


async def test_airports_by_code_and_by_name() -> None:
    by_code = (await search("zrh"))[0]
    assert (by_code.kind, by_code.code, by_code.country) == ("airport", "ZRH", "CH")
    assert by_code.label == f"{by_code.name} (ZRH), CH"
    by_name = (await search("Heathrow"))[0]
    assert (by_name.kind, by_name.code) == ("airport", "LHR")


async def test_a_city_before_its_airports_for_a_city_name() -> None:
    places = await search("Munich")
    assert places[0].kind == "city"
    assert any(p.code == "MUC" for p in places)


async def test_prefix_matches_nearest_first_and_bounded() -> None:
    places = await search("wind", limit=3)
    assert len(places) == 3
    assert places[0].name == "Windsor" and places[0].country == "GB"


@pytest.mark.parametrize("typed", ["", "   ", "x" * 10_000, "\x00\x01", "zzzzqqqq", "💥"])
async def test_nothing_found_is_an_empty_list(typed: str) -> None:
    assert await search(typed) == []


async def test_limit_zero_answers_nothing() -> None:
    assert await search("Paris", limit=0) == []


def test_the_setting_selects_the_geocoder() -> None:
    assert isinstance(from_settings(Settings()), BuiltinGeocoder)
    chosen = from_settings(Settings(geocoder="nominatim", geocoder_url="http://127.0.0.1:9/"))
    assert isinstance(chosen, NominatimGeocoder)
    assert chosen.base_url == "http://127.0.0.1:9"


def test_nominatim_without_a_url_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="GEOCODER=nominatim needs"):
        Settings(geocoder="nominatim")
    with pytest.raises(ValidationError, match="http"):
        Settings(geocoder="nominatim", geocoder_url="ftp://example.org")
