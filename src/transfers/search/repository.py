"""Stored searches: the request, every offer and its partner-side facts, for booking to trust.

Statements are built once at import and executed with parameters: building ``insert(t).values(...)``
or ``select(...).where(...)`` per call, and SQLAlchemy deriving its cache key from it, cost more
CPU than executing the statement (docs/operations/performance-history.md#profile). The SQL sent is the same.

On PostgreSQL a search and all its offers are one statement (``_STORE``): the search row is
inserted in a data-modifying CTE and the offers from one JSON array parameter unpacked by
``json_to_recordset``, run in autocommit by the direct path, without waiting for the WAL flush
(``Database.write_one_unflushed``: a search is cheap to repeat, and a PostgreSQL crash costs at most
the last fraction of a second of them). Through the engine (BEGIN, INSERT, executemany, COMMIT and
a bind processor per offer value) storing a 10-partner search took ~6 ms, a third of the service's
own time in a search, with commit stalls of up to 360 ms on this disk. On SQLite the search row
and its offers are one transaction in one trip to aiosqlite's thread (``Database.sqlite_write``).

Either way the record is committed before the search is answered, so a booking that sends the
``search_id`` finds it from any process; what a PostgreSQL crash can lose is said at
``Database.write_one_unflushed`` and in (docs/operations/performance-history.md#search-fan-out).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter
from typing import Any

from sqlalchemy import JSON, bindparam, column, func, insert, select, true
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.dml import Insert

from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import search_vehicles, searches
from transfers.search.offers import Offer
from transfers.search.rules import SearchQuery

# Every column is written explicitly, by both paths: a column added later with a server default
# must be given a value here too (json_to_recordset would otherwise write NULL into it, not the default).
_SEARCH_KEYS = tuple(c.name for c in searches.c if c.name != "id")
_VEHICLE_KEYS = tuple(c.name for c in search_vehicles.c if c.name not in ("id", "search_pk"))


def _store_statement() -> DirectStatement:
    s = (
        insert(searches)
        .values({k: bindparam(k, type_=searches.c[k].type) for k in _SEARCH_KEYS})
        .returning(searches.c.id)
        .cte("s")
    )
    rows = (
        func.json_to_recordset(bindparam("offers", type_=JSON))
        .table_valued(*(column(k, search_vehicles.c[k].type) for k in _VEHICLE_KEYS))
        .render_derived(with_types=True)
    )
    vehicles = (
        insert(search_vehicles)
        .from_select(
            ["search_pk", *_VEHICLE_KEYS],
            select(s.c.id, *(rows.c[k] for k in _VEHICLE_KEYS)).select_from(s.join(rows, true())),
        )
        .cte("v")
    )
    return DirectStatement(select(s.c.id).add_cte(vehicles))


_STORE = _store_statement()


@dataclass(frozen=True)
class _SqliteInsert:
    """An INSERT compiled once for SQLite: its SQL, and per parameter (in the driver's order) its
    name and the bind processor the engine would apply (JSON, instants, money)."""

    sql: str
    names: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]

    @classmethod
    def of(cls, statement: Insert, dialect: Dialect) -> _SqliteInsert:
        compiled = statement.compile(dialect=dialect)
        names = tuple(compiled.positiontup or ())
        return cls(
            compiled.string,
            names,
            tuple(compiled.binds[n].type.dialect_impl(dialect).bind_processor(dialect) for n in names),
        )

    def arguments(self, values: dict[str, Any]) -> list[Any]:
        return [
            proc(values[name]) if proc is not None else values[name]
            for name, proc in zip(self.names, self.processors, strict=True)
        ]

    def offer_rows(self, offers: list[Offer]) -> list[list[Any]]:
        """The offers' parameters, each what ``arguments({"search_pk": None, **offer.stored()})`` gives
        (``search_pk`` None, for the caller to fill in), without that dict: the columns read from the
        offer itself in one call (``Offer``'s fields are the columns), ``extras`` and
        ``cancellation_policy`` in their stored form, a policy shared by many offers (their partner's
        default) rendered once. A value object met again is not processed again: the offers of a
        search share a few prices and their partner's policy, and the processors (money to integers,
        JSON to text) cost ~2-4 k instructions a value. By identity, so each result is that
        value's own processing (every value remembered is held by the offers or here until the end, so
        no identity is reused)."""
        at = self.names.index("search_pk")
        read = attrgetter(*(name for name in self.names if name != "search_pk"))
        extras_at, policy_at = self.names.index("extras"), self.names.index("cancellation_policy")
        # The extras are made here for each row (and dropped once processed, so their identity could be
        # a later row's): processed each time, never remembered; their prices' texts are remembered
        # (``OfferedExtra.stored``: the price objects are the offers', alive until the end).
        memos: list[tuple[int, Callable[[Any], Any], dict[int, Any]]] = [
            (i, proc, {}) for i, proc in enumerate(self.processors) if proc is not None and i not in (at, extras_at)
        ]
        extras_processor = self.processors[extras_at] or (lambda value: value)
        policies: dict[int, list[dict[str, Any]]] = {}
        exact: dict[int, str] = {}  # the extras' prices as text (``OfferedExtra.stored``)
        out = []
        for offer in offers:
            row = list(read(offer))
            row.insert(at, None)
            row[extras_at] = extras_processor([e.stored(exact) for e in offer.extras])
            policy = offer.cancellation_policy
            row[policy_at] = policies.get(id(policy)) or policies.setdefault(id(policy), policy.public())
            for i, proc, memo in memos:
                value = row[i]
                done = memo.get(id(value), _UNSET)
                if done is _UNSET:
                    done = memo[id(value)] = proc(value)
                row[i] = done
            out.append(row)
        return out


_UNSET = object()
_SQLITE: dict[str, tuple[_SqliteInsert, _SqliteInsert]] = {}


def _sqlite_inserts(dialect: Dialect) -> tuple[_SqliteInsert, _SqliteInsert]:
    """The engine's dialect carries the JSON serialiser the bind processors use: compiled per
    dialect object's name once (one engine per process in practice)."""
    found = _SQLITE.get(dialect.name)
    if found is None:
        search = insert(searches).values({k: bindparam(k, type_=searches.c[k].type) for k in _SEARCH_KEYS})
        vehicle_keys = ("search_pk", *_VEHICLE_KEYS)
        vehicles = insert(search_vehicles).values(
            {k: bindparam(k, type_=search_vehicles.c[k].type) for k in vehicle_keys}
        )
        found = _SQLITE[dialect.name] = (_SqliteInsert.of(search, dialect), _SqliteInsert.of(vehicles, dialect))
    return found


