"""Statement periods: UTC calendar months written ``YYYY-MM`` (docs/rules/statements.md#statements). Pure."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from transfers.errors import Invalid

_PERIOD = re.compile(r"\A([0-9]{4})-([0-9]{2})\Z")


class InvalidPeriod(Invalid):
    """A period that is not a month written ``YYYY-MM`` (``2026-13``, ``2026-1``, ``x``)."""

    def __init__(self, text: object) -> None:
        shown = text if isinstance(text, str) and len(text) <= 40 else "that"
        super().__init__(f"{shown!r} is not a month written YYYY-MM, like 2026-11.")


def period_of(moment: datetime) -> str:
    """The UTC calendar month of an instant."""
    utc = moment.astimezone(UTC)
    return f"{utc.year:04d}-{utc.month:02d}"


def parse_period(text: object) -> str:
    """``text`` if it names a month (2000-01 .. 9999-12), else InvalidPeriod."""
    match = _PERIOD.match(text) if isinstance(text, str) else None
    if match is None or not 1 <= int(match.group(2)) <= 12 or int(match.group(1)) < 2000:
        raise InvalidPeriod(text)
    return str(text)


def next_period(period: str) -> str:
    year, month = (int(part) for part in period.split("-"))
    return f"{year + 1:04d}-01" if month == 12 else f"{year:04d}-{month + 1:02d}"


def period_start(period: str) -> datetime:
    year, month = (int(part) for part in period.split("-"))
    return datetime(year, month, 1, tzinfo=UTC)


def period_end(period: str) -> datetime:
    """The first instant after the month (exclusive end)."""
    return period_start(next_period(period))
