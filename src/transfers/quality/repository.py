"""The scorecard's counts and the stored history (docs/rules/quality.md#counts).

The counts are SQL aggregates per partner and airport over the bookings whose current pickup lies in
the window, flight-disrupted bookings left out. Only the on-time test is made in Python
(``rules.is_on_time``, one row per ride with an arrival): it compares instants, which SQLite stores as
text, and it is the rule a backdated event must not slip through, so it lives once, in the domain.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, delete, exists, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.tables import (
    booking_transitions,
    bookings,
    incidents,
    partner_scorecards,
    partners,
    ratings,
    ride_events,
)
from transfers.db.tables.quality import ALL_AIRPORTS
from transfers.quality.models import StoredScorecard
from transfers.quality.rules import Counts, is_on_time

HISTORY_KEPT = timedelta(days=400)
Key = tuple[int, str]  # (partner_id, airport_iata)

ANSWERED = ("APPROVED",)  # the partner accepted: a driver assigned (a bare acknowledgement is no answer yet)
RIDE_STATUSES = ("COMPLETED", "REFUNDED")  # REFUNDED is only reachable from APPROVED or COMPLETED


def in_window(start: datetime, end: datetime, partner_id: int | None) -> Any:
    where = and_(bookings.c.pickup_at >= start, bookings.c.pickup_at < end, bookings.c.flight_disrupted_at.is_(None))
    return where if partner_id is None else and_(where, bookings.c.partner_id == partner_id)


def _one(condition: Any) -> Any:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def accepted() -> Any:
    """The partner accepted the booking (approved it with a driver) at some point."""
    return exists().where(
        booking_transitions.c.booking_id == bookings.c.id, booking_transitions.c.to_status.in_(ANSWERED)
    )


def _cancelled(*, by_partner: bool) -> Any:
    cancelled = bookings.c.status == "CANCELLED"
    if by_partner:
        return and_(cancelled, bookings.c.cancelled_by == "partner")
    return and_(cancelled, or_(bookings.c.cancelled_by.is_(None), bookings.c.cancelled_by != "partner"))


def withdrawn() -> Any:
    """Cancelled by the client or an operator before the partner accepted it: no request."""
    return and_(_cancelled(by_partner=False), ~accepted())


def declined() -> Any:
    """D: declined, FAILED, or cancelled by the partner before it had ever accepted it."""
    return or_(bookings.c.status.in_(("DECLINED", "FAILED")), and_(_cancelled(by_partner=True), ~accepted()))


def partner_cancelled() -> Any:
    """C: cancelled by the partner after accepting it."""
    return and_(_cancelled(by_partner=True), accepted())


def ride() -> Any:
    """N: the booking ended as a ride."""
    return bookings.c.status.in_(RIDE_STATUSES)


def _against_partner() -> Any:
    return and_(incidents.c.status == "RESOLVED", incidents.c.responsible == "partner")


def driver_no_show() -> Any:
    """DNS: a ``DRIVER_NO_SHOW`` incident resolved against the partner."""
    return exists().where(
        incidents.c.booking_id == bookings.c.id, _against_partner(), incidents.c.type == "DRIVER_NO_SHOW"
    )


def any_incident() -> Any:
    return exists().where(incidents.c.booking_id == bookings.c.id, _against_partner())


async def booking_counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, Counts]:
    """R, D, C and N per partner and airport. A booking the client or an operator cancelled before the
    partner accepted it is no request; a partner's cancel before it ever accepted is a decline."""
    query = (
        select(
            bookings.c.partner_id,
            bookings.c.airport_iata,
            func.count().label("total"),
            _one(withdrawn()).label("withdrawn"),
            _one(declined()).label("declined"),
            _one(partner_cancelled()).label("partner_cancelled"),
            _one(ride()).label("rides"),
        )
        .where(in_window(start, end, partner_id))
        .group_by(bookings.c.partner_id, bookings.c.airport_iata)
    )
    out: dict[Key, Counts] = {}
    for row in (await conn.execute(query)).all():
        out[(row.partner_id, row.airport_iata)] = Counts(
            requests=int(row.total) - int(row.withdrawn),
            declined=int(row.declined),
            partner_cancelled=int(row.partner_cancelled),
            rides=int(row.rides),
        )
    return out