async def insert_search(
    db: Database,
    *,
    search_id: str,
    client_id: int,
    request: dict[str, Any],
    query: SearchQuery,
    distance_km: int | None,
    offers: list[Offer],
    now: datetime,
    expires_at: datetime,
) -> None:
    search = {
        "search_id": search_id,
        "client_id": client_id,
        "request": request,
        "airport_iata": query.airport.iata,
        "pickup_at": query.pickup_at,
        "return_pickup_at": query.return_at,  # docs/rules/return-trips.md#search
        "pickup_location": query.location(pickup=True),
        "dropoff_location": query.location(pickup=False),
        "adult": query.adult,
        "children": query.children,
        "infant": query.infant,
        "distance_km": distance_km,
        "created_at": now,
        "expires_at": expires_at,
    }
    if db.is_sqlite:
        await _insert_sqlite(db, search, offers)
        return
    await db.write_one_unflushed(_STORE, offers=_postgres_rows(offers), **search)


def _postgres_rows(offers: list[Offer]) -> list[dict[str, Any]]:
    """The offers as ``json_to_recordset``'s items: ``offer.stored()`` with its money as the Decimal's exact
    ``str`` (checked against its currency when the offer was priced, ``partners.models.sell_price``),
    read by PostgreSQL's numeric input, which takes any exponent: no float and no rounding on
    the way. What the offers share is made once per store: a policy shared by many offers (their
    partner's default) rendered once; each price object's text made once, the offers' and the extras'
    own ``str`` (the partners' quotes and their prices are remembered, ``wire._price``,
    ``models.sell_price``, and a quantize or a str costs ~1-2 k instructions). By identity, not
    value: 45.1 and 45.10 are equal keys, and every object here is alive until the end (held by the offers)."""
    policies: dict[int, list[dict[str, Any]]] = {}
    texts: dict[int, str] = {}  # a price's exact ``str``
    exact: dict[int, str] = {}  # an extra's price as ``str``, as OfferedExtra.stored() writes it
    vehicles = []
    for offer in offers:
        policy = offer.cancellation_policy
        rendered = policies.get(id(policy))
        if rendered is None:
            rendered = policies[id(policy)] = policy.public()
        row = offer.stored(rendered, exact)
        net, sell = offer.net_price, offer.sell_price
        row["net_price"] = texts.get(id(net)) or texts.setdefault(id(net), str(net))
        row["sell_price"] = texts.get(id(sell)) or texts.setdefault(id(sell), str(sell))
        own = offer.partner_net_price
        if own is not None:  # converted (docs/rules/fx.md#search): the partner's own price
            row["partner_net_price"] = texts.get(id(own)) or texts.setdefault(id(own), str(own))
        vehicles.append(row)
    return vehicles


async def _insert_sqlite(db: Database, search: dict[str, Any], offers: list[Offer]) -> None:
    """The search row, then its offers by one executemany, in one transaction, in one trip to the database
    thread (``Database.sqlite_write``); the parameters processed here, as the engine would."""
    insert_search, insert_vehicle = _sqlite_inserts(db.engine.dialect)
    search_args = insert_search.arguments(search)
    at = insert_vehicle.names.index("search_pk")
    rows = insert_vehicle.offer_rows(offers)

    def work(conn: sqlite3.Connection) -> None:
        search_pk = conn.execute(insert_search.sql, search_args).lastrowid
        for row in rows:
            row[at] = search_pk
        if rows:
            conn.executemany(insert_vehicle.sql, rows)

    await db.sqlite_write(work)
