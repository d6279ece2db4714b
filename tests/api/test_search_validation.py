"""Every search validation code (docs/rules/errors.md#search-codes) with ugly inputs, and the table order of checks."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import ClientFactory, bearer
from tests.helpers import ONE_LINE_ONLY, REFUSED_CHARACTERS, future_local, search_body, with_path

SEARCH = "/api/v1/booking-api/search"
DROP = object()  # marker: remove the field
POINT = {"type": "POINT", "lat": 51.5, "lng": -0.12, "name": "Somewhere"}
AIRPORT = {"type": "AIRPORT", "iata_code": "LHR"}

CASES: list[tuple[str, Any, int]] = [
    ("pickup_location", DROP, 1300),
    ("pickup_location", None, 1300),
    ("pickup_location", "LHR", 1300),
    ("pickup_location", [], 1300),
    ("pickup_location.type", DROP, 1301),
    ("pickup_location.type", None, 1301),
    ("pickup_location.type", "", 1301),
    ("pickup_location.type", "airport", 1302),
    ("pickup_location.type", "ADDRESS", 1302),
    ("pickup_location.type", 1, 1302),
    ("pickup_location.type", True, 1302),
    ("pickup_location.type", " AIRPORT", 1302),
    ("dropoff_location", DROP, 1303),
    ("dropoff_location", None, 1303),
    ("dropoff_location", 3.5, 1303),
    ("dropoff_location.type", DROP, 1304),
    ("dropoff_location.type", None, 1304),
    ("dropoff_location.type", "Point", 1305),
    ("dropoff_location.type", ["POINT"], 1305),
    ("pickup_location.iata_code", DROP, 1306),
    ("pickup_location.iata_code", None, 1306),
    ("pickup_location.iata_code", "", 1306),
    ("pickup_location.iata_code", "ZZZ", 1307),
    ("pickup_location.iata_code", "LHRX", 1307),
    ("pickup_location.iata_code", 123, 1307),
    ("pickup_location.iata_code", "L1R", 1307),
    ("pickup_location.iata_code", "ЛХР", 1307),
    ("pickup_location.iata_code", True, 1307),
    ("pickup_location.iata_code", "x" * 100_00, 1307),
    ("dropoff_location.lat", DROP, 1313),
    ("dropoff_location.lat", None, 1313),
    ("dropoff_location.lat", "51.5", 1313),
    ("dropoff_location.lat", True, 1313),
    ("dropoff_location.lat", 90.0001, 1313),
    ("dropoff_location.lat", -91, 1313),
    ("dropoff_location.lng", DROP, 1314),
    ("dropoff_location.lng", False, 1314),
    ("dropoff_location.lng", 180.5, 1314),
    ("dropoff_location.lng", {"v": 1}, 1314),
    ("dropoff_location.name", DROP, 1315),
    ("dropoff_location.name", None, 1315),
    ("dropoff_location.name", "", 1315),
    ("dropoff_location.name", "   ", 1315),
    ("dropoff_location.name", 42, 1315),
    ("dropoff_location.name", "x" * 300, 1315),
    ("dropoff_location.name", "bad\x00name", 1315),
    # docs/rules/booking.md#text: the address a partner's driver reads (each class of character)
    *[("dropoff_location.name", value, 1315) for value in REFUSED_CHARACTERS.values()],
    *[("dropoff_location.name", value, 1315) for value in ONE_LINE_ONLY.values()],
    ("pickup_datetime", DROP, 1316),
    ("pickup_datetime", None, 1316),
    ("pickup_datetime", "", 1316),
    ("pickup_datetime", "tomorrow", 1317),
    ("pickup_datetime", 1764600000, 1317),
    ("pickup_datetime", True, 1317),
    ("pickup_datetime", "2026-13-01 10:00", 1317),
    ("pickup_datetime", "2026-12-01", 1317),
    ("pickup_datetime", "01/12/2026 10:00", 1317),
    ("pickup_datetime", "2020-01-01 10:00", 1317),
    ("pickup_datetime", future_local(days=400), 1317),
    ("pickup_datetime", future_local(days=0, hour=0, minute=0), 1317),
    ("travelers", DROP, 1318),
    ("travelers", None, 1318),
    ("travelers", 2, 1318),
    ("travelers", [2], 1318),
    ("travelers.adult", DROP, 1319),
    ("travelers.adult", None, 1319),
    ("travelers.adult", 0, 1320),
    ("travelers.adult", -1, 1320),
    ("travelers.adult", "2", 1320),
    ("travelers.adult", True, 1320),
    ("travelers.adult", 1.5, 1320),
    ("travelers.adult", 51, 1320),
    ("travelers.adult", 10**30, 1320),
    ("travelers.children", -1, 1321),
    ("travelers.children", "0", 1321),
    ("travelers.children", False, 1321),
    ("travelers.children", 2.0, 1321),
    ("travelers.children", 51, 1321),
    ("travelers.infant", -1, 1322),
    ("travelers.infant", True, 1322),
    ("travelers.infant", [], 1322),
]


@pytest.fixture(scope="module")
async def key(make_client: ClientFactory) -> str:
    return (await make_client())[1]


async def _search(http: httpx.AsyncClient, key: str, body: Any) -> httpx.Response:
    return await http.post(SEARCH, json=body, headers=bearer(key))


@pytest.mark.parametrize(("path", "value", "code"), CASES, ids=[f"{c[2]}-{c[0]}-{i}" for i, c in enumerate(CASES)])
async def test_validation_code(http: httpx.AsyncClient, key: str, path: str, value: Any, code: int) -> None:
    body = with_path(search_body(), path, value, delete=value is DROP)
    response = await _search(http, key, body)
    assert response.status_code == 422, response.text
    assert response.json() == {"status": "Error", "code": code, "message": _name(code)}


@pytest.mark.parametrize(
    ("path", "value", "code"),
    [
        ("pickup_location.lat", None, 1310),
        ("pickup_location.lng", "x", 1311),
        ("pickup_location.name", "", 1312),
        ("pickup_location.name", "Hotel\u202eInn", 1312),
        ("pickup_location.name", "Hotel\nInn", 1312),
        ("dropoff_location.iata_code", None, 1308),
        ("dropoff_location.iata_code", "QQQ", 1309),
    ],
)
async def test_codes_of_the_reversed_direction(
    http: httpx.AsyncClient, key: str, path: str, value: Any, code: int
) -> None:
    body = search_body(pickup_location=dict(POINT), dropoff_location=dict(AIRPORT))
    response = await _search(http, key, with_path(body, path, value))
    assert response.json()["code"] == code


async def test_two_points_or_two_airports_need_an_airport(http: httpx.AsyncClient, key: str) -> None:
    both_points = await _search(http, key, search_body(pickup_location=dict(POINT)))
    assert both_points.json()["code"] == 1323
    both_airports = await _search(http, key, search_body(dropoff_location={"type": "AIRPORT", "iata_code": "CDG"}))
    assert both_airports.json()["code"] == 1323


async def test_first_failing_check_in_table_order_wins(http: httpx.AsyncClient, key: str) -> None:
    everything_wrong = {"pickup_location": None, "dropoff_location": None, "pickup_datetime": None, "travelers": None}
    assert (await _search(http, key, everything_wrong)).json()["code"] == 1300
    body = search_body(pickup_location={"type": "AIRPORT"}, pickup_datetime="never", travelers={"adult": 0})
    assert (await _search(http, key, body)).json()["code"] == 1306
    body = search_body(pickup_datetime="never", travelers={"adult": 0})
    assert (await _search(http, key, body)).json()["code"] == 1317
    body = search_body(pickup_location=dict(POINT), travelers={"adult": 0})
    assert (await _search(http, key, body)).json()["code"] == 1320  # 1323 is the last check


async def test_the_word_code_is_not_accepted_for_iata(http: httpx.AsyncClient, key: str) -> None:
    body = search_body(pickup_location={"type": "AIRPORT", "code": "LHR"})
    assert (await _search(http, key, body)).json()["code"] == 1306


async def test_non_object_bodies_are_malformed(http: httpx.AsyncClient, key: str) -> None:
    for raw in (b"[]", b"null", b"42", b"{not json", b'{"a": NaN}', "\xff\xfe".encode("latin-1")):
        response = await http.post(SEARCH, content=raw, headers={**bearer(key), "Content-Type": "application/json"})
        assert response.status_code == 400, raw
        assert response.json()["code"] == "MALFORMED_JSON"


async def test_search_needs_a_key(http: httpx.AsyncClient) -> None:
    response = await http.post(SEARCH, json=search_body())
    assert response.status_code == 401


def _name(code: int) -> str:
    from transfers.errors import Code

    return Code(code).name
