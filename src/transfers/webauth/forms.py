"""Reading a field a person typed into a page's form or query string, as the console and the portal
read theirs: bounded, trimmed, with a message instead of an exception. Shared here, below both
areas, so neither imports the other (the layers contract in pyproject.toml)."""

from __future__ import annotations


def text(value: object, *, limit: int) -> tuple[str, str | None]:
    """(the value trimmed, an error or None); non-strings count as empty. NUL characters are dropped:
    no field holds one, and PostgreSQL refuses them in text."""
    typed = value.replace("\x00", "").strip() if isinstance(value, str) else ""
    if len(typed) > limit:
        return typed[:limit], f"At most {limit} characters."
    return typed, None
