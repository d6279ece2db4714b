"""The flight watch's SQL (docs/rules/flights.md#watching): the shared watches (``flight_watches``) and the
watched bookings' flight columns. Claims take a lease (``lease_until``) under ``FOR UPDATE SKIP LOCKED`` on
PostgreSQL (SQLite's write transaction excludes others): several workers never check one flight at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.models import Booking
from transfers.bookings.state import BookingStatus
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import bookings, flight_watches, partners
from transfers.reference.airports import local_time

# docs/rules/flights.md#watching: the bookings whose flight is watched
WATCHED_STATUSES = (BookingStatus.PENDING_APPROVAL.value, BookingStatus.APPROVED.value)
W = flight_watches.c


@dataclass(frozen=True, slots=True)
class Watch:
    id: int
    number: str
    airport_iata: str
    local_date: str
    scheduled_arrival: datetime
    next_check_at: datetime | None
    report: dict[str, Any] | None
    failures: int
    last_error: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> Watch:
        return cls(
            row["id"],
            row["number"],
            row["airport_iata"],
            row["local_date"],
            row["scheduled_arrival"],
            row["next_check_at"],
            row["report"],
            row["failures"],
            row["last_error"],
        )


def local_date(airport_iata: str, arrival: datetime) -> str:
    return local_time(airport_iata, arrival).date().isoformat()


@dataclass(frozen=True, slots=True)
class WatchFound:
    """What a create needs of its flight's watch: whether it is due, and when the provider last answered."""

    id: int
    next_check_at: datetime | None
    checked_at: datetime | None

    def due(self, now: datetime) -> bool:
        return self.next_check_at is not None and self.next_check_at <= now


_WATCH_OF = DirectStatement(
    select(W.id, W.next_check_at, W.checked_at).where(
        W.number == bindparam("number"),
        W.airport_iata == bindparam("airport_iata"),
        W.local_date == bindparam("local_date"),
    )
)


async def find_watch(db: Database, number: str, airport_iata: str, scheduled_arrival: datetime) -> WatchFound | None:
    """The watch a new booking of ``number`` would take, read outside any transaction (the direct path): most
    creates on a flight find it due already and need no write at all (``ensure_watch``)."""
    row = await db.read_one(
        _WATCH_OF, number=number, airport_iata=airport_iata, local_date=local_date(airport_iata, scheduled_arrival)
    )
    return None if row is None else WatchFound(int(row["id"]), row["next_check_at"], row["checked_at"])


async def ensure_watch(
    conn: AsyncConnection,
    number: str,
    airport_iata: str,
    scheduled_arrival: datetime,
    now: datetime,
    *,
    known: int | None = None,
) -> int:
    """The watch of ``number`` landing at ``airport_iata`` on the local date of ``scheduled_arrival``, created
    when missing; either way it is due now (a booking is checked at creation). ``known``: its id, read by the
    caller (``find_watch``), so only the schedule is written.

    A watch already due is left as it is, not rewritten: every booking of a flight made until its next check
    would otherwise update the same row, one after the other under its row lock (``make bench``'s creates,
    all on one flight, queued on it: 533 -> 184 creates/s,
    docs/operations/performance-history.md#create-and-flight-watch). A new watch is one ``INSERT ... ON CONFLICT DO
    NOTHING`` (no savepoint for the race with another create of the same flight: the loser finds the winner's row)."""
    if known is None:
        values = _new_values(number, airport_iata, scheduled_arrival, now)
        made = _dialect_insert(conn).values(values).on_conflict_do_nothing(index_elements=_KEY).returning(W.id)
        inserted = (await conn.execute(made)).scalar()
        if inserted is not None:
            return int(inserted)
        key = (W.number == number, W.airport_iata == airport_iata, W.local_date == values["local_date"])
        known = int((await conn.execute(select(W.id).where(*key))).scalar_one())
    await _due_now(conn, known, now)
    return known


def _due_update(known: Any, now: Any) -> Any:
    """The watch ``known`` made due at ``now`` unless it is due already (values or bind parameters): the one
    UPDATE of ``ensure_watch``'s general path and of ``make_due``'s direct statement."""
    return (
        update(flight_watches)
        .where(W.id == known, or_(W.next_check_at.is_(None), W.next_check_at > now))
        .values(next_check_at=now)
    )


async def _due_now(conn: AsyncConnection, known: int, now: datetime) -> None:
    await conn.execute(_due_update(known, now))


def _make_due_statement() -> DirectStatement:
    made = _due_update(bindparam("known"), bindparam("now", type_=W.next_check_at.type)).returning(W.id).cte("u")
    return DirectStatement(select(made.c.id).add_cte(made))


_MAKE_DUE = _make_due_statement()


