"""What a side effect of a status change writes, as values (docs/architecture/how-to-add.md, "A side effect").

A side effect (``bookings/effects.EFFECTS``) is one pure function of the change that answers its
steps: mostly ``Insert`` (a table and one row's columns), in the order they are written. A value
the write itself makes, which the rule cannot know before it runs, is named by ``Of`` (a column
of an earlier step's row, or of the booking row as moved: ``MOVED``). Two writers take the same
steps:

* ``write_steps`` / ``write_steps_many`` here (the general path, every database, inside the
  caller's transaction), which run them and fill each ``Of`` from what they answered;
* ``bookings/fast_rows.py`` (PostgreSQL's two frozen statements, ``bookings/fast_paths.py``),
  which binds the same values as the parameters of one statement and fills each ``Of`` from its
  CTEs. A step it has no SQL form for (``OpenPeriod``, ``Call``) makes it step aside: the change
  then takes the general path.

So no rule is written twice: a new side effect is one function answering steps.
"""

from __future__ import annotations

import graphlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert as SqlInsert
from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting import repository as journal_repo
from transfers.bookings import repository as repo
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import InsufficientBalance

if TYPE_CHECKING:
    from transfers.bookings.effects import Change


class Moved:
    """The booking row as the change moved (or inserted) it: ``Of(MOVED, "id")``. The general path
    has it as ``change.moved``; a fast statement as its ``RETURNING *`` CTE (a creation's id is
    only known there)."""

    def __repr__(self) -> str:
        return "MOVED"


MOVED = Moved()


@dataclass(frozen=True, slots=True)
class Of:
    """A value the write makes: ``column`` of ``step``'s row (``Insert``: ``id``; ``WalletMove``:
    ``id``, ``balance``, ``currency``; ``Bump``: ``event_sequence``; ``OpenPeriod``: ``period``;
    ``MOVED``: any booking column), plus ``plus``."""

    step: Step | Moved
    column: str
    plus: int = 0


BOOKING_ID = Of(MOVED, "id")


@dataclass(eq=False, slots=True)
class Insert:
    """One row of ``table``: its columns' values (plain, or ``Of``). ``key``: a column whose value
    names the row's id in what ``write_effects_many`` answers (the outbox's ``webhook_id``)."""

    table: Table
    values: dict[str, Any]
    key: str | None = None


@dataclass(eq=False, slots=True)
class WalletMove:
    """The client's wallet moved by ``delta`` if its balance stays >= 0 (``wallet_repo.MOVE_BY_CLIENT``,
    the one "never below zero" move); InsufficientBalance, and nothing written, when it does not fit."""

    client_id: int
    delta: Decimal


@dataclass(eq=False, slots=True)
class Bump:
    """The booking's next ``count`` client-event sequence numbers (``event_sequence`` after: the last)."""

    count: int


@dataclass(eq=False, slots=True)
class OpenPeriod:
    """The statement month a partner's journal line counts in (``journal_repo.open_period``: it reads
    the partner's closed statements). The general path only."""

    partner_id: int
    currency: str


@dataclass(eq=False, slots=True)
class Call:
    """A write that needs the database before it knows its rows (a hosted seat's counter, the
    journal's recoveries, which read the journal): ``run`` does what it must and answers further
    steps, written after it. The general path only: a fast statement steps aside for a change with one."""

    run: Callable[[AsyncConnection], Awaitable[Sequence[Step] | None]]


Step = Insert | WalletMove | Bump | OpenPeriod | Call


@dataclass(slots=True)
class _Made:
    """What the steps written so far answered, by step (identity)."""

    moved: Any
    rows: dict[int, Mapping[str, Any]] = field(default_factory=dict)

    def value(self, value: Any) -> Any:
        if not isinstance(value, Of):
            return value
        row = self.rows[id(value.step)] if value.step is not MOVED else None
        found = getattr(self.moved, value.column) if row is None else row[value.column]
        return found + value.plus if value.plus else found


def referenced(steps: Sequence[Step]) -> set[int]:
    """The steps (by identity) whose row another step names."""
    return {id(v.step) for s in steps if isinstance(s, Insert) for v in s.values.values() if isinstance(v, Of)}


_INSERTS: dict[tuple[str, str | None], SqlInsert] = {}


def _insert_statement(table: Table, returning: bool, key: str | None) -> SqlInsert:
    """The INSERT of a group of rows, built once: plain; answering each row's id in the rows'
    order (for the rows that name it); or answering (key, id) pairs, matched by key (no order asked
    of the batch: on SQLite an ordered RETURNING is one statement per row)."""
    name = "" if not returning else key or "#"
    found = _INSERTS.get((table.name, name))
    if found is None:
        statement = insert(table)
        if key is not None:
            statement = statement.returning(table.c[key], table.c.id)
        elif returning:
            statement = statement.returning(table.c.id, sort_by_parameter_order=True)
        found = _INSERTS[(table.name, name)] = statement
    return found


async def write_steps(conn: AsyncConnection, change: Change, steps: Sequence[Step]) -> dict[str, int]:
    """Run one change's ``steps`` in order in the caller's transaction; the ids of keyed rows."""
    return await write_steps_many(conn, [(change, steps)])


