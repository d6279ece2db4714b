"""What the quality pages read (docs/rules/quality.md#who-sees-what): each partner's latest scorecards
(as a whole and per airport), the weekly points of the charts, and the bookings behind one count.

The bookings behind a count are chosen by the very conditions the counts are made of
(``repository.py``), so the console's list of a count's bookings is exactly as long as the count:
one definition, two uses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import bookings, partner_scorecards, partners, ratings, ride_events
from transfers.db.tables.quality import ALL_AIRPORTS
from transfers.errors import Invalid
from transfers.quality import repository as repo
from transfers.quality.models import CountedBooking, PartnerName, StoredScorecard, WeeklyRates
from transfers.quality.rules import COUNT_NAMES, is_on_time


def _has(kind: str) -> Any:
    return exists().where(ride_events.c.booking_id == bookings.c.id, ride_events.c.type == kind)


def _covered() -> Any:
    started = and_(_has("DRIVER_DEPARTED_TO_PICKUP"), _has("DRIVER_ARRIVED_AT_PICKUP"))
    dropped_off = and_(_has("DRIVER_DEPARTED_TO_DROPOFF"), _has("DRIVER_ARRIVED_AT_DROPOFF"))
    no_show = and_(~_has("DRIVER_ARRIVED_AT_DROPOFF"), _has("CUSTOMER_NO_SHOW"))
    return and_(repo.ride(), started, or_(dropped_off, no_show))


def _condition(count: str) -> Any:
    """The SQL condition of one count's bookings (``on_time``: the rides with an arrival, tested by
    ``rules.is_on_time`` after)."""
    conditions = {
        "requests": ~repo.withdrawn(),
        "declined": repo.declined(),
        "partner_cancelled": repo.partner_cancelled(),
        "driver_no_shows": repo.driver_no_show(),
        "rides": repo.ride(),
        "on_time": repo.ride(),
        "covered": _covered(),
        "partner_incidents": and_(repo.ride(), repo.any_incident()),
        "ratings": exists().where(ratings.c.booking_id == bookings.c.id),
    }
    return conditions[count]


async def counted_bookings(
    conn: AsyncConnection, count: str, start: datetime, end: datetime, partner_id: int, airport: str | None = None
) -> list[CountedBooking]:
    """The bookings one count of one partner's scorecard counted (at one airport, or all), newest
    first: a count of 12 is these 12 bookings. ``count`` is one of ``rules.COUNT_NAMES``."""
    if count not in COUNT_NAMES:
        raise Invalid(f"not a scorecard count: {count!r}")
    where = and_(repo.in_window(start, end, partner_id), _condition(count))
    if airport is not None:
        where = and_(where, bookings.c.airport_iata == airport)
    order = (bookings.c.created_at.desc(), bookings.c.id.desc())
    if count != "on_time":
        query = select(bookings.c.id, bookings.c.created_at).where(where).order_by(*order)
        return [CountedBooking(int(r.id), r.created_at) for r in (await conn.execute(query)).all()]
    arrivals = (
        select(
            bookings.c.id,
            bookings.c.created_at,
            bookings.c.pickup_at,
            ride_events.c.occurred_at,
            ride_events.c.received_at,
        )
        .select_from(bookings.join(ride_events, ride_events.c.booking_id == bookings.c.id))
        .where(where, ride_events.c.type == "DRIVER_ARRIVED_AT_PICKUP")
        .order_by(*order)
    )
    return [
        CountedBooking(int(r.id), r.created_at)
        for r in (await conn.execute(arrivals)).all()
        if is_on_time(r.pickup_at, r.occurred_at, r.received_at)
    ]


def _stored(row: Any) -> StoredScorecard:
    return StoredScorecard(int(row.partner_id), row.day, row.airport_iata, dict(row.card))


_COLUMNS = (
    partner_scorecards.c.partner_id,
    partner_scorecards.c.day,
    partner_scorecards.c.airport_iata,
    partner_scorecards.c.card,
)


async def latest_with_airports(conn: AsyncConnection, partner_id: int | None = None) -> list[StoredScorecard]:
    """Each partner's latest day of scorecards: the partner as a whole (``'*'``) and every airport.

    Per partner, its latest day is one backward step of the ``(partner_id, day, airport_iata)`` index
    (a correlated ``max``): 100 partners over a 400-day history cost ~1 ms, where a ``GROUP BY`` over
    the history read every row (~50 ms at 120,000)."""
    newest = partner_scorecards.alias("newest")
    latest_day = (
        select(func.max(newest.c.day))
        .where(newest.c.partner_id == partners.c.id, newest.c.airport_iata == ALL_AIRPORTS)
        .scalar_subquery()
    )
    query = (
        select(*_COLUMNS)
        .select_from(
            partners.join(
                partner_scorecards,
                and_(partner_scorecards.c.partner_id == partners.c.id, partner_scorecards.c.day == latest_day),
            )
        )
        .order_by(partner_scorecards.c.partner_id, partner_scorecards.c.airport_iata)
    )
    if partner_id is not None:
        query = query.where(partners.c.id == partner_id)
    return [_stored(r) for r in (await conn.execute(query)).all()]


async def weekly_rates(conn: AsyncConnection, days: list[str], partner_id: int | None = None) -> list[WeeklyRates]:
    """The charts' points: the on-time, decline and incident rates of the given days' scorecards
    (partners as a whole). The documents are read whole and the rates picked here: on PostgreSQL's
    ``json`` each path extraction re-parses the document (measured: three per row cost 5-10x the
    plain read), while decoding it once in the driver is ~7 us a row."""
    query = select(partner_scorecards.c.partner_id, partner_scorecards.c.day, partner_scorecards.c.card).where(
        partner_scorecards.c.day.in_(days), partner_scorecards.c.airport_iata == ALL_AIRPORTS
    )
    if partner_id is not None:
        query = query.where(partner_scorecards.c.partner_id == partner_id)
    out = []
    for pid, day, card in (await conn.execute(query)).all():
        rates = card["rates"]
        out.append(WeeklyRates(int(pid), day, rates["on_time"], rates["decline"], rates["incident"]))
    return out


async def partner_names(conn: AsyncConnection, partner_id: int | None = None) -> list[PartnerName]:
    """Every partner (or one), by id: the console lists each, scored or not yet."""
    query = select(partners.c.id, partners.c.name).order_by(partners.c.id)
    if partner_id is not None:
        query = query.where(partners.c.id == partner_id)
    return [PartnerName(int(r.id), r.name) for r in (await conn.execute(query)).all()]