async def make_due(db: Database, known: int, now: datetime) -> None:
    """``ensure_watch(known=...)`` of a watch the create read (``find_watch``) due later: made due now.

    On PostgreSQL its one UPDATE in autocommit by the direct path, not waiting for the WAL flush, as
    ``new_watch``, instead of a write transaction through the engine (BEGIN, UPDATE, COMMIT: three round
    trips; docs/operations/performance-history.md#create-cpu). The booking that follows commits durably and so
    flushes it; lost in a crash, the watch is checked at its previous slot. On SQLite the general path
    (tests/integration/test_flight_watch_ensure.py compares both with ``ensure_watch``)."""
    if db.is_sqlite:
        async with db.write() as conn:
            await _due_now(conn, known, now)
        return
    await db.write_one_unflushed(_MAKE_DUE, known=known, now=now)


_KEY = ("number", "airport_iata", "local_date")
_NEW_VALUES = ("number", "airport_iata", "local_date", "scheduled_arrival", "next_check_at", "failures")


def _new_values(number: str, airport_iata: str, scheduled_arrival: datetime, now: datetime) -> dict[str, Any]:
    """A new watch's columns (``_NEW_VALUES``), due now: ``ensure_watch`` and ``new_watch`` insert the same row."""
    return {
        "number": number,
        "airport_iata": airport_iata,
        "local_date": local_date(airport_iata, scheduled_arrival),
        "scheduled_arrival": scheduled_arrival,
        "next_check_at": now,
        "failures": 0,
    }


def _new_watch_statement() -> DirectStatement:
    made = (
        pg_insert(flight_watches)
        .values({k: bindparam(k, type_=flight_watches.c[k].type) for k in _NEW_VALUES})
        .on_conflict_do_nothing(index_elements=_KEY)
        .returning(W.id)
        .cte("w")
    )
    return DirectStatement(select(made.c.id).add_cte(made))


_NEW_WATCH = _new_watch_statement()


async def new_watch(db: Database, number: str, airport_iata: str, scheduled_arrival: datetime, now: datetime) -> int:
    """The watch of a flight no booking had when the create read it (``find_watch``), due now.

    On PostgreSQL one statement in autocommit by the direct path, not waiting for the WAL flush: most
    bookings are the first of their flight, and the write transaction it replaces (BEGIN, INSERT, COMMIT
    through the engine) was a third of a create's CPU in a profile of ``make bench``
    (docs/operations/performance-history.md#create-and-flight-watch). Losing it in a PostgreSQL crash loses nothing: the
    booking that takes it commits durably after it, which flushes it too; a watch whose create failed has no booking
    and ends at its first check. The statement is ``ensure_watch``'s own insert, not a second copy of a
    booking write (the frozen fast paths, ``bookings/fast_paths.py``, are the booking's). When another
    create inserted it first, or on SQLite, the general path (``ensure_watch``)."""
    if not db.is_sqlite:
        row = await db.write_one_unflushed(_NEW_WATCH, **_new_values(number, airport_iata, scheduled_arrival, now))
        if row is not None:
            return int(row["id"])
    async with db.write() as conn:
        return await ensure_watch(conn, number, airport_iata, scheduled_arrival, now)


def _dialect_insert(conn: AsyncConnection) -> Any:
    """INSERT with ON CONFLICT, in the connection's dialect (PostgreSQL's and SQLite's are the same SQL)."""
    return (sqlite_insert if conn.dialect.name == "sqlite" else pg_insert)(flight_watches)


_CALLS_SINCE = select(func.count().label("calls")).where(
    W.called_at > bindparam("since", type_=W.called_at.type), W.called_at <= bindparam("now", type_=W.called_at.type)
)
_CALLS = DirectStatement(_CALLS_SINCE)


async def calls_since(conn: AsyncConnection, since: datetime, now: datetime) -> int:
    """Provider calls made by every worker in (``since``, ``now``] (the per-minute budget). A call stamped
    after ``now`` (a worker whose clock runs ahead) is not counted against this minute: it would otherwise
    hold the whole budget until this worker's clock caught up."""
    return int((await conn.execute(_CALLS_SINCE, {"since": since, "now": now})).scalar_one())


async def calls_read(db: Database, since: datetime, now: datetime) -> int:
    """``calls_since`` outside any transaction (the direct path): how ``flight_watch.watch_pass`` finds the
    budget spent without opening a write transaction for nothing."""
    row = await db.read_one(_CALLS, since=since, now=now)
    return 0 if row is None else int(row["calls"])


