"""One table of string error codes (``transfers.errors.ErrorCode``): the SDK's mapping, the docs'
errors page (docs/integrators/errors.md) and the served OpenAPI document name exactly its codes. A
code added to the table but not to one of them fails here (see the ``ErrorCode`` docstring for the
three lines to add)."""

from __future__ import annotations

import re
from pathlib import Path

from transfers.api.errors import render
from transfers.api.schemas import ServiceErrorBody
from transfers.errors import ErrorCode, Invalid
from transfers_sdk.errors import ERROR_CLASSES, ApiError, AuthenticationError, ClientSuspended, ServerError

ERRORS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrators" / "errors.md"


def page_errors() -> dict[str, str]:
    """code -> status as the errors page's table of string codes lists them."""
    section = ERRORS_PAGE.read_text()
    return {code: status for status, code in re.findall(r"^\| (\d{3}|any) \| `([A-Z_]+)` \|", section, re.M)}


def test_codes_are_unique_and_statuses_are_errors() -> None:
    assert len({code.value for code in ErrorCode}) == len(ErrorCode)
    for code in ErrorCode:
        assert code.value == code.name
        assert 400 <= code.http_status <= 599 and code.default_message, code


def test_the_errors_page_lists_every_code_with_its_status() -> None:
    listed = page_errors()
    assert set(listed) == {code.value for code in ErrorCode}
    for code in ErrorCode:
        # HTTP_ERROR carries whatever status the framework raised, so the page says "any".
        expected = "any" if code is ErrorCode.HTTP_ERROR else str(code.http_status)
        assert listed[code.value] == expected, code


def test_the_sdk_maps_every_code() -> None:
    assert set(ERROR_CLASSES) == {code.value for code in ErrorCode}
    assert all(issubclass(cls, ApiError) for cls in ERROR_CLASSES.values())
    assert ERROR_CLASSES[ErrorCode.UNAUTHENTICATED] is AuthenticationError
    assert ERROR_CLASSES[ErrorCode.CLIENT_SUSPENDED] is ClientSuspended
    for code in ErrorCode:
        if code.http_status >= 500:
            assert ERROR_CLASSES[code] is ServerError, code


def test_the_openapi_error_shape_enumerates_the_table() -> None:
    schema = ServiceErrorBody.model_json_schema()
    code_schema = schema["$defs"]["ErrorCode"]
    assert code_schema["enum"] == [code.value for code in ErrorCode]


def test_a_coded_domain_error_takes_status_and_message_from_the_table() -> None:
    error = Invalid(ErrorCode.IDEMPOTENCY_KEY_REUSED)
    rendered = render(error)
    assert rendered is not None
    assert (rendered.status, error.code, error.message) == (
        422,
        "IDEMPOTENCY_KEY_REUSED",
        ErrorCode.IDEMPOTENCY_KEY_REUSED.default_message,
    )
    told = Invalid(ErrorCode.INVALID_FILTER, "status: NOPE is not a status")
    answer = render(told)
    assert answer is not None
    assert (answer.status, answer.body["message"]) == (422, "status: NOPE is not a status")
