"""The plain 200 ``JSONBody`` made without Starlette's ``__init__``: the same bytes and headers."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from starlette.responses import Response

from transfers.api.responses import JSONBody, dumps


class _Json(Response):
    """Starlette's own path, for comparison."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


@pytest.mark.parametrize(
    "content", [{"a": 1, "price": Decimal("45.10")}, [], {"vehicles": [{"x": "é"}] * 3}, None, "text"]
)
def test_plain_answer_is_starlettes(content: Any) -> None:
    mine, theirs = JSONBody(content), _Json(content)
    assert (mine.status_code, mine.body, mine.raw_headers, mine.background) == (
        theirs.status_code,
        theirs.body,
        theirs.raw_headers,
        theirs.background,
    )
    assert mine.headers["content-type"] == "application/json"
    assert mine.media_type == "application/json"


@pytest.mark.parametrize(
    "kwargs",
    [{"status_code": 201}, {"status_code": 204}, {"headers": {"Retry-After": "5"}}, {"media_type": "text/plain"}],
)
def test_other_answers_are_starlettes(kwargs: dict[str, Any]) -> None:
    mine, theirs = JSONBody({"a": 1}, **kwargs), _Json({"a": 1}, **kwargs)
    assert (mine.status_code, mine.body, mine.raw_headers) == (theirs.status_code, theirs.body, theirs.raw_headers)
