"""Reading what a person typed, the same way on every agency page: a text value or "", cut to a
limit, without NUL characters (PostgreSQL refuses them in text; a form or a query string may carry
one), so ugly input is an answer beside its field and never a 500."""

from __future__ import annotations

from collections.abc import Mapping


def text(values: Mapping[str, object], name: str, limit: int) -> str:
    value = values.get(name)
    return value.replace("\x00", "")[:limit] if isinstance(value, str) else ""
