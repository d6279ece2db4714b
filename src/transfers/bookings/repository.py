"""Booking persistence, always scoped by owner: a route never filters by id by hand."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, null, or_, select, true, update
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.bookings.resource import RESOURCE_FIELDS
from transfers.bookings.state import BookingStatus
from transfers.db.direct import DirectStatement
from transfers.db.engine import Database
from transfers.db.tables import (
    booking_transitions,
    bookings,
    ledger_entries,
    outbox,
    partners,
    search_vehicles,
    searches,
)
from transfers.outbox import repository as outbox_repo
from transfers.wallet import repository as wallet_repo
from transfers.wallet.ledger import InsufficientBalance, LedgerKind, signed_amount

# The create path's statements are built once and run with parameter dicts: building them per call
# (``insert(...).values(**values)``) and generating their cache keys was ~13 % of a create
# (bench/README.md, "Profile"). Bind names in WHERE clauses carry a ``b_`` prefix so they never
# collide with the column names an UPDATE takes its SET clause from.
_INSERT_BOOKING = insert(bookings).returning(bookings.c.id)
_INSERT_TRANSITION = insert(booking_transitions)
_BY_ID = select(bookings).where(bookings.c.id == bindparam("b_id"))
_UPDATE = update(bookings).where(bookings.c.id == bindparam("b_id"))
_SET_STATUS = _UPDATE.where(bookings.c.status == bindparam("b_expected"))
_MOVE_STATUS = _SET_STATUS.returning(*bookings.c)

_VEHICLE = [c.label(f"v_{c.name}") for c in search_vehicles.c]
_VEHICLE_NAMES = tuple((c.name, f"v_{c.name}") for c in search_vehicles.c)
_PARTNER = [partners.c.name.label("p_name"), partners.c.base_url.label("p_base_url"),
            partners.c.outbound_token_enc.label("p_token_enc"), partners.c.signing_secret_enc.label("p_secret_enc")]
# The caller's unexpired search, the chosen vehicle and its partner's endpoint in one statement: the
# vehicle (and its partner) are outer-joined, so a visible search with an unknown vehicle number
# still answers (SPEC 7.2 tells "no such search" from "no such vehicle").
_OFFER = DirectStatement(
    select(searches.c.id, searches.c.airport_iata, searches.c.pickup_at, searches.c.pickup_location,
           searches.c.dropoff_location, searches.c.adult, searches.c.children, searches.c.infant,
           searches.c.distance_km, *_VEHICLE, *_PARTNER)
    .select_from(searches.outerjoin(search_vehicles, (search_vehicles.c.search_pk == searches.c.id)
                                    & (search_vehicles.c.vehicle_no == bindparam("b_vehicle_no")))
                 .outerjoin(partners, partners.c.id == search_vehicles.c.partner_id))
    .where(searches.c.search_id == bindparam("b_search_id"), searches.c.client_id == bindparam("b_client_id"),
           searches.c.expires_at > bindparam("b_now"))
)
_SEARCH_KEYS = ("id", "airport_iata", "pickup_at", "pickup_location", "dropoff_location", "adult", "children",
                "infant", "distance_km")


async def find_offer(db: Database, *, client_id: int, search_id: str, vehicle_no: int | None,
                     now: datetime) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(search, vehicle, partner) in one round trip by the direct path (``db/direct.py``): the
    vehicle's partner (name, base URL, sealed secrets) comes along so the create's own delivery
    attempt needs no read of its own. The search is None when it is not visible (missing, expired or
    another client's); the vehicle and partner are None when the number is unknown."""
    row = await db.read_one(_OFFER, b_vehicle_no=vehicle_no, b_search_id=search_id, b_client_id=client_id, b_now=now)
    if row is None:
        return None, None, None
    search = {k: row[k] for k in _SEARCH_KEYS}
    if row["v_id"] is None:
        return search, None, None
    vehicle = {name: row[label] for name, label in _VEHICLE_NAMES}
    partner = {"id": vehicle["partner_id"], "name": row["p_name"], "base_url": row["p_base_url"],
               "token_enc": row["p_token_enc"], "secret_enc": row["p_secret_enc"]}
    return search, vehicle, partner


async def insert_booking(conn: AsyncConnection, values: dict[str, Any]) -> int:
    return int((await conn.execute(_INSERT_BOOKING, values)).scalar_one())


