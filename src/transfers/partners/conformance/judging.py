"""How one answer is put into words: what went wrong on the wire (no answer, not JSON, an HTTP
error, too late) and what the service's own validators (``transfers.partners.wire``) say about the
body, in the form a partner's developer can act on (``vehicles[0].price: must be positive (got
-5)``).

These are plain functions of a ``CallResult`` or a body, shared by every group of checks, so that
the same fault reads the same whichever call it happened on.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from transfers.partners.client import CallResult
from transfers.partners.conformance.contract import location

MAX_REASON = 300  # a report row stays readable in a terminal table and in the audit log

M = TypeVar("M", bound=BaseModel)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def clip(text: str, limit: int = MAX_REASON) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def said(body: Any) -> str:
    """``: 'the partner's message'`` when its error body carries one, else ""."""
    if isinstance(body, dict) and isinstance(body.get("message"), str) and body["message"]:
        return f": {clip(body['message'], 120)!r}"
    return ""


def parsed(model: type[M], body: Any) -> M | None:
    """The body as the service would read it, or None when the service would refuse it."""
    try:
        return model.model_validate(body)
    except ValidationError:
        return None


def wire_errors(model: type[BaseModel], body: Any, limit: int = 3) -> list[str]:
    """The service's validator's complaints, as ``vehicles[0].price: must be positive ...``."""
    try:
        model.model_validate(body)
    except ValidationError as exc:
        out = []
        for err in exc.errors()[:limit]:
            loc = [p for p in err["loc"] if isinstance(p, int | str)]
            out.append(f"{location(loc)}: {_wire_message(err, loc)}")
        return out
    return []


def _wire_message(err: Any, loc: list[int | str]) -> str:
    if err["type"] == "model_type" and not loc:
        return "must be a JSON object"
    message = str(err["msg"]).removeprefix("Value error, ")
    field_name = str(loc[-1]) if loc else ""
    message = message.removeprefix(field_name + " ") if field_name else message
    value = err.get("input")
    if field_name == "price" and isinstance(value, int | float | str) and not isinstance(value, bool):
        try:
            if Decimal(str(value)) <= 0:
                message = "must be positive"
        except InvalidOperation:
            pass
    if isinstance(value, int | float | str | bool) or value is None:
        message += f" (got {clip(orjson.dumps(value).decode(), 60)})"
    return message


def transport_problem(result: CallResult, wait: float) -> str | None:
    """Why a call produced no usable answer, or None when it did (2xx with JSON or no body)."""
    if result.outcome == "ok":
        return None
    if result.outcome == "timeout":
        return f"no answer within {ms(wait):.0f} ms"
    if result.outcome == "connect_error":
        return f"could not connect ({result.error})"
    if result.outcome == "invalid":
        return f"answer is not JSON (HTTP {result.http_status})"
    if result.outcome == "too_large":
        return "answer over 1 MiB (the service drops it)"
    if result.outcome == "redirect":
        return f"HTTP {result.http_status}: a redirect (the service does not follow redirects)"
    if result.outcome == "http_error":
        return f"HTTP {result.http_status}{said(result.body)}"
    return f"{result.outcome}: {result.error}"


def late(result: CallResult, deadline: float) -> str | None:
    """A usable answer that came after the deadline (the service would have given up on it)."""
    if result.duration_ms > deadline * 1000:
        return f"answered in {result.duration_ms:.0f} ms > {deadline * 1000:.0f} ms deadline"
    return None
