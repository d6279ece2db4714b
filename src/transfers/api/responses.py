"""JSON rendering shared by every route and error handler (orjson: fast, exact, no NaN)."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import orjson
from starlette.background import BackgroundTask
from starlette.responses import Response

from transfers import money
from transfers.errors import ErrorCode


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        # Money in JSON numbers (search prices): money.number, 45.10 renders as 45.1, 45.00 as 45.0.
        return money.number(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def dumps(content: Any) -> bytes:
    return orjson.dumps(content, default=_default)


_JSON_TYPE = (b"content-type", b"application/json")


# An answer that shows a secret once (a webhook endpoint's signing secret): never kept by a cache, a
# proxy or the browser's history (docs/operations/security.md).
SHOWN_ONCE = {"Cache-Control": "no-store"}


class JSONBody(Response):
    media_type = "application/json"

    def __init__(
        self,
        content: Any = None,
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
        media_type: str | None = None,
        background: BackgroundTask | None = None,
    ) -> None:
        """A plain 200 answer (the search's) is made here rather than by Starlette's
        ``__init__`` and ``init_headers`` (two Python calls and their branches per answer): the same
        attributes and the same ``raw_headers``, ``content-length`` then ``content-type``. Any other
        status, headers or media type: Starlette's own."""
        if status_code != 200 or headers is not None or media_type is not None:
            super().__init__(content, status_code, headers, media_type, background)
            return
        self.status_code = 200
        self.background = background
        self.body = body = self.render(content)
        self.raw_headers = [(b"content-length", str(len(body)).encode("latin-1")), _JSON_TYPE]

    def render(self, content: Any) -> bytes:
        return dumps(content)


def spec_error_body(code: int, name: str) -> dict[str, Any]:
    return {"status": "Error", "code": code, "message": name}


def service_error_body(code: ErrorCode, message: str | None = None) -> dict[str, Any]:
    """docs/rules/errors.md#shapes's string-code shape; ``message`` defaults to the code's own (``ErrorCode``)."""
    return {"status": "Error", "code": code, "message": code.default_message if message is None else message}


def booking_not_found_body() -> dict[str, Any]:
    """The 404 body of docs/rules/errors.md#get-codes, used by the reverse API for unknown or foreign bookings."""
    return {"status": "Error", "message": "Booking not found", "data": None, "error_details": None}