async def claim_due(
    conn: AsyncConnection,
    now: datetime,
    *,
    limit: int,
    lease_until: datetime,
    watch_ids: Sequence[int] | None = None,
    answered_before: datetime | None = None,
) -> list[Watch]:
    """Up to ``limit`` watches due at ``now`` and not leased (only ``watch_ids`` when given; only those not
    answered for since ``answered_before`` when given), leased to the caller until ``lease_until``."""
    if limit <= 0:
        return []
    only: list[Any] = [] if watch_ids is None else [W.id.in_(list(watch_ids))]
    if answered_before is not None:
        only.append(or_(W.checked_at.is_(None), W.checked_at < answered_before))
    rows = await conn.execute(
        select(flight_watches)
        .where(W.next_check_at <= now, or_(W.lease_until.is_(None), W.lease_until < now), *only)
        .order_by(W.next_check_at, W.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    claimed = [Watch.from_row(r) for r in rows.mappings()]
    if claimed:
        await conn.execute(
            update(flight_watches)
            .where(W.id.in_([w.id for w in claimed]))
            .values(lease_until=lease_until, called_at=now)
        )
    return claimed


async def finish(
    conn: AsyncConnection,
    watch_id: int,
    *,
    next_check_at: datetime | None,
    checked_at: datetime | None = None,
    report: dict[str, Any] | None = None,
    error: str | None = None,
) -> None:
    """The watch after a check: answered (``report``, failures reset) or failed (``error``, one more failure)."""
    values: dict[str, Any] = {"next_check_at": next_check_at, "lease_until": None}
    if error is None:
        values.update(checked_at=checked_at, report=report, failures=0, last_error=None)
    else:
        values.update(failures=W.failures + 1, last_error=error[:1000])
    await conn.execute(update(flight_watches).where(W.id == watch_id).values(**values))


async def get_watch(conn: AsyncConnection, watch_id: int) -> Watch | None:
    row = (await conn.execute(select(flight_watches).where(W.id == watch_id))).mappings().first()
    return None if row is None else Watch.from_row(row)


async def watched_bookings_of(conn: AsyncConnection, watch_ids: Sequence[int]) -> dict[int, list[tuple[Booking, int]]]:
    """The live bookings of several watches in one read, row-locked, by watch id, each with its partner's
    ``follow_flight_minutes``."""
    found: dict[int, list[tuple[Booking, int]]] = {}
    for start in range(0, len(watch_ids), 1000):
        rows = await conn.execute(
            select(bookings, partners.c.follow_flight_minutes.label("p_follow_flight_minutes"))
            .join(partners, partners.c.id == bookings.c.partner_id)
            .where(
                bookings.c.flight_watch_id.in_(list(watch_ids[start : start + 1000])),
                bookings.c.status.in_(WATCHED_STATUSES),
            )
            .order_by(bookings.c.id)
            .with_for_update(of=bookings)
        )
        for r in rows.mappings():
            found.setdefault(int(r["flight_watch_id"]), []).append(
                (Booking.from_row(r), int(r["p_follow_flight_minutes"]))
            )
    return found


async def watches_with_pending(conn: AsyncConnection, watch_ids: Sequence[int]) -> set[int]:
    """Which of ``watch_ids`` have a booking the partner has not answered yet (PENDING): still to watch."""
    found: set[int] = set()
    for start in range(0, len(watch_ids), 1000):
        rows = await conn.execute(
            select(bookings.c.flight_watch_id)
            .where(
                bookings.c.flight_watch_id.in_(list(watch_ids[start : start + 1000])),
                bookings.c.status == BookingStatus.PENDING.value,
            )
            .distinct()
        )
        found.update(int(r[0]) for r in rows)
    return found


_SET_STATE = update(bookings).where(bookings.c.id == bindparam("b_id")).values(flight_state=bindparam("state"))
_FINISH = (
    update(flight_watches)
    .where(W.id == bindparam("b_id"))
    .values(
        next_check_at=bindparam("next_check_at"),
        checked_at=bindparam("checked_at"),
        report=bindparam("report"),
        lease_until=None,
        failures=0,
        last_error=None,
    )
)


async def set_flight_states(conn: AsyncConnection, states: Sequence[tuple[int, dict[str, Any]]]) -> None:
    """Each booking's new flight state (a check that changed nothing else on them), in one executemany."""
    if states:
        await conn.execute(_SET_STATE, [{"b_id": booking_id, "state": state} for booking_id, state in states])


async def finish_many(conn: AsyncConnection, answered: Sequence[dict[str, Any]]) -> None:
    """Answered watches (``b_id``, ``next_check_at``, ``checked_at``, ``report``): failures reset, lease freed."""
    if answered:
        await conn.execute(_FINISH, list(answered))


async def disrupted_within(conn: AsyncConnection, now: datetime, until: datetime, *, limit: int) -> list[Booking]:
    """Live bookings marked disrupted whose pickup is between ``now`` and ``until`` (the console's dashboard)."""
    rows = await conn.execute(
        select(bookings)
        .where(
            and_(
                bookings.c.flight_disrupted_at.is_not(None),
                bookings.c.status.in_(WATCHED_STATUSES),
                bookings.c.pickup_at >= now,
                bookings.c.pickup_at <= until,
            )
        )
        .order_by(bookings.c.pickup_at)
        .limit(limit)
    )
    return [Booking.from_row(r) for r in rows.mappings()]
