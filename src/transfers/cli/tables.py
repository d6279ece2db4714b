"""A tiny, dependency-free renderer for operator output: aligned tables and key/value blocks.

Every cell is made terminal-safe: much of what operators look at was written by someone else
(partner error messages, partner references, driver names, cancellation notes), and a newline or an
escape sequence in it must be shown, not obeyed. Control and format characters are printed as
``\\xNN`` / ``\\uNNNN``. Times are shown in UTC; amounts as plain decimals; absent values as ``-``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

ELLIPSIS = "…"
NONE = "-"


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def safe(text: str) -> str:
    """``text`` with every control/format/unassigned character escaped (newlines, ESC, bidi overrides)."""
    return "".join(_escape(ch) if unicodedata.category(ch)[0] == "C" else ch for ch in text)


def cell(value: Any) -> str:
    """How one value reads in a table."""
    if value is None:
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    if isinstance(value, Decimal):
        return f"{value:f}"
    return safe(str(value))


def width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide East Asian characters count 2, combining marks 0."""
    total = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


def clip(text: str, limit: int | None) -> str:
    """``text`` cut to at most ``limit`` columns, ending in an ellipsis when cut."""
    if limit is None or width(text) <= limit:
        return text
    out, used = [], 0
    for ch in text:
        w = 0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used + w > limit - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + ELLIPSIS


def _pad(text: str, size: int, right: bool) -> str:
    gap = " " * max(0, size - width(text))
    return gap + text if right else text + gap


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    max_width: Mapping[str, int] | None = None,
    right: Collection[str] = (),
    empty: str = "(none)",
    indent: str = "",
) -> str:
    """An aligned table: upper-case headers, two spaces between columns, no trailing blanks.

    ``max_width`` clips named columns (long error messages); ``right`` right-aligns named columns
    (amounts, counts). With no rows, the header is followed by ``empty``.
    """
    limits = max_width or {}
    cells = [[clip(cell(v), limits.get(h)) for h, v in zip(headers, row, strict=True)] for row in rows]
    heads = [h.upper() for h in headers]
    widths = [max([width(h), *(width(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    aligned = [h in right for h in headers]
    lines = [
        indent + "  ".join(_pad(v, w, r) for v, w, r in zip(line, widths, aligned, strict=True)).rstrip()
        for line in [heads, *cells]
    ]
    if not cells:
        lines.append(indent + empty)
    return "\n".join(lines)


def render_pairs(pairs: Sequence[tuple[str, Any]], *, indent: str = "") -> str:
    """A key/value block: keys padded to one column."""
    size = max((width(k) for k, _ in pairs), default=0)
    return "\n".join(f"{indent}{_pad(k, size, False)}  {cell(v)}".rstrip() for k, v in pairs)


def jsonable(value: Any) -> Any:
    """Rows as JSON-ready values: ISO 8601 times, decimal strings, nested containers converted."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return f"{value:f}"
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value
