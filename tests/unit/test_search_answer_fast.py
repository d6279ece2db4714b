"""``wire.NUL_FREE_SEARCH_ANSWER`` (the fan-out's validator for an answer whose bytes hold no ``\\u0000``)
against ``WireSearchAnswer`` itself: for every value orjson can give a field, the same
instances or the same errors (type, place, text, input, context), so the judgement and the logged
reason cannot tell them apart. A NUL is the one thing it does not check: ``fanout.validated`` sends
those answers to the model, which refuses them as before."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from transfers.partners.wire import NUL_FREE_SEARCH_ANSWER, WireSearchAnswer, WireVehicle
from transfers.search.fanout import validated

VEHICLE: dict[str, Any] = {
    "id": "car-1",
    "make": "Toyota",
    "model": "Corolla",
    "type": "SEDAN",
    "price": "40.00",
    "currency": "EUR",
    "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
    "extras": [{"id": "seat", "name": "Child seat", "price": "5.00", "pricing_type": "PER_ITEM"}],
}
ODD: list[Any] = [
    None, True, False, 0, -1, 7, 2**63 - 1, -(2**63), 2**64 - 1, 7.0, 7.5, -0.0, 1e300, "", " ", "x", "x" * 200,
    "x" * 201, "7", "é🚗", "a\nb", [], [1], {}, {"a": 1},
]  # fmt: skip
PRICES: list[Any] = [
    "40.00", "40", "40.0", "40.001", "0", "0.00", "0.01", "-1", "1e1", " 1", "1,00", "999999999.99", "1000000",
    "1000000.01", "٣", 40, 40.5, 40.25, 40.125, 0, -3, 1000000, 1000001, 0.1, 1e-7, 12345678901234567890,
]  # fmt: skip
POLICIES: list[Any] = [
    None, [], [{"hours_before_pickup": 24, "fee_percent": 50}], [{"hours_before_pickup": 24, "fee_percent": 150}],
    [{"hours_before_pickup": 24}], {"x": 1}, "x", 0,
]  # fmt: skip


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"{type(value).__name__} of {len(value)}"


def answers() -> Iterator[tuple[str, Any]]:
    yield "valid", {"distance_km": 25, "vehicles": [VEHICLE, VEHICLE]}
    for value in ODD:
        yield f"answer {shown(value)}", value
        yield f"vehicles {shown(value)}", {"vehicles": value}
        yield f"distance_km {shown(value)}", {"distance_km": value, "vehicles": []}
        yield f"vehicle {shown(value)}", {"vehicles": [value]}
        yield f"extra {shown(value)}", {"vehicles": [dict(VEHICLE, extras=[value])]}
    for field in ("id", "make", "model", "type", "price", "currency", "capacity", "extras", "cancellation_policy"):
        missing = {k: v for k, v in VEHICLE.items() if k != field}
        yield f"vehicle without {field}", {"vehicles": [missing]}
        for value in ODD + (PRICES if field == "price" else POLICIES if field == "cancellation_policy" else []):
            yield f"vehicle {field}={shown(value)}", {"vehicles": [dict(VEHICLE, **{field: value})]}
    for field in ("id", "name", "price", "pricing_type"):
        for value in ODD + (PRICES if field == "price" else []):
            extra = dict(VEHICLE["extras"][0], **{field: value})
            yield f"extra {field}={shown(value)}", {"vehicles": [dict(VEHICLE, extras=[extra])]}
    for field in ("passengers", "suitcases", "small_bags"):
        for value in [*ODD, 100, 101]:
            capacity = dict(VEHICLE["capacity"], **{field: value})
            yield f"capacity {field}={shown(value)}", {"vehicles": [dict(VEHICLE, capacity=capacity)]}
    yield "21 extras", {"vehicles": [dict(VEHICLE, extras=VEHICLE["extras"] * 21)]}
    yield "many errors", {"vehicles": [{"id": 1.5, "make": "", "price": True, "capacity": {}}, 3, {}]}


CASES = dict(answers())


def judged(validate: Any, body: Any) -> tuple[str, Any]:
    try:
        answer = validate(copy.deepcopy(body))
    except ValidationError as exc:
        return "refused", [(e["type"], e["loc"], e["msg"], e["input"], repr(e.get("ctx"))) for e in exc.errors()]
    prices = [(str(v.price), [str(e.price) for e in v.extras]) for v in answer.vehicles]
    return "ok", (type(answer), [type(v) for v in answer.vehicles], answer.model_dump(), prices)


@pytest.mark.parametrize("name", CASES)
def test_the_same_as_the_model(name: str) -> None:
    body = CASES[name]
    assert judged(NUL_FREE_SEARCH_ANSWER.validate_python, body) == judged(WireSearchAnswer.model_validate, body)


def test_the_cases_reach_both_outcomes_and_the_fast_paths() -> None:
    outcomes = {name: judged(WireSearchAnswer.model_validate, body)[0] for name, body in CASES.items()}
    assert outcomes["valid"] == outcomes["vehicle id=7"] == outcomes["vehicle price=40"] == "ok"
    assert outcomes["vehicle cancellation_policy=None"] == "ok"
    assert outcomes["vehicle id=True"] == outcomes["vehicle price=True"] == outcomes["vehicle price='-1'"] == "refused"
    answer = NUL_FREE_SEARCH_ANSWER.validate_python({"vehicles": [dict(VEHICLE, id=7, price=40)]})
    assert isinstance(answer.vehicles[0], WireVehicle)
    assert (answer.vehicles[0].id, answer.vehicles[0].price) == ("7", Decimal("40.00"))


def test_it_does_not_check_nul() -> None:
    """What the byte check in ``validated`` stands for (and proof that the nested models are not
    pydantic-core's prebuilt ones, which would run the model's callbacks)."""
    body = {"vehicles": [dict(VEHICLE, make="a\x00b")]}
    assert NUL_FREE_SEARCH_ANSWER.validate_python(body).vehicles[0].make == "a\x00b"
    with pytest.raises(ValidationError):
        WireSearchAnswer.model_validate(body)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"vehicles":[' + orjson.dumps(dict(VEHICLE, make="a\x00b")) + b"]}",
        b'{"vehicles":[' + orjson.dumps(dict(VEHICLE, id="\x00")) + b"]}",
        b'{"vehicles":[' + orjson.dumps(dict(VEHICLE, extras=[dict(VEHICLE["extras"][0], name="\x00")])) + b"]}",
    ],
)
def test_a_nul_is_refused_by_the_model(raw: bytes) -> None:
    assert b"\\u0000" in raw
    answer, reason = validated(orjson.loads(raw), raw)
    assert answer is None
    assert reason is not None and reason.endswith("Value error, text may not contain NUL characters")


def test_a_nul_cannot_be_written_raw() -> None:
    """The byte check's premise: orjson reads a NUL in a text only from ``\\u0000``."""
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(b'{"vehicles":[],"x":"a\x00b"}')
    raw = b'{"vehicles":[],"x":"\\\\u0000"}'  # an escaped backslash: no NUL, but the model is asked
    assert validated(orjson.loads(raw), raw) == validated(orjson.loads(raw))
    assert validated(orjson.loads(raw), raw)[1] is None


def test_the_fan_out_takes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a ``\\u0000`` in the bytes the model's own validator is not asked; with one it is."""
    raw = orjson.dumps({"vehicles": [VEHICLE]})
    monkeypatch.setattr(WireSearchAnswer, "model_validate", None)
    answer, reason = validated(orjson.loads(raw), raw)
    assert reason is None and answer is not None and answer.vehicles[0].make == "Toyota"
    with pytest.raises(TypeError):
        validated(orjson.loads(raw))
