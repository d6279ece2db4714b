"""The general path's writer of side-effect steps (``bookings/effect_rows.py``): it runs them in the
caller's transaction, on every database, and fills each ``Of`` from what the statements answered.
"""

from __future__ import annotations

import graphlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import Insert as SqlInsert
from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.accounting import repository as journal_repo
from transfers.bookings import repository as repo
from transfers.bookings.effect_rows import (
    CHANGE,
    MOVED,
    Bump,
    Call,
    Insert,
    Of,
    OpenPeriod,
    Step,
    WalletMove,
    referenced,
)
from transfers.db.tables import metadata
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import InsufficientBalance, in_currency

if TYPE_CHECKING:
    from transfers.bookings.effects import Change


@dataclass(slots=True)
class _Made:
    """What the steps written so far answered, by step (identity)."""

    change: Change
    rows: dict[int, Mapping[str, Any]] = field(default_factory=dict)

    def value(self, value: Of) -> Any:
        step = value.step
        if step is MOVED:
            found = getattr(self.change.moved, value.column)
        elif step is CHANGE:
            found = getattr(self.change, value.column)
        else:
            found = self.rows[id(step)][value.column]
        return found + value.plus if value.plus else found

    def row(self, step: Insert) -> dict[str, Any]:
        return {**step.values, **{k: self.value(v) for k, v in step.made.items()}}


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
    made = [_Made(change) for change, _ in planned]
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
    by_wallet: dict[tuple[int, str], list[tuple[WalletMove, _Made]]] = {}
    for (_, steps), m in zip(planned, made, strict=True):
        for step in steps:
            if isinstance(step, WalletMove):
                by_wallet.setdefault((step.client_id, step.currency), []).append((step, m))
    at = now or (planned[0][0].now if planned else None)
    for (client_id, currency), moves in by_wallet.items():
        total = sum((step.delta for step, _ in moves), Decimal(0))
        row = (
            await conn.execute(
                wallet_repo.MOVE_BY_CLIENT,
                {"w_client_id": client_id, "w_currency": currency, "w_delta": total, "updated_at": at},
            )
        ).first()
        if row is None:
            raise InsufficientBalance()
        for step, _ in moves:  # as ``wallet_repo`` checks every move once the UPDATE named the currency
            in_currency(step.delta, str(row.currency))
        balance = Decimal(row.balance) - total
        for step, m in moves:
            balance += step.delta
            m.rows[id(step)] = {
                "id": int(row.id),
                "balance": balance,
                "currency": str(row.currency),
                "delta": step.delta,
            }


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
        order.add(step.table, *(v.step.table for v in step.made.values() if isinstance(v.step, Insert)))
    ids: dict[str, int] = {}
    by_table: dict[str, list[tuple[Insert, _Made]]] = {}
    for step, m in inserts:
        by_table.setdefault(step.table, []).append((step, m))
    for name in order.static_order():
        # one statement per set of columns and what it answers, in the steps' order
        groups: dict[tuple[tuple[str, ...], bool, str | None], list[tuple[Insert, _Made]]] = {}
        for step, m in by_table.get(name, ()):
            returning = id(step) in named or step.key is not None
            columns = tuple(sorted((*step.values, *step.made)))  # which ones are made does not matter here
            groups.setdefault((columns, returning, step.key), []).append((step, m))
        for (_, returning, key), members in groups.items():
            statement = _insert_statement(metadata.tables[members[0][0].table], returning, key)
            for start in range(0, len(members), repo.BATCH_ROWS):
                chunk = members[start : start + repo.BATCH_ROWS]
                rows = [m.row(step) for step, m in chunk]
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