async def store_created(db: Database, values: dict[str, Any], *, actor: str, message: dict[str, Any],
                        debit: dict[str, Any] | None) -> tuple[int, int]:
    """Write a new booking, its "created" audit row, the partner's create message (``message``, from
    ``outbox.repository.new_message``) and, when ``debit`` is given (``client_id``, ``amount``,
    ``note``), the wallet debit with its ledger entry; returns (booking id, message id).

    Raises InsufficientBalance when the debit does not fit. On PostgreSQL all of it is one
    statement (data-modifying CTEs, ``_created_statement``) that writes nothing when the debit does
    not fit: one round trip instead of six, atomic by itself, so it runs in autocommit by the direct
    path (``Database.write_one``). SQLite (no DML in CTEs) runs the same writes one by one, the
    debit last, in one write transaction (rolled back on InsufficientBalance)."""
    now = values["created_at"]
    if db.is_sqlite:
        async with db.write() as conn:
            booking_id = await insert_booking(conn, values)
            await record_transition(conn, booking_id=booking_id, from_status=None, to_status=values["status"],
                                    actor=actor, reason="created", now=now)
            message["booking_id"] = booking_id
            outbox_id = await outbox_repo.insert_message(conn, message)
            if debit is not None:  # last: it locks the wallet until COMMIT (bench/README.md, "Profile")
                await wallet_repo.post_entry_for_client(conn, client_id=debit["client_id"],
                                                        kind=LedgerKind.DEBIT_BOOKING, amount=debit["amount"],
                                                        now=now, booking_id=booking_id, note=debit["note"])
        return booking_id, outbox_id
    params = {**{f"bk_{k}": v for k, v in values.items()}, "t_actor": actor,
              **{f"o_{k}": v for k, v in message.items() if k != "booking_id"}}
    if debit is not None:
        params.update(w_client_id=debit["client_id"], w_note=debit["note"],
                      w_delta=signed_amount(LedgerKind.DEBIT_BOOKING, debit["amount"]))
    row = await db.write_one(_created_statement(tuple(values), debit is not None), **params)
    if row is None:  # the debit did not fit, so nothing was written
        raise InsufficientBalance()
    message.update(id=int(row["outbox_id"]), booking_id=int(row["booking_id"]))
    return int(row["booking_id"]), int(row["outbox_id"])


_OUTBOX_KEYS = ("partner_id", "kind", "webhook_id", "payload", "status", "attempts", "next_attempt_at", "deadline_at",
                "lease_until", "created_at")
_CREATED: dict[tuple[tuple[str, ...], bool], DirectStatement] = {}


def _created_statement(keys: tuple[str, ...], debit: bool) -> DirectStatement:
    """``store_created``'s PostgreSQL statement for this set of booking columns, built once.

    With a debit, the booking is inserted from the wallet UPDATE's RETURNING row, and everything
    else from the booking's: when the balance does not cover the price the UPDATE matches no row
    and nothing at all is written (the statement answers no row), so the statement is atomic and
    complete on its own, even in autocommit."""
    found = _CREATED.get((keys, debit))
    if found is not None:
        return found
    now = bindparam("bk_created_at", type_=bookings.c.created_at.type)
    booking = {k: bindparam(f"bk_{k}", type_=bookings.c[k].type) for k in keys}
    ctes = []
    if debit:
        delta = wallet_repo.DELTA
        w = wallet_repo.MOVE_BY_CLIENT.values(updated_at=now).cte("w")
        b = (insert(bookings).from_select(list(keys), select(*booking.values()).select_from(w))
             .returning(bookings.c.id).cte("b"))
        ctes.append(insert(ledger_entries).from_select(
            ["wallet_id", "kind", "amount", "booking_id", "note", "created_at"],
            select(w.c.id, bindparam("w_kind", LedgerKind.DEBIT_BOOKING.value, type_=ledger_entries.c.kind.type),
                   delta, b.c.id, bindparam("w_note", type_=ledger_entries.c.note.type), now)
            .select_from(w.join(b, true())),
        ).cte("l"))
    else:
        b = insert(bookings).values(booking).returning(bookings.c.id).cte("b")
    ctes.append(insert(booking_transitions).from_select(
        ["booking_id", "from_status", "to_status", "actor", "reason", "created_at"],
        select(b.c.id, null(), booking["status"], bindparam("t_actor", type_=booking_transitions.c.actor.type),
               bindparam("t_reason", "created", type_=booking_transitions.c.reason.type), now),
    ).cte("t"))
    message = (bindparam(f"o_{k}", type_=outbox.c[k].type) for k in _OUTBOX_KEYS)
    o = (insert(outbox).from_select(["booking_id", *_OUTBOX_KEYS], select(b.c.id, *message))
         .returning(outbox.c.id).cte("o"))
    statement = DirectStatement(select(b.c.id.label("booking_id"), o.c.id.label("outbox_id"))
                           .select_from(b.join(o, true())).add_cte(*ctes))
    _CREATED[(keys, debit)] = statement
    return statement


# Built once: GET and cancel run it on every request, and building the expression and its cache key
# each time was ~6 % of a GET booking (bench/README.md, "Profile").
_FOR_CLIENT = select(bookings).where(bookings.c.reservation_no == bindparam("reservation_no"),
                                     bookings.c.client_id == bindparam("client_id"))
_RESOURCE_FOR_CLIENT = DirectStatement(_FOR_CLIENT.with_only_columns(*(bookings.c[name] for name in RESOURCE_FIELDS)))


async def resource_fields_for_client(db: Database, client_id: int, reservation_no: str) -> dict[str, Any] | None:
    """The GET booking read: the resource's fields only, one statement outside any transaction,
    by the direct path (``db/direct.py``)."""
    return await db.read_one(_RESOURCE_FOR_CLIENT, reservation_no=reservation_no, client_id=client_id)


