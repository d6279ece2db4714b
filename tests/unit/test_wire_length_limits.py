"""The partner wire models check lengths in pydantic-core, not in Python callbacks.

Why it matters: a limit written after a ``BeforeValidator`` in an ``Annotated`` becomes two Python
callbacks per field (pydantic's generic ``min_length_validator``/``max_length_validator``), about
240 calls in a 10-partner search; in the string schema it costs nothing extra. What a partner sees
is the string error (``string_too_short``/``string_too_long``) and the validators still run first.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from transfers.partners import wire


def _models() -> list[type[BaseModel]]:
    return [
        m
        for m in vars(wire).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == wire.__name__
    ]


def _walk(schema: Any) -> list[str]:
    """Every Python function named anywhere in a core schema."""
    found: list[str] = []
    if isinstance(schema, dict):
        function = schema.get("function")
        if isinstance(function, dict):
            inner = function.get("function")
            found.append(getattr(getattr(inner, "func", inner), "__name__", repr(inner)))
        for value in schema.values():
            found += _walk(value)
    elif isinstance(schema, list | tuple):
        for value in schema:
            found += _walk(value)
    return found


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_no_wire_model_checks_a_length_in_python(model: type[BaseModel]) -> None:
    names = _walk(model.__pydantic_core_schema__)
    assert "min_length_validator" not in names
    assert "max_length_validator" not in names


def _vehicle(**changes: Any) -> dict[str, Any]:
    vehicle = {
        "id": 7,
        "make": "Toyota",
        "model": "Corolla",
        "type": "SEDAN",
        "price": "40.00",
        "currency": "EUR",
        "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
    }
    vehicle.update(changes)
    return vehicle


def _errors(vehicle: dict[str, Any]) -> list[tuple[str, tuple[Any, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        wire.WireSearchAnswer.model_validate({"vehicles": [vehicle]})
    return [(e["type"], e["loc"], e["msg"]) for e in caught.value.errors()]


def test_an_empty_or_long_text_is_refused_with_the_string_error() -> None:
    assert _errors(_vehicle(make="")) == [
        ("string_too_short", ("vehicles", 0, "make"), "String should have at least 1 character")
    ]
    assert _errors(_vehicle(model="é" * 201)) == [
        ("string_too_long", ("vehicles", 0, "model"), "String should have at most 200 characters")
    ]
    assert _errors(_vehicle(id="")) == [
        ("string_too_short", ("vehicles", 0, "id"), "String should have at least 1 character")
    ]


def test_the_validators_still_run_before_the_limits() -> None:
    # A NUL is refused as a NUL even in a string that is also too long; an integer id is made text first.
    assert _errors(_vehicle(make="\x00" * 300)) == [
        ("value_error", ("vehicles", 0, "make"), "Value error, text may not contain NUL characters")
    ]
    answer = wire.WireSearchAnswer.model_validate({"vehicles": [_vehicle(id=12345, make="é" * 200)]})
    assert answer.vehicles[0].id == "12345"
    assert answer.vehicles[0].make == "é" * 200
    assert _errors(_vehicle(id=True)) == [("string_type", ("vehicles", 0, "id"), "Input should be a valid string")]
