"""A statement as CSV (docs/rules/statements.md#partner-api): a header row, then the lines' columns,
written in chunks as they are read, so a statement of any length streams in bounded memory. Pure."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

COLUMNS = ("date", "reservation_no", "kind", "retail", "retail_currency", "net", "amount", "note")
ROWS_PER_CHUNK = 1000


def cell(value: object) -> str:
    """A cell as text; one a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, a tab)
    gets a leading apostrophe, except plain amounts like ``-45.00``."""
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_amount(text):
        return "'" + text
    return text


def _is_amount(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.replace(".", "", 1).isdigit()


async def csv_chunks(lines: AsyncIterable[dict[str, Any]]) -> AsyncIterator[str]:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    count = 0
    async for line in lines:
        writer.writerow([cell(line[column]) for column in COLUMNS])
        count += 1
        if count % ROWS_PER_CHUNK == 0:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()
