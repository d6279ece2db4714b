"""A search answer's bytes, judged as the fan-out judges them (``PartnerClient.judge_answer`` parses with
orjson, ``fanout.validated`` checks the contract): pinned at the edges where pydantic's own JSON
parser (``model_validate_json``, measured and not adopted, docs/operations/performance-history.md#search-sixth-pass) and
orjson differ, so that a faster path must keep the same answers, the same "answer is not JSON" and the same
"answer breaks the contract: <loc> <msg>" texts."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from transfers.partners.client import PartnerClient, PartnerEndpoint, PreparedCall
from transfers.partners.wire import WireSearchAnswer
from transfers.search.fanout import SEARCH_PATH, validated

PARTNER = PartnerEndpoint(partner_id=1, name="edges", base_url="http://x", outbound_token="t", signing_secret="s")

V = (
    '{"id":"v1","make":"A","model":"B","type":"SEDAN","price":10.5,"currency":"EUR",'
    '"capacity":{"passengers":3,"suitcases":1,"small_bags":1}}'
)


def vehicle(old: str, new: str) -> bytes:
    return b'{"vehicles":[' + V.replace(old, new, 1).encode() + b"]}"


def with_extra(extra: str) -> bytes:
    return b'{"vehicles":[' + V[:-1].encode() + b"," + extra.encode() + b"}]}"


CASES: dict[str, bytes] = {
    "valid": vehicle("", ""),
    "valid, distance": b'{"distance_km":25,"vehicles":[]}',
    "NaN distance": b'{"distance_km":NaN,"vehicles":[]}',
    "NaN in an ignored field": b'{"x":NaN,"vehicles":[]}',
    "Infinity in an ignored field": b'{"x":Infinity,"vehicles":[]}',
    "-Infinity in an ignored field": b'{"x":-Infinity,"vehicles":[]}',
    "NaN price": vehicle("10.5", "NaN"),
    "1e400 in an ignored field": b'{"x":1e400,"vehicles":[]}',
    "1E+400 in an ignored field": b'{"x":1E+400,"vehicles":[]}',
    "400 digits in an ignored field": b'{"x":' + b"1" * 400 + b',"vehicles":[]}',
    "1 and 300 zeros e10": b'{"x":1' + b"0" * 300 + b'e10,"vehicles":[]}',
    "1.8e308": b'{"x":1.8e308,"vehicles":[]}',
    "1e308": b'{"x":1e308,"vehicles":[]}',
    "1e-400": b'{"x":1e-400,"vehicles":[]}',
    "1e400 price": vehicle("10.5", "1e400"),
    "duplicate keys, last valid": b'{"vehicles":[1],"vehicles":[]}',
    "duplicate keys, last invalid": b'{"vehicles":[],"vehicles":[1]}',
    "integer past 2**64 ignored": b'{"x":123456789012345678901234567890,"vehicles":[]}',
    "2**64 - 1 ignored": b'{"x":18446744073709551615,"vehicles":[]}',
    "2**64 ignored": b'{"x":18446744073709551616,"vehicles":[]}',
    "huge distance": b'{"distance_km":123456789012345678901234567890,"vehicles":[]}',
    "huge integer id": vehicle('"v1"', "12345678901234567890123"),
    "2**64 id": vehicle('"v1"', "18446744073709551616"),
    "integer id": vehicle('"v1"', "7"),
    "float id": vehicle('"v1"', "7.5"),
    "boolean id": vehicle('"v1"', "true"),
    "UTF-8 BOM": b'\xef\xbb\xbf{"vehicles":[]}',
    "trailing bytes": b'{"vehicles":[]} x',
    "trailing NUL": b'{"vehicles":[]}\x00',
    "trailing whitespace": b'{"vehicles":[]} \n',
    "leading whitespace": b' \r\n\t{"vehicles":[]}',
    "two documents": b'{"vehicles":[]}{}',
    "invalid UTF-8 in a text": b'{"x":"\xff","vehicles":[]}',
    "invalid UTF-8 in a key": b'{"\xff":1,"vehicles":[]}',
    "lone surrogate escape": b'{"x":"\\ud800","vehicles":[]}',
    "surrogate pair escape": vehicle('"A"', '"\\ud83d\\ude97"'),
    "NUL escape in make": vehicle('"A"', '"\\u0000"'),
    "control character in a text": b'{"x":"a\x01b","vehicles":[]}',
    "top-level array": b"[]",
    "top-level array of an answer": b'[{"vehicles":[]}]',
    "top-level string": b'"x"',
    "top-level number": b"1",
    "top-level null": b"null",
    "top-level true": b"true",
    "empty body": b"",
    "whitespace only": b"  ",
    "distance as a string": b'{"distance_km":"12","vehicles":[]}',
    "distance as a float": b'{"distance_km":12.0,"vehicles":[]}',
    "distance as a boolean": b'{"distance_km":true,"vehicles":[]}',
    "negative zero distance": b'{"distance_km":-0,"vehicles":[]}',
    "passengers as a string": vehicle('"passengers":3', '"passengers":"3"'),
    "passengers as a float": vehicle('"passengers":3', '"passengers":3.0'),
    "make as a number": vehicle('"A"', "5"),
    "price as a string": vehicle("10.5", '"10.50"'),
    "price as an integer": vehicle("10.5", "10"),
    "price with three places": vehicle("10.5", "10.123"),
    "price with an exponent": vehicle("10.5", "1e1"),
    "price 0.1e1": vehicle("10.5", "0.1e1"),
    "price with 20 decimals": vehicle("10.5", "10.50000000000000000001"),
    "price 19.99": vehicle("10.5", "19.99"),
    "price 0.3": vehicle("10.5", "0.3"),
    "negative price": vehicle("10.5", "-1"),
    "price past a float's digits": vehicle("10.5", "12345678901234567890123"),
    "vehicles as an object": b'{"vehicles":{}}',
    "vehicles as a string": b'{"vehicles":"ab"}',
    "capacity as a list": vehicle('{"passengers":3,"suitcases":1,"small_bags":1}', "[1]"),
    "capacity as a string": vehicle('{"passengers":3,"suitcases":1,"small_bags":1}', '"x"'),
    "extras as an object": with_extra('"extras":{"a":1}'),
    "extras": with_extra('"extras":[{"id":1,"name":"Seat","price":"5.00","pricing_type":"PER_ITEM"}]'),
    "bad policy": with_extra('"cancellation_policy":{"x":1}'),
    "policy as a string": with_extra('"cancellation_policy":"x"'),
    "policy": with_extra('"cancellation_policy":[{"hours_before_pickup":24,"fee_percent":50}]'),
    "policy with NaN": with_extra('"cancellation_policy":[{"hours_before_pickup":24,"fee_percent":NaN}]'),
    "policy with 1e400 hours": with_extra('"cancellation_policy":[{"hours_before_pickup":1e400,"fee_percent":5}]'),
    "lower-case currency": vehicle('"EUR"', '"eur"'),
    "nothing": b"{}",
    "escaped key": b'{"vehicl\\u0065s":[]}',
    "nested 300 deep": b"[" * 300 + b"]" * 300,
    "nested 300 deep in an ignored field": b'{"x":' + b"[" * 300 + b"]" * 300 + b',"vehicles":[]}',
    "unknown fields": with_extra('"seats":{"a":[1,2,{"b":null}]},"colour":"red"'),
}


def old_judgement(raw: bytes) -> tuple[str, Any]:
    """What the fan-out did before ``PartnerClient`` parsed with orjson, then the model."""
    parsed = None
    if raw:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return "not JSON", None
    try:
        return "ok", WireSearchAnswer.model_validate(parsed).model_dump()
    except ValidationError as exc:
        return "breach", f"answer breaks the contract: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"


def new_judgement(raw: bytes) -> tuple[str, Any]:
    call = PreparedCall(PARTNER, "POST", SEARCH_PATH, "http://x" + SEARCH_PATH, b"{}", True, ("", "", ""))
    result = PartnerClient.judge_answer(call, 200, raw, 1.0)
    if not result.ok:
        assert (result.outcome, result.error) == ("invalid", "answer is not JSON")
        return "not JSON", None
    answer, reason = validated(result.body, result.raw)
    if answer is not None:
        assert reason is None
        return "ok", answer.model_dump()
    return "breach", reason


@pytest.mark.parametrize("name", CASES)
def test_judged_as_orjson_then_the_model(name: str) -> None:
    assert new_judgement(CASES[name]) == old_judgement(CASES[name])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("NaN in an ignored field", ("not JSON", None)),
        ("1e400 in an ignored field", ("not JSON", None)),
        ("UTF-8 BOM", ("not JSON", None)),
        ("trailing bytes", ("not JSON", None)),
        ("invalid UTF-8 in a text", ("not JSON", None)),
        ("lone surrogate escape", ("not JSON", None)),
        ("whitespace only", ("not JSON", None)),
        (
            "top-level array",
            (
                "breach",
                "answer breaks the contract: () Input should be a valid dictionary or instance of WireSearchAnswer",
            ),
        ),
        (
            "empty body",
            (
                "breach",
                "answer breaks the contract: () Input should be a valid dictionary or instance of WireSearchAnswer",
            ),
        ),
        ("vehicles as an object", ("breach", "answer breaks the contract: ('vehicles',) Input should be a valid list")),
        (
            "huge integer id",
            ("breach", "answer breaks the contract: ('vehicles', 0, 'id') Input should be a valid string"),
        ),
        ("huge distance", ("breach", "answer breaks the contract: ('distance_km',) Input should be a valid integer")),
    ],
)
def test_the_texts_kept(name: str, expected: tuple[str, Any]) -> None:
    """Where pydantic's parser would say otherwise ("Invalid JSON: ...", "Input should be an object",
    "a valid array", an id taken from a big integer, infinity ignored)."""
    assert new_judgement(CASES[name]) == expected
