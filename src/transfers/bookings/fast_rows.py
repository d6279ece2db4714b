"""A status change's side-effect steps (``bookings/effect_rows.py``) as CTEs of one PostgreSQL statement.

The two frozen statements of ``bookings/fast_paths.py`` write the rows the effects' own functions
computed in Python, bound as parameters of the statement (``s{i}_{column}``, typed by the table's
column, so they go in exactly as the general path's INSERT sends them). Only what the statement
itself makes is taken from its CTEs: a value ``Of(MOVED, ...)`` from the booking row it inserted or
updated (``moved``: the new booking's id), a wallet move's ``id`` / ``balance`` / ``currency`` from
its conditional UPDATE (``wallet``), an event ``Bump`` from the booking UPDATE that took the numbers,
and a row's ``id`` from that row's INSERT. Every row is selected from ``moved``, so when the booking's
own INSERT or UPDATE writes nothing (a debit that does not fit, a booking no longer PENDING) no side
effect is written either.

The statement's SQL depends only on the steps' shape (tables, columns, which values are made), so
it is built once per shape; a step with no SQL form (``OpenPeriod``, ``Call``: rows that need a read
first) has no shape, and the caller takes the general path for that change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import CTE, ColumnElement, FromClause, bindparam, insert, select, true

from transfers.bookings.effect_rows import CHANGE, MOVED, Bump, Insert, Step, WalletMove
from transfers.db.tables import metadata
from transfers.wallet import repository as wallet_repo

# One part of a shape per step: ("wallet",), ("bump", count) or an insert's (table, columns, made, keyed):
# ``columns`` are bound as ``s{i}_{column}``; ``made`` names the columns whose value the statement makes,
# each (column, step index or -1 for the moved row or -2 for the change, that row's column, plus).
Shape = tuple[Any, ...]


class FastPlan(NamedTuple):
    """One change's steps as a statement's shape and this run's bind values."""

    shape: Shape
    params: dict[str, Any]
    keyed: tuple[tuple[str, str], ...]  # (result column, the keyed row's key value), e.g. an outbox message's
    wallet: bool  # a wallet move: the statement's CTE ``w`` (``wallet_repo.MOVE_BY_CLIENT``) must gate the booking
    bumped: int  # event numbers the booking row's own UPDATE must take (``event_sequence + bumped``)


def fast_plan(steps: Sequence[Step]) -> FastPlan | None:
    """``steps`` as a fast statement's shape and parameters, or None when a step has no SQL form.

    This runs on every create, so a row's known values are bound without a look at each (``zip``
    with its bind names, cached by position and columns); only its ``made`` values are read."""
    index = dict(_MARKERS)  # each step's position by identity; MOVED / CHANGE as their markers
    shape: list[Any] = []
    params: dict[str, Any] = {}
    keyed: list[tuple[str, str]] = []
    wallet, bumped = False, 0
    names_of = _NAMES
    for i, step in enumerate(steps):
        index[id(step)] = i
        if type(step) is Insert:
            values = step.values
            columns = tuple(values)
            names = names_of.get((i, columns))
            if names is None:
                names = names_of[(i, columns)] = tuple(f"s{i}_{name}" for name in columns)
            params.update(zip(names, values.values()))  # noqa: B905 (names are made from these very columns)
            made: list[Any] = []
            for name, of in step.made.items():
                made.append((name, index[id(of.step)], of.column, of.plus))
            key = step.key
            if key is not None:
                keyed.append((f"s{i}_id", str(values[key])))
            shape.append((step.table, columns, tuple(made), key is not None))
        elif type(step) is WalletMove:
            if wallet:
                return None  # one wallet move per statement (its bind names are the repository's)
            wallet = True
            params["w_client_id"], params["w_currency"], params["w_delta"] = step.client_id, step.currency, step.delta
            shape.append(_WALLET)
        elif type(step) is Bump:
            bumped += step.count
            shape.append(("bump", step.count))
        else:
            return None
    return FastPlan(tuple(shape), params, tuple(keyed), wallet, bumped)


_MOVED, _CHANGE = -1, -2
_MARKERS = {id(MOVED): _MOVED, id(CHANGE): _CHANGE}
_NAMES: dict[tuple[int, tuple[str, ...]], tuple[str, ...]] = {}  # a row's bind names, by position and columns
_WALLET = ("wallet",)


def step_ctes(
    shape: Shape, moved: CTE, wallet: CTE | None, now: ColumnElement[Any]
) -> tuple[list[CTE], dict[str, CTE]]:
    """The CTEs of a shape's rows over ``moved`` (the booking row written, ``RETURNING *``),
    ``wallet`` (the wallet move's UPDATE ``RETURNING id, balance, currency``) and ``now`` (the
    statement's bind of the change's instant); and the keyed rows' CTEs by result column, for the
    statement to answer their ids."""
    made: list[FromClause] = []
    ctes: list[CTE] = []
    keyed: dict[str, CTE] = {}
    last: dict[str, CTE] = {}  # of each table, the CTE of its latest row
    for i, part in enumerate(shape):
        if part == _WALLET:
            if wallet is None:
                raise ValueError("a wallet move needs the statement's wallet CTE")
            made.append(wallet)
            continue
        if part[0] == "bump":
            made.append(moved)  # the booking UPDATE took the numbers: ``event_sequence`` is the last
            continue
        name, columns, refs, is_keyed = part
        table = metadata.tables[name]
        values: list[ColumnElement[Any]] = [bindparam(f"s{i}_{c}", type_=table.c[c].type) for c in columns]
        sources: list[FromClause] = [moved]
        for _, target, column, plus in refs:
            value: ColumnElement[Any]
            if target == _CHANGE:
                value = now  # the one ``now`` of the change (``NOW``)
            elif target != _MOVED and made[target] is wallet and column == "delta":
                value = wallet_repo.DELTA  # the wallet move's own bind
            else:
                source = moved if target == _MOVED else made[target]
                value = source.c[column]
                if all(source is not s for s in sources):
                    sources.append(source)
            values.append(value + plus if plus else value)
        # Each CTE writes one row (or none). Selecting from the same table's row before it makes
        # PostgreSQL write them in the steps' order, so their ids run as the general path's do.
        before = last.get(name)
        if before is not None and all(before is not s for s in sources):
            sources.append(before)
        joined: FromClause = sources[0]
        for source in sources[1:]:
            joined = joined.join(source, true())
        cte = (
            insert(table)
            .from_select([*columns, *(ref[0] for ref in refs)], select(*values).select_from(joined))
            .returning(table.c.id)
            .cte(f"s{i}")
        )
        made.append(cte)
        ctes.append(cte)
        last[name] = cte
        if is_keyed:
            keyed[f"s{i}_id"] = cte
    return ctes, keyed