async def incident_counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, tuple[int, int]]:
    """(DNS, I) per partner and airport: driver no-shows resolved against the partner (any booking in
    the window), and rides with at least one incident resolved against the partner."""
    dns, incident = driver_no_show(), any_incident()
    query = (
        select(
            bookings.c.partner_id,
            bookings.c.airport_iata,
            _one(dns).label("dns"),
            _one(and_(ride(), incident)).label("incidents"),
        )
        .where(in_window(start, end, partner_id), incident)
        .group_by(bookings.c.partner_id, bookings.c.airport_iata)
    )
    return {(r.partner_id, r.airport_iata): (int(r.dns), int(r.incidents)) for r in (await conn.execute(query)).all()}


def _has(kind: str) -> Any:
    return func.max(case((ride_events.c.type == kind, 1), else_=0))


async def covered_counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, int]:
    """E per partner and airport: rides with every milestone their end implies (``rules.is_covered``,
    written here as one aggregate)."""
    flags = (
        select(
            ride_events.c.booking_id,
            _has("DRIVER_DEPARTED_TO_PICKUP").label("dp"),
            _has("DRIVER_ARRIVED_AT_PICKUP").label("ap"),
            _has("DRIVER_DEPARTED_TO_DROPOFF").label("dd"),
            _has("DRIVER_ARRIVED_AT_DROPOFF").label("ad"),
            _has("CUSTOMER_NO_SHOW").label("ns"),
        )
        .group_by(ride_events.c.booking_id)
        .subquery()
    )
    started = and_(flags.c.dp == 1, flags.c.ap == 1)
    whole = or_(and_(started, flags.c.dd == 1, flags.c.ad == 1), and_(started, flags.c.ad == 0, flags.c.ns == 1))
    query = (
        select(bookings.c.partner_id, bookings.c.airport_iata, func.count().label("covered"))
        .select_from(bookings.join(flags, flags.c.booking_id == bookings.c.id))
        .where(in_window(start, end, partner_id), bookings.c.status.in_(RIDE_STATUSES), whole)
        .group_by(bookings.c.partner_id, bookings.c.airport_iata)
    )
    return {(r.partner_id, r.airport_iata): int(r.covered) for r in (await conn.execute(query)).all()}


async def on_time_counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, int]:
    """T per partner and airport: the rides' arrivals that pass ``rules.is_on_time``."""
    query = (
        select(
            bookings.c.partner_id,
            bookings.c.airport_iata,
            bookings.c.pickup_at,
            ride_events.c.occurred_at,
            ride_events.c.received_at,
        )
        .select_from(bookings.join(ride_events, ride_events.c.booking_id == bookings.c.id))
        .where(
            in_window(start, end, partner_id),
            bookings.c.status.in_(RIDE_STATUSES),
            ride_events.c.type == "DRIVER_ARRIVED_AT_PICKUP",
        )
    )
    out: dict[Key, int] = defaultdict(int)
    for row in (await conn.execute(query)).all():
        if is_on_time(row.pickup_at, row.occurred_at, row.received_at):
            out[(row.partner_id, row.airport_iata)] += 1
    return dict(out)


async def rating_counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, tuple[int, int]]:
    """(v, sum of stars) per partner and airport: the travellers' ratings of the window's bookings
    (docs/rules/ratings.md), whoever passed them on."""
    query = (
        select(
            bookings.c.partner_id,
            bookings.c.airport_iata,
            func.count().label("v"),
            func.coalesce(func.sum(ratings.c.stars), 0).label("stars"),
        )
        .select_from(bookings.join(ratings, ratings.c.booking_id == bookings.c.id))
        .where(in_window(start, end, partner_id))
        .group_by(bookings.c.partner_id, bookings.c.airport_iata)
    )
    return {(r.partner_id, r.airport_iata): (int(r.v), int(r.stars)) for r in (await conn.execute(query)).all()}


async def counts(
    conn: AsyncConnection, start: datetime, end: datetime, partner_id: int | None = None
) -> dict[Key, Counts]:
    """Every count per partner and airport (only the pairs with a booking in the window)."""
    base = await booking_counts(conn, start, end, partner_id)
    extra_incidents = await incident_counts(conn, start, end, partner_id)
    covered = await covered_counts(conn, start, end, partner_id)
    on_time = await on_time_counts(conn, start, end, partner_id)
    ratings = await rating_counts(conn, start, end, partner_id)
    out: dict[Key, Counts] = {}
    for key, c in base.items():
        dns, partner_incidents = extra_incidents.get(key, (0, 0))
        v, stars = ratings.get(key, (0, 0))
        out[key] = Counts(
            requests=c.requests,
            declined=c.declined,
            partner_cancelled=c.partner_cancelled,
            driver_no_shows=dns,
            rides=c.rides,
            on_time=on_time.get(key, 0),
            covered=covered.get(key, 0),
            partner_incidents=partner_incidents,
            ratings=v,
            stars=stars,
        )
    return out


