"""The bookings list narrowed to the bookings one scorecard count counted
(docs/rules/quality.md#console): ``/console/bookings?partner=7&counted=declined&as_of=...&airport=LHR``,
the link behind each count of the ``Quality`` page.

The bookings are chosen by the conditions the counts are made of (``quality/queries.py``) over the
scorecard's own window, so the list holds exactly as many bookings as the count says. The list keeps
its order (newest first) and its cursor paging: the page's ids are cut from that selection here, and
the list's query reads those rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import QueryParams

from transfers.quality import queries as quality
from transfers.quality.rules import COUNT_NAMES, window

TITLES = {
    "requests": "requests",
    "declined": "declined",
    "partner_cancelled": "cancelled by the partner",
    "driver_no_shows": "driver no-shows",
    "rides": "rides",
    "on_time": "on time",
    "covered": "covered",
    "partner_incidents": "with a partner incident",
    "ratings": "rated",
}


@dataclass(frozen=True, slots=True)
class Counted:
    """What was asked: one count of one partner's scorecard as of an instant, at one airport or all."""

    count: str
    partner_id: int
    as_of: datetime
    airport: str | None


def wanted(params: QueryParams, partner_id: int | None) -> tuple[Counted | None, dict[str, str]]:
    """The narrowing a link asks for (None: an ordinary list), or the errors of a link gone wrong."""
    count = params.get("counted")
    if not count:
        return None, {}
    errors: dict[str, str] = {}
    if count not in COUNT_NAMES:
        errors["counted"] = "That is not a scorecard count; open the count from the Quality page."
    if partner_id is None:
        errors["partner"] = "A scorecard count needs its partner; open the count from the Quality page."
    as_of = _instant(params.get("as_of"))
    if as_of is None:
        errors["as_of"] = "A scorecard count needs the scorecard's time (as_of, an ISO instant with its offset)."
    airport = (params.get("airport") or "").strip().upper() or None
    if airport is not None and not (len(airport) == 3 and airport.isascii() and airport.isalpha()):
        errors["airport"] = "An airport is three letters (IATA)."
    if errors or partner_id is None or as_of is None:
        return None, errors
    return Counted(count, partner_id, as_of, airport), {}


def _instant(value: str | None) -> datetime | None:
    if not value or len(value) > 40:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


async def page_ids(
    conn: AsyncConnection, counted: Counted, before: tuple[datetime, int] | None, limit: int
) -> tuple[tuple[int, ...], int]:
    """The ids of one page (newest first, after the cursor) and how many bookings the count holds."""
    start, end = window(counted.as_of)
    found = await quality.counted_bookings(conn, counted.count, start, end, counted.partner_id, counted.airport)
    after = [b for b in found if before is None or (b.created_at, b.id) < before]
    return tuple(b.id for b in after[:limit]), len(found)


def description(counted: Counted, partner_name: str, total: int) -> str:
    at = f" at {counted.airport}" if counted.airport else ""
    moment = counted.as_of.isoformat().replace("+00:00", "Z")
    return (
        f"{total} booking{'s' if total != 1 else ''} counted as {TITLES[counted.count]} in {partner_name}'s "
        f"scorecard as of {moment}{at}. Other filters do not apply to this list."
    )
