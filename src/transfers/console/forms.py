"""Reading what a person typed into the console's forms and query strings: bounded, trimmed, with a
message per field instead of an exception, so a page can show each error beside its field and keep
what was typed."""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, date, datetime, timedelta

from transfers.webauth.forms import text

__all__ = ["MAX_SEARCH_CHARS", "day", "decode_cursor", "encode_cursor", "positive_id", "text"]

MAX_SEARCH_CHARS = 200
MAX_ID = 2**62


def positive_id(value: object) -> tuple[int | None, str | None]:
    typed = value.strip() if isinstance(value, str) else ""
    if not typed:
        return None, None
    if not (typed.isascii() and typed.isdigit()) or not 0 < int(typed) < MAX_ID:
        return None, "Choose one from the list."
    return int(typed), None


def day(value: object) -> tuple[date | None, str | None]:
    typed = value.strip() if isinstance(value, str) else ""
    if not typed:
        return None, None
    try:
        return date.fromisoformat(typed), None
    except ValueError:
        return None, "A date like 2026-12-31."


def day_start(value: date) -> datetime:
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def day_end(value: date) -> datetime:
    return day_start(value) + timedelta(days=1)


def encode_cursor(created_at: datetime, row_id: int) -> str:
    raw = f"{created_at.astimezone(UTC).isoformat()}|{row_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(value: object) -> tuple[datetime, int] | None:
    """The (created_at, id) a page link carries, None when it is missing or not one of ours."""
    if not isinstance(value, str) or not value or len(value) > 100:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
        stamp, _, row_id = raw.partition("|")
        moment = datetime.fromisoformat(stamp)
        if moment.tzinfo is None or not row_id.isdigit() or int(row_id) >= MAX_ID:
            return None
        return moment, int(row_id)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