async def partner_ids(conn: AsyncConnection, partner_id: int | None = None) -> list[int]:
    query = select(partners.c.id).order_by(partners.c.id)
    if partner_id is not None:
        query = query.where(partners.c.id == partner_id)
    return [int(r) for r in (await conn.execute(query)).scalars()]


async def replace_day(
    conn: AsyncConnection,
    day: str,
    as_of: datetime,
    rows: list[dict[str, Any]],
    *,
    now: datetime,
    partner_id: int | None = None,
) -> None:
    """The day's scorecards, replaced (one partner's, or every partner's), and the history older than
    400 days pruned; the caller's transaction makes it all or nothing."""
    stale = delete(partner_scorecards).where(partner_scorecards.c.day == day)
    if partner_id is not None:
        stale = stale.where(partner_scorecards.c.partner_id == partner_id)
    await conn.execute(stale)
    if rows:
        await conn.execute(
            partner_scorecards.insert(),
            [
                {
                    "partner_id": r["partner_id"],
                    "day": day,
                    "airport_iata": r["airport_iata"],
                    "as_of": as_of,
                    "score": r["card"]["score"],
                    "tier": r["card"]["tier"],
                    "card": r["card"],
                    "computed_at": now,
                }
                for r in rows
            ],
        )
    oldest = (as_of - HISTORY_KEPT).date().isoformat()
    await conn.execute(delete(partner_scorecards).where(partner_scorecards.c.day < oldest))


COLUMNS = (
    partner_scorecards.c.partner_id,
    partner_scorecards.c.day,
    partner_scorecards.c.airport_iata,
    partner_scorecards.c.card,
)


def _stored(row: Any) -> StoredScorecard:
    return StoredScorecard(int(row.partner_id), row.day, row.airport_iata, dict(row.card))


async def latest(conn: AsyncConnection, partner_id: int | None = None) -> dict[int, StoredScorecard]:
    """The latest scorecard of each partner (as a whole): what search, the reverse API and the pages
    show."""
    newest = (
        select(partner_scorecards.c.partner_id, func.max(partner_scorecards.c.day).label("day"))
        .where(partner_scorecards.c.airport_iata == ALL_AIRPORTS)
        .group_by(partner_scorecards.c.partner_id)
        .subquery()
    )
    query = select(*COLUMNS).join(
        newest,
        and_(
            newest.c.partner_id == partner_scorecards.c.partner_id,
            newest.c.day == partner_scorecards.c.day,
            partner_scorecards.c.airport_iata == literal(ALL_AIRPORTS),
        ),
    )
    if partner_id is not None:
        query = query.where(partner_scorecards.c.partner_id == partner_id)
    return {int(r.partner_id): _stored(r) for r in (await conn.execute(query)).all()}


async def history(conn: AsyncConnection, partner_id: int, airport_iata: str = ALL_AIRPORTS) -> list[StoredScorecard]:
    """A partner's stored scorecards, oldest first."""
    query = (
        select(*COLUMNS)
        .where(partner_scorecards.c.partner_id == partner_id, partner_scorecards.c.airport_iata == airport_iata)
        .order_by(partner_scorecards.c.day)
    )
    return [_stored(r) for r in (await conn.execute(query)).all()]


async def computed_on(conn: AsyncConnection, day: str, since: datetime) -> bool:
    """Whether the day's scheduled scorecards were already written (the daily job runs once a day): a
    row of that day computed as of ``since`` (03:00 UTC) or later. A manual run earlier that night
    (``transfers partners score --partner 7`` at 01:00 stores partner 7's as today's) does not count,
    or it would leave every other partner unscored that day."""
    found = await conn.execute(
        select(partner_scorecards.c.id)
        .where(partner_scorecards.c.day == day, partner_scorecards.c.as_of >= since)
        .limit(1)
    )
    return found.first() is not None
