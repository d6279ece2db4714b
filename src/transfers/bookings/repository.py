"""Booking persistence, always scoped by owner: a route never filters by id by hand.

The status-moving statements here (``set_status``, ``move_status``, ``insert_booking``) are run by
``lifecycle`` only, which writes each change's side effects with them; the PostgreSQL one-statement
paths are in ``fast_paths.py``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Executable, FromClause, bindparam, case, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking, BookingView, Transition
from transfers.bookings.resource import RESOURCE_FIELDS
from transfers.bookings.state import BookingStatus
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import (
    booking_transitions,
    bookings,
    partners,
    search_vehicles,
    searches,
)
from transfers.search.offers import SEARCHED_TRIP_FIELDS, Offer, SearchedTrip

# The create path's statements are built once and run with parameter dicts: building them per call
# (``insert(...).values(**values)``) and generating their cache keys was ~13 % of a create
# (docs/operations/performance-history.md#profile). Bind names in WHERE clauses carry a ``b_`` prefix so they never
# collide with the column names an UPDATE takes its SET clause from.
_INSERT_BOOKING = insert(bookings).returning(bookings.c.id)
_INSERT_TRANSITION = insert(booking_transitions)
BY_ID = select(bookings).where(bookings.c.id == bindparam("b_id"))
_UPDATE = update(bookings).where(bookings.c.id == bindparam("b_id"))
_SET_STATUS = _UPDATE.where(bookings.c.status == bindparam("b_expected"))
_MOVE_STATUS = _SET_STATUS.returning(*bookings.c)


def _vehicle_columns(table: FromClause, prefix: str) -> list[Any]:
    return [c.label(f"{prefix}{c.name}") for c in table.c]


def _partner_columns(table: FromClause, prefix: str) -> list[Any]:
    return [
        table.c.name.label(f"{prefix}name"),
        table.c.base_url.label(f"{prefix}base_url"),
        table.c.outbound_token_enc.label(f"{prefix}token_enc"),
        table.c.signing_secret_enc.label(f"{prefix}secret_enc"),
        table.c.previous_signing_secret_enc.label(f"{prefix}previous_secret_enc"),  # rotation overlap
        table.c.previous_secret_until.label(f"{prefix}previous_until"),
        table.c.hosted.label(f"{prefix}hosted"),
        table.c.free_wait_minutes.label(f"{prefix}free_wait_minutes"),  # sold with the partner's free wait
    ]


_VEHICLE = _vehicle_columns(search_vehicles, "v_")
_PARTNER = _partner_columns(partners, "p_")
# The caller's unexpired search, the chosen vehicle and its partner's endpoint in one statement: the
# vehicle (and its partner) are outer-joined, so a visible search with an unknown vehicle number
# still answers (docs/rules/errors.md#create-codes tells "no such search" from "no such vehicle").
_OFFER = DirectStatement(
    select(*(searches.c[name] for name in SEARCHED_TRIP_FIELDS), *_VEHICLE, *_PARTNER)
    .select_from(
        searches.outerjoin(
            search_vehicles,
            (search_vehicles.c.search_pk == searches.c.id)
            & (search_vehicles.c.vehicle_no == bindparam("b_vehicle_no"))
            # docs/rules/return-trips.md#create: ``vehicle_id`` names a leg-1 offer, ``return_vehicle_id`` a leg-2 one
            & (search_vehicles.c.leg == bindparam("b_leg")),
        ).outerjoin(partners, partners.c.id == search_vehicles.c.partner_id)
    )
    .where(
        searches.c.search_id == bindparam("b_search_id"),
        searches.c.client_id == bindparam("b_client_id"),
        searches.c.expires_at > bindparam("b_now"),
    )
)


@dataclass(frozen=True, slots=True)
class OfferSource:
    """Where a chosen offer is stored (``search_vehicles.id``, which the booking refers to) and its
    partner's endpoint columns (secrets still sealed), read with it so the create's own delivery
    attempt needs no read of its own."""

    search_vehicle_id: int
    partner_id: int
    partner_name: str
    base_url: str
    token_enc: str
    secret_enc: str
    previous_secret_enc: str | None = None  # the signing secret a rotation replaced
    previous_until: datetime | None = None  # ... sent as a second signature until then
    hosted: bool = False  # a hosted partner's vehicle holds a seat of its daily capacity
    free_wait_minutes: int | None = None  # the partner's free wait at airports


# A return trip's create (docs/rules/return-trips.md#create): the search, the way out's offer
# (``v_``/``p_``) and the way back's (``r_``/``q_``) in the one statement.
_BACK_VEHICLE = search_vehicles.alias("back_vehicle")
_BACK_PARTNER = partners.alias("back_partner")
_OFFERS = DirectStatement(
    select(
        *(searches.c[name] for name in SEARCHED_TRIP_FIELDS),
        *_VEHICLE,
        *_PARTNER,
        *_vehicle_columns(_BACK_VEHICLE, "r_"),
        *_partner_columns(_BACK_PARTNER, "q_"),
    )
    .select_from(
        searches.outerjoin(
            search_vehicles,
            (search_vehicles.c.search_pk == searches.c.id)
            & (search_vehicles.c.vehicle_no == bindparam("b_vehicle_no"))
            & (search_vehicles.c.leg == 1),
        )
        .outerjoin(partners, partners.c.id == search_vehicles.c.partner_id)
        .outerjoin(
            _BACK_VEHICLE,
            (_BACK_VEHICLE.c.search_pk == searches.c.id)
            & (_BACK_VEHICLE.c.vehicle_no == bindparam("b_back_no"))
            & (_BACK_VEHICLE.c.leg == 2),
        )
        .outerjoin(_BACK_PARTNER, _BACK_PARTNER.c.id == _BACK_VEHICLE.c.partner_id)
    )
    .where(
        searches.c.search_id == bindparam("b_search_id"),
        searches.c.client_id == bindparam("b_client_id"),
        searches.c.expires_at > bindparam("b_now"),
    )
)

Found = tuple["Offer | None", "OfferSource | None"]


async def find_offers(
    db: Database, *, client_id: int, search_id: str, vehicle_no: int | None, back_no: int | None, now: datetime
) -> tuple[SearchedTrip | None, Found, Found]:
    """``find_offer`` of both legs of a return trip in one round trip: (search, (way out's offer,
    source), (way back's offer, source)); an offer is None when its number names none of its leg."""
    row = await db.read_one(
        _OFFERS, b_vehicle_no=vehicle_no, b_back_no=back_no, b_search_id=search_id, b_client_id=client_id, b_now=now
    )
    if row is None:
        return None, (None, None), (None, None)
    return SearchedTrip.from_row(row), _found(row, "v_", "p_"), _found(row, "r_", "q_")


def _found(row: Any, vehicle: str, partner: str) -> Found:
    if row[f"{vehicle}id"] is None:
        return None, None
    source = OfferSource(
        row[f"{vehicle}id"],
        row[f"{vehicle}partner_id"],
        row[f"{partner}name"],
        row[f"{partner}base_url"],
        row[f"{partner}token_enc"],
        row[f"{partner}secret_enc"],
        row[f"{partner}previous_secret_enc"],
        row[f"{partner}previous_until"],
        bool(row[f"{partner}hosted"]),
        row[f"{partner}free_wait_minutes"],
    )
    return Offer.from_row(row, vehicle), source


async def find_offer(
    db: Database, *, client_id: int, search_id: str, vehicle_no: int | None, now: datetime, leg: int = 1
) -> tuple[SearchedTrip | None, Offer | None, OfferSource | None]:
    """(search, offer, source) in one round trip by the direct path (``db/direct.py``). The search
    is None when it is not visible (missing, expired or another client's); the offer and its source
    are None when the number is unknown, or names an offer of the other ``leg`` (1: ``vehicles``,
    2: ``return_vehicles``)."""
    row = await db.read_one(
        _OFFER, b_vehicle_no=vehicle_no, b_search_id=search_id, b_client_id=client_id, b_now=now, b_leg=leg
    )
    if row is None:
        return None, None, None
    offer, source = _found(row, "v_", "p_")
    return SearchedTrip.from_row(row), offer, source


async def insert_booking(conn: AsyncConnection, values: dict[str, Any]) -> int:
    return int((await conn.execute(_INSERT_BOOKING, values)).scalar_one())


_INSERT_BOOKINGS = insert(bookings).returning(bookings.c.id, sort_by_parameter_order=True)


async def insert_bookings(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Several bookings in one INSERT (a return trip's legs): their ids in the order of ``rows``.
    Every row must name the same columns."""
    return [int(i) for i in (await conn.execute(_INSERT_BOOKINGS, list(rows))).scalars()]


# Built once: GET and cancel run it on every request, and building the expression and its cache key
# each time was ~6 % of a GET booking (docs/operations/performance-history.md#profile).
_FOR_CLIENT = select(bookings).where(
    bookings.c.reservation_no == bindparam("reservation_no"), bookings.c.client_id == bindparam("client_id")
)
_RESOURCE_FOR_CLIENT = DirectStatement(_FOR_CLIENT.with_only_columns(*(bookings.c[name] for name in RESOURCE_FIELDS)))


async def resource_fields_for_client(db: Database, client_id: int, reservation_no: str) -> BookingView | None:
    """The GET booking read: the resource's fields only, one statement outside any transaction,
    by the direct path (``db/direct.py``)."""
    row = await db.read_one(_RESOURCE_FOR_CLIENT, reservation_no=reservation_no, client_id=client_id)
    return None if row is None else BookingView.from_row(row)


async def _one(conn: AsyncConnection, statement: Executable, params: dict[str, Any] | None = None) -> Booking | None:
    row = (await conn.execute(statement, params)).mappings().first()
    return None if row is None else Booking.from_row(row)


async def get_for_client(conn: AsyncConnection, client_id: int, reservation_no: str) -> Booking | None:
    return await _one(conn, _FOR_CLIENT, {"reservation_no": reservation_no, "client_id": client_id})


async def get_for_partner(conn: AsyncConnection, partner_id: int, reservation_no: str) -> Booking | None:
    return await _one(
        conn, select(bookings).where(bookings.c.reservation_no == reservation_no, bookings.c.partner_id == partner_id)
    )


async def get_by_idempotency_key(conn: AsyncConnection, client_id: int, key: str) -> Booking | None:
    return await _one(
        conn, select(bookings).where(bookings.c.client_id == client_id, bookings.c.idempotency_key == key)
    )


async def get_by_id(conn: AsyncConnection, booking_id: int) -> Booking | None:
    return await _one(conn, BY_ID, {"b_id": booking_id})


async def get_by_reservation(conn: AsyncConnection, reservation_no: str) -> Booking | None:
    """Operator view only (CLI): not scoped by owner."""
    return await _one(conn, select(bookings).where(bookings.c.reservation_no == reservation_no))


async def set_status(conn: AsyncConnection, booking_id: int, expected: str, values: dict[str, Any]) -> bool:
    """Compare-and-set on the status: False when another transaction moved the booking first."""
    result = await conn.execute(_SET_STATUS, {**values, "b_id": booking_id, "b_expected": expected})
    return result.rowcount == 1


async def move_status(conn: AsyncConnection, booking_id: int, expected: str, values: dict[str, Any]) -> Booking | None:
    """``set_status`` that also answers the whole row as updated (and now locked by this transaction),
    for callers that did not read it first; None when the status was not ``expected``."""
    return await _one(conn, _MOVE_STATUS, {**values, "b_id": booking_id, "b_expected": expected})


_LOCK = BY_ID.with_for_update()  # built once


async def lock_by_id(conn: AsyncConnection, booking_id: int) -> Booking | None:
    """The booking under a row lock (PostgreSQL; SQLite's write transaction already excludes others)."""
    return await _one(conn, _LOCK, {"b_id": booking_id})


async def update_fields(conn: AsyncConnection, booking_id: int, values: dict[str, Any]) -> None:
    await conn.execute(_UPDATE, {**values, "b_id": booking_id})


BATCH_ROWS = 500  # the rows of one multi-row statement (``update_fields_many``, ``record_transitions``, ...)


async def update_fields_many(conn: AsyncConnection, changes: Sequence[tuple[int, dict[str, Any]]]) -> None:
    """``update_fields`` of several bookings: one executemany per set of columns, ``BATCH_ROWS`` rows each."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for booking_id, values in changes:
        groups.setdefault(tuple(sorted(values)), []).append({**values, "b_id": booking_id})
    for rows in groups.values():
        for start in range(0, len(rows), BATCH_ROWS):
            await conn.execute(_UPDATE, rows[start : start + BATCH_ROWS])


async def bump_event_sequences(conn: AsyncConnection, counts: Mapping[int, int]) -> dict[int, int]:
    """``bump_event_sequence`` for several bookings (id -> count) in one UPDATE per ``BATCH_ROWS`` rows;
    answers each booking's last number taken."""
    ids = list(counts)
    last: dict[int, int] = {}
    for start in range(0, len(ids), BATCH_ROWS):
        chunk = {i: counts[i] for i in ids[start : start + BATCH_ROWS]}
        rows = await conn.execute(
            update(bookings)
            .where(bookings.c.id.in_(list(chunk)))
            .values(event_sequence=bookings.c.event_sequence + case(chunk, value=bookings.c.id, else_=0))
            .returning(bookings.c.id, bookings.c.event_sequence)
        )
        last.update({int(r[0]): int(r[1]) for r in rows})
    return last


async def bump_event_sequence(conn: AsyncConnection, booking_id: int, count: int) -> int:
    """Take ``count`` sequence numbers for the booking's client events (docs/rules/webhooks.md) on the row this
    transaction has already locked by moving it; returns the last one taken."""
    return int(
        (
            await conn.execute(
                update(bookings)
                .where(bookings.c.id == booking_id)
                .values(event_sequence=bookings.c.event_sequence + count)
                .returning(bookings.c.event_sequence)
            )
        ).scalar_one()
    )


async def record_transitions(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> None:
    """Several ``record_transition`` rows (``booking_transitions`` columns), ``BATCH_ROWS`` per executemany."""
    for start in range(0, len(rows), BATCH_ROWS):
        await conn.execute(_INSERT_TRANSITION, list(rows[start : start + BATCH_ROWS]))


async def record_transition(
    conn: AsyncConnection,
    *,
    booking_id: int,
    from_status: str | None,
    to_status: str,
    actor: str,
    reason: str | None,
    now: datetime,
) -> None:
    await conn.execute(
        _INSERT_TRANSITION,
        {
            "booking_id": booking_id,
            "from_status": from_status,
            "to_status": to_status,
            "actor": actor,
            "reason": reason,
            "created_at": now,
        },
    )


async def transitions_of(conn: AsyncConnection, booking_id: int) -> list[Transition]:
    rows = await conn.execute(
        select(booking_transitions)
        .where(booking_transitions.c.booking_id == booking_id)
        .order_by(booking_transitions.c.id)
    )
    return [Transition.from_row(r) for r in rows.mappings()]


async def release_idempotency_key(conn: AsyncConnection, client_id: int, key: str, *, created_before: datetime) -> None:
    """Free the client's Idempotency-Key held by a booking created before ``created_before``."""
    await conn.execute(
        update(bookings)
        .where(
            bookings.c.client_id == client_id,
            bookings.c.idempotency_key == key,
            bookings.c.created_at < created_before,
        )
        .values(idempotency_key=None)
    )


# --- Claims of the scheduled jobs (``jobs/scheduled.py``) -----------------------------------------


async def lock_approved_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> list[Booking]:
    """Up to ``limit`` APPROVED bookings picked up at or before ``cutoff``, row-locked (skipping rows
    another worker holds on PostgreSQL; SQLite's write transaction excludes others)."""
    rows = await conn.execute(
        select(bookings)
        .where(bookings.c.status == BookingStatus.APPROVED.value, bookings.c.pickup_at <= cutoff)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return [Booking.from_row(r) for r in rows.mappings()]


async def claim_unsynced(
    conn: AsyncConnection, statuses: Sequence[str], *, older_than: datetime, now: datetime, limit: int
) -> list[tuple[int, str, int]]:
    """Claim up to ``limit`` bookings in ``statuses`` created and last synced (if ever) no later than
    ``older_than``: their ``synced_at`` becomes ``now``, so no other worker claims them before the
    same age passes again. Returns (id, reservation_no, partner_id) of each."""
    candidates = (
        select(bookings.c.id)
        .where(
            bookings.c.status.in_(list(statuses)),
            bookings.c.created_at <= older_than,
            or_(bookings.c.synced_at.is_(None), bookings.c.synced_at <= older_than),
        )
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    rows = (
        await conn.execute(
            update(bookings)
            .where(bookings.c.id.in_(candidates.scalar_subquery()))
            .values(synced_at=now)
            .returning(bookings.c.id, bookings.c.reservation_no, bookings.c.partner_id)
        )
    ).all()
    return [(int(i), str(no), int(p)) for i, no, p in rows]