async def write_steps_many(
    conn: AsyncConnection, planned: Sequence[tuple[Change, Sequence[Step]]], *, now: datetime | None = None
) -> dict[str, int]:
    """Several changes' steps (of one side effect), each kind in as few statements as it can: the
    sequence bumps in one UPDATE, the wallet moves one UPDATE per wallet by their sum (all fit or
    InsufficientBalance; each move's ``balance`` as if posted one by one), the rows one multi-row
    INSERT per table and set of columns (``repo.BATCH_ROWS`` rows each), tables in the order their
    rows name each other. Answers the ids of keyed rows by key."""
    made = [_Made(change.moved if change.booking is not None else None) for change, _ in planned]
    await _bump(conn, planned, made)
    await _move_wallets(conn, planned, made, now)
    for (_, steps), m in zip(planned, made, strict=True):
        for step in steps:
            if isinstance(step, OpenPeriod):
                m.rows[id(step)] = {
                    "period": await journal_repo.open_period(
                        conn, step.partner_id, step.currency, now or planned[0][0].now
                    )
                }
    ids = await _insert(conn, planned, made)
    for change, steps in planned:
        for step in steps:
            if isinstance(step, Call):
                more = await step.run(conn)
                if more:
                    ids.update(await write_steps(conn, change, more))
    return ids


async def _bump(conn: AsyncConnection, planned: Sequence[tuple[Change, Sequence[Step]]], made: list[_Made]) -> None:
    bumps = [
        (change.moved.id, step, m)
        for (change, steps), m in zip(planned, made, strict=True)
        for step in steps
        if isinstance(step, Bump)
    ]
    if not bumps:
        return
    if len(bumps) == 1:
        booking_id, step, m = bumps[0]
        m.rows[id(step)] = {"event_sequence": await repo.bump_event_sequence(conn, booking_id, step.count)}
        return
    counts = {booking_id: step.count for booking_id, step, _ in bumps}
    if len(counts) != len(bumps):
        raise ValueError("one booking's changes are written one at a time: their events take successive numbers")
    last = await repo.bump_event_sequences(conn, counts)
    for booking_id, step, m in bumps:
        m.rows[id(step)] = {"event_sequence": last[booking_id]}


async def _move_wallets(
    conn: AsyncConnection, planned: Sequence[tuple[Change, Sequence[Step]]], made: list[_Made], now: datetime | None
) -> None:
    by_client: dict[int, list[tuple[WalletMove, _Made]]] = {}
    for (_, steps), m in zip(planned, made, strict=True):
        for step in steps:
            if isinstance(step, WalletMove):
                by_client.setdefault(step.client_id, []).append((step, m))
    at = now or (planned[0][0].now if planned else None)
    for client_id, moves in by_client.items():
        total = sum((step.delta for step, _ in moves), Decimal(0))
        row = (
            await conn.execute(
                wallet_repo.MOVE_BY_CLIENT, {"w_client_id": client_id, "w_delta": total, "updated_at": at}
            )
        ).first()
        if row is None:
            raise InsufficientBalance()
        balance = Decimal(row.balance) - total
        for step, m in moves:
            balance += step.delta
            m.rows[id(step)] = {"id": int(row.id), "balance": balance, "currency": str(row.currency)}


async def _insert(
    conn: AsyncConnection, planned: Sequence[tuple[Change, Sequence[Step]]], made: list[_Made]
) -> dict[str, int]:
    inserts = [
        (step, m) for (_, steps), m in zip(planned, made, strict=True) for step in steps if isinstance(step, Insert)
    ]
    if not inserts:
        return {}
    named = set().union(*(referenced(steps) for _, steps in planned))
    order = graphlib.TopologicalSorter[str]()
    for step, _ in inserts:
        order.add(
            step.table.name,
            *(v.step.table.name for v in step.values.values() if isinstance(v, Of) and isinstance(v.step, Insert)),
        )
    ids: dict[str, int] = {}
    by_table: dict[str, list[tuple[Insert, _Made]]] = {}
    for step, m in inserts:
        by_table.setdefault(step.table.name, []).append((step, m))
    for name in order.static_order():
        # one statement per set of columns and what it answers, in the steps' order
        groups: dict[tuple[tuple[str, ...], bool, str | None], list[tuple[Insert, _Made]]] = {}
        for step, m in by_table.get(name, ()):
            returning = id(step) in named or step.key is not None
            groups.setdefault((tuple(step.values), returning, step.key), []).append((step, m))
        for (_, returning, key), members in groups.items():
            statement = _insert_statement(members[0][0].table, returning, key)
            for start in range(0, len(members), repo.BATCH_ROWS):
                chunk = members[start : start + repo.BATCH_ROWS]
                rows = [{k: m.value(v) for k, v in step.values.items()} for step, m in chunk]
                if not returning:
                    await conn.execute(statement, rows if len(rows) > 1 else rows[0])
                    continue
                if key is not None:
                    result = await conn.execute(statement, rows if len(rows) > 1 else rows[0])
                    by_key = {str(k): int(i) for k, i in result}
                    new_ids = [by_key[str(row[key])] for row in rows]
                    ids.update(by_key)
                elif len(rows) == 1:
                    new_ids = [int((await conn.execute(statement, rows[0])).scalar_one())]
                else:
                    new_ids = [int(i) for i in (await conn.execute(statement, rows)).scalars()]
                for (step, m), new_id in zip(chunk, new_ids, strict=True):
                    m.rows[id(step)] = {"id": new_id}
    return ids
