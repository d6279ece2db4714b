"""Every statement on ``ride_events`` and ``ride_positions`` (docs/rules/ride.md), and the booking
row's ride columns that only the ride writes (the latest position).

Recording an event relies on ``UNIQUE (booking_id, type)``: the insert does nothing on a conflict
and says so, so two identical events sent at the same moment are recorded once even if both got
past the use case's own check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.ride_field import FOUR_MILESTONES, Milestone, Position, RideEventType
from transfers.db.tables import bookings, partners, ride_events, ride_positions, webhook_endpoints

R, P = ride_events.c, ride_positions.c
_INSERT_POSITIONS = insert(ride_positions)
# The client webhook type a position is pushed as (``client_events/events.EventType.BOOKING_DRIVER_POSITION``):
# only endpoints that name it get it, never through "*" (docs/rules/ride.md#client-events).
DRIVER_POSITION_EVENT = "booking.driver_position"
# docs/rules/ride.md#positions: kept 30 days after the ride, which is over by pickup + 12 h at the latest.
POSITIONS_KEPT = timedelta(days=30, hours=12)
PRUNE_BATCH = 5000  # positions per statement: a ride sends hundreds


async def insert_event(conn: AsyncConnection, booking_id: int, event: Milestone, *, actor: str) -> bool:
    """Record ``event`` for the booking; False (nothing written) when its type is recorded already."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    result = await conn.execute(
        dialect.insert(ride_events)
        .values(
            booking_id=booking_id,
            type=event.type.value,
            occurred_at=event.occurred_at,
            lat=event.lat,
            lng=event.lng,
            received_at=event.received_at,
            actor=actor,
        )
        .on_conflict_do_nothing(index_elements=["booking_id", "type"])
    )
    return result.rowcount == 1


async def insert_positions(
    conn: AsyncConnection, booking_id: int, positions: Sequence[Position], *, received_at: datetime
) -> None:
    await conn.execute(
        _INSERT_POSITIONS,
        [
            {
                "booking_id": booking_id,
                "lat": p.lat,
                "lng": p.lng,
                "at": p.at,
                "heading": p.heading,
                "speed_kmh": p.speed_kmh,
                "received_at": received_at,
            }
            for p in positions
        ],
    )


async def set_latest_position(conn: AsyncConnection, booking_id: int, position: Position) -> bool:
    """The booking's shown position, unless it already shows a newer one (a late batch); True when set."""
    result = await conn.execute(
        update(bookings)
        .where(
            bookings.c.id == booking_id,
            or_(bookings.c.ride_position_at.is_(None), bookings.c.ride_position_at < position.at),
        )
        .values(ride_position=position.stored(), ride_position_at=position.at)
    )
    return result.rowcount == 1


async def positions_of(conn: AsyncConnection, booking_id: int, *, limit: int = 1000) -> list[Position]:
    """The booking's positions, oldest first (the console, tests)."""
    rows = await conn.execute(
        select(P.lat, P.lng, P.at, P.heading, P.speed_kmh)
        .where(P.booking_id == booking_id)
        .order_by(P.at, P.id)
        .limit(limit)
    )
    return [Position(r.lat, r.lng, r.at, r.heading, r.speed_kmh) for r in rows]


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """A ``ride_events`` row: the event and who sent it."""

    milestone: Milestone
    actor: str


async def events_of(conn: AsyncConnection, booking_id: int) -> list[RecordedEvent]:
    """The booking's recorded events, by ``occurred_at`` (the console's story)."""
    rows = await conn.execute(select(ride_events).where(R.booking_id == booking_id).order_by(R.occurred_at, R.id))
    return [
        RecordedEvent(Milestone(RideEventType(r.type), r.occurred_at, r.lat, r.lng, r.received_at), r.actor)
        for r in rows
    ]


async def is_sandbox_partner(conn: AsyncConnection, partner_id: int) -> bool:
    """Whether the partner is the service's own sandbox partner (its rides run on a compressed clock)."""
    found = await conn.execute(select(partners.c.is_sandbox).where(partners.c.id == partner_id))
    return bool(found.scalar_one_or_none())


async def wants_positions(conn: AsyncConnection, client_id: int) -> bool:
    """Whether an enabled endpoint of the client names ``booking.driver_position`` ("*" does not count)."""
    rows = await conn.execute(
        select(webhook_endpoints.c.events).where(
            webhook_endpoints.c.client_id == client_id,
            webhook_endpoints.c.status == "enabled",
            webhook_endpoints.c.deleted_at.is_(None),
        )
    )
    return any(DRIVER_POSITION_EVENT in (events or ()) for (events,) in rows)


async def prune_positions(conn: AsyncConnection, *, picked_up_before: datetime, limit: int) -> int:
    """Delete up to ``limit`` positions of bookings whose pickup was before ``picked_up_before``
    (docs/rules/ride.md#positions: kept 30 days after the ride); returns how many."""
    doomed = (
        select(P.id)
        .join(bookings, bookings.c.id == P.booking_id)
        .where(bookings.c.pickup_at < picked_up_before)
        .limit(limit)
        .scalar_subquery()
    )
    result = await conn.execute(delete(ride_positions).where(P.id.in_(doomed)))
    return int(result.rowcount or 0)


@dataclass(frozen=True, slots=True)
class Coverage:
    """A partner's driver-event coverage: of its COMPLETED bookings picked up since a time, how many
    reported all four milestones."""

    completed: int
    covered: int

    @property
    def share(self) -> float | None:
        return None if self.completed == 0 else self.covered / self.completed


async def coverage(conn: AsyncConnection, partner_id: int, *, since: datetime, until: datetime) -> Coverage:
    """docs/rules/ride.md#sandbox-and-console: the share of the partner's COMPLETED bookings (pickup in
    ``[since, until)``) with all four milestones recorded."""
    milestones = (
        select(R.booking_id, func.count().label("n"))
        .where(R.type.in_([m.value for m in FOUR_MILESTONES]))
        .group_by(R.booking_id)
        .subquery()
    )
    row = (
        await conn.execute(
            select(
                func.count(),
                func.count(milestones.c.booking_id).filter(milestones.c.n == len(FOUR_MILESTONES)),
            )
            .select_from(bookings.outerjoin(milestones, milestones.c.booking_id == bookings.c.id))
            .where(
                and_(
                    bookings.c.partner_id == partner_id,
                    bookings.c.status == "COMPLETED",
                    bookings.c.pickup_at >= since,
                    bookings.c.pickup_at < until,
                )
            )
        )
    ).one()
    return Coverage(int(row[0]), int(row[1] or 0))