async def get_for_client(conn: AsyncConnection, client_id: int, reservation_no: str) -> dict[str, Any] | None:
    row = (await conn.execute(_FOR_CLIENT, {"reservation_no": reservation_no, "client_id": client_id})
           ).mappings().first()
    return dict(row) if row else None


async def get_for_partner(conn: AsyncConnection, partner_id: int, reservation_no: str) -> dict[str, Any] | None:
    row = (await conn.execute(
        select(bookings).where(bookings.c.reservation_no == reservation_no, bookings.c.partner_id == partner_id)
    )).mappings().first()
    return dict(row) if row else None


async def get_by_idempotency_key(conn: AsyncConnection, client_id: int, key: str) -> dict[str, Any] | None:
    row = (await conn.execute(
        select(bookings).where(bookings.c.client_id == client_id, bookings.c.idempotency_key == key)
    )).mappings().first()
    return dict(row) if row else None


async def get_by_id(conn: AsyncConnection, booking_id: int) -> dict[str, Any] | None:
    row = (await conn.execute(_BY_ID, {"b_id": booking_id})).mappings().first()
    return dict(row) if row else None


async def get_by_reservation(conn: AsyncConnection, reservation_no: str) -> dict[str, Any] | None:
    """Operator view only (CLI): not scoped by owner."""
    row = (await conn.execute(select(bookings).where(bookings.c.reservation_no == reservation_no))).mappings().first()
    return dict(row) if row else None


async def set_status(conn: AsyncConnection, booking_id: int, expected: str, values: dict[str, Any]) -> bool:
    """Compare-and-set on the status: False when another transaction moved the booking first."""
    result = await conn.execute(_SET_STATUS, {**values, "b_id": booking_id, "b_expected": expected})
    return result.rowcount == 1


async def move_status(conn: AsyncConnection, booking_id: int, expected: str,
                      values: dict[str, Any]) -> dict[str, Any] | None:
    """``set_status`` that also answers the whole row as updated (and now locked by this transaction),
    for callers that did not read it first; None when the status was not ``expected``."""
    row = (await conn.execute(_MOVE_STATUS, {**values, "b_id": booking_id, "b_expected": expected})
           ).mappings().first()
    return dict(row) if row else None


async def update_fields(conn: AsyncConnection, booking_id: int, values: dict[str, Any]) -> None:
    await conn.execute(_UPDATE, {**values, "b_id": booking_id})


async def record_transition(conn: AsyncConnection, *, booking_id: int, from_status: str | None, to_status: str,
                            actor: str, reason: str | None, now: datetime) -> None:
    await conn.execute(_INSERT_TRANSITION, {
        "booking_id": booking_id, "from_status": from_status, "to_status": to_status, "actor": actor,
        "reason": reason, "created_at": now,
    })


async def transitions_of(conn: AsyncConnection, booking_id: int) -> list[dict[str, Any]]:
    rows = await conn.execute(select(booking_transitions).where(booking_transitions.c.booking_id == booking_id)
                              .order_by(booking_transitions.c.id))
    return [dict(r._mapping) for r in rows]


async def release_idempotency_key(conn: AsyncConnection, client_id: int, key: str, *,
                                  created_before: datetime) -> None:
    """Free the client's Idempotency-Key held by a booking created before ``created_before``."""
    await conn.execute(update(bookings).where(
        bookings.c.client_id == client_id, bookings.c.idempotency_key == key, bookings.c.created_at < created_before,
    ).values(idempotency_key=None))


# --- Claims of the scheduled jobs (``jobs/scheduled.py``) -----------------------------------------

async def lock_approved_before(conn: AsyncConnection, cutoff: datetime, *, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` APPROVED bookings picked up at or before ``cutoff``, row-locked (skipping rows
    another worker holds on PostgreSQL; SQLite's write transaction excludes others)."""
    rows = await conn.execute(
        select(bookings).where(bookings.c.status == BookingStatus.APPROVED.value, bookings.c.pickup_at <= cutoff)
        .limit(limit).with_for_update(skip_locked=True))
    return [dict(r._mapping) for r in rows]


async def claim_unsynced(conn: AsyncConnection, statuses: Sequence[str], *, older_than: datetime, now: datetime,
                         limit: int) -> list[tuple[int, str, int]]:
    """Claim up to ``limit`` bookings in ``statuses`` created and last synced (if ever) no later than
    ``older_than``: their ``synced_at`` becomes ``now``, so no other worker claims them before the
    same age passes again. Returns (id, reservation_no, partner_id) of each."""
    candidates = (
        select(bookings.c.id).where(
            bookings.c.status.in_(list(statuses)), bookings.c.created_at <= older_than,
            or_(bookings.c.synced_at.is_(None), bookings.c.synced_at <= older_than),
        ).limit(limit).with_for_update(skip_locked=True)
    )
    rows = (await conn.execute(
        update(bookings).where(bookings.c.id.in_(candidates.scalar_subquery())).values(synced_at=now)
        .returning(bookings.c.id, bookings.c.reservation_no, bookings.c.partner_id)
    )).all()
    return [(int(i), str(no), int(p)) for i, no, p in rows]
