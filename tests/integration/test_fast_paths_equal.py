"""Each PostgreSQL fast statement writes exactly what the general path writes.

One test per fast statement (``bookings/fast_paths.py``; tests/unit/test_fast_paths_frozen.py keeps
them at two), and one of a return trip's pair (the create statement once per leg, in one
transaction, against ``lifecycle.create_many``; and a wallet enough for one leg only, refused both
ways): the same change is made both ways on two equal bookings (of two clients with equal
wallets), the whole database is read before and after each, and the rows each way wrote (inserted,
or the new version of an updated row) and replaced (the old version) are compared in every table:
bookings, audit rows, outbox messages and delivery attempts, wallets and ledger entries, client
events, and any table a side effect added later writes to.

Ignored, because they must differ: the rows' own ids (numbered in the order each way wrote them,
so a row pointing at the wrong one still differs), the two clients' and wallets' ids, the
reservation numbers, message ``webhook_id``s and client ``event_id``s (random by design). Both
ways run at the same instant, so no timestamp is ignored. One difference is by design and
rendered away: the fast acknowledgement's ``booking.status_changed`` event stores no snapshot
(``booking`` NULL; it read nothing to render one), which the fan-out renders from the row with the
event's status (``webhooks/delivery.py``); the test renders it the same way and compares that.
Of a row a change updated, the old version is compared by which row it was only: its values were
not written by the change.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import booking_row
from transfers.bookings import fast_paths, partner_updates
from transfers.bookings import repository as booking_repo
from transfers.bookings.models import Booking
from transfers.bookings.reservation import new_reservation_no
from transfers.bookings.resource import booking_resource
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import metadata
from transfers.delivery import repository as outbox_repo
from transfers.delivery.models import OutboxMessage
from transfers.flights import repository as flight_repository
from transfers.partners.calls import MessageKind
from transfers.wallet.ledger import InsufficientBalance

pytestmark = pytest.mark.pg_only

ACTOR = "tests:fast-paths"
RANDOM = (re.compile(r"msg_[0-9a-f]{32}"), re.compile(r"evt_[0-9a-f]{32}"))
Rows = dict[str, Counter[str]]
# Written by something other than the change, in the background, by the shared test server of earlier
# tests at any moment of the snapshot: the request log (``api_requests``) and the partners' search
# health minutes (``partner_search_minutes``), both flushed by their own tasks.
# What a create with a wallet debit writes: the booking, its audit row, the partner's message, the client
# event, the debit, its ledger and journal entries.
CREATE_WRITES = frozenset(
    {
        "bookings",
        "booking_transitions",
        "outbox",
        "client_events",
        "wallets",
        "ledger_entries",
        "journal_entries",
        "journal_lines",
    }
)
NOT_WRITTEN_BY_A_CHANGE = frozenset({"api_requests", "partner_search_minutes"})


async def snapshot(db: Database) -> Rows:
    """Every row of every table, as canonical JSON text (a multiset per table)."""
    found: Rows = {}
    async with db.read() as conn:
        for table in metadata.sorted_tables:
            if table.name in NOT_WRITTEN_BY_A_CHANGE:
                continue
            rows = (await conn.execute(select(table))).mappings().all()
            found[table.name] = Counter(
                orjson.dumps(dict(r), default=str, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS).decode()
                for r in rows
            )
    return found


def written(before: Rows, after: Rows) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per table: (rows now there that were not, rows there before that are not now)."""
    diff = {}
    for name in after:
        added, removed = after[name] - before[name], before[name] - after[name]
        if added or removed:
            diff[name] = ([orjson.loads(r) for r in added.elements()], [orjson.loads(r) for r in removed.elements()])
    return diff


def normalised(diff: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]], names: dict[Any, str]) -> Any:
    """The diff with every id, reservation number and random token replaced by a name: a row's own
    id by ``table#n`` (n: its order among the rows of that table this way wrote), a reference by
    the name of the row it points to, ``names`` for the rest (the clients' ids, ...)."""
    names = dict(names)
    for table in sorted(diff):
        ids = sorted({r["id"] for rows in diff[table] for r in rows if "id" in r})
        names.update({(table, i): f"{table}#{n}" for n, i in enumerate(ids)})

    def name_of(table: str, column: str, value: Any) -> Any:
        col = metadata.tables[table].c[column]
        if column == "id":
            return names.get((table, value), value)
        if table == "journal_lines" and column == "owner_id":  # a wallet line's owner (no FK: any account's owner)
            return names.get(("wallets", value), value)
        for fk in col.foreign_keys:
            target = fk.column.table.name
            # a bare id in ``names`` is a client's: a partner that happens to share the number stays itself
            return names.get((target, value), names.get(value, value) if target == "clients" else value)
        return value

    def text(value: Any) -> Any:
        if isinstance(value, str):
            for key, label in names.items():
                if isinstance(key, str) and key:
                    value = value.replace(key, label)
            for pattern in RANDOM:
                value = pattern.sub("<random>", value)
            return value
        if isinstance(value, dict):
            return {k: text(v) for k, v in value.items()}
        if isinstance(value, list):
            return [text(v) for v in value]
        return value

    out = {}
    for table, (added, removed) in diff.items():
        rows = [{c: text(name_of(table, c, v)) for c, v in r.items()} for r in added]
        # Of a replaced row only which one it was: its old values were not written by this change
        # (the two wallets' ``updated_at`` differ, as their clients were made one after the other).
        replaced = [name_of(table, "id", r["id"]) if "id" in r else r for r in removed]
        out[table] = (
            sorted(orjson.dumps(r, option=orjson.OPT_SORT_KEYS).decode() for r in rows),
            sorted(map(str, replaced)),
        )
    return out


async def both_ways(
    db: Database, fast: Callable[[], Awaitable[Any]], general: Callable[[], Awaitable[Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    first = await snapshot(db)
    await fast()
    second = await snapshot(db)
    await general()
    third = await snapshot(db)
    return written(first, second), written(second, third)


def create_values(client_id: int, partner_id: int, reservation_no: str, now: datetime) -> dict[str, Any]:
    """A new booking's columns as ``bookings/service._booking_values`` gives them."""
    row = booking_row(
        client_id=client_id,
        partner_id=partner_id,
        search_vehicle_id=None,
        reservation_no=reservation_no,
        status="PENDING",
        pickup_at=now + timedelta(days=3),
        total=Decimal("44.00"),
        created_at=now,
        updated_at=now,
        event_sequence=1,
        # Unique per booking (a unique index), and named after its reservation so both ways normalise alike.
        tracking_token=f"trk-{reservation_no}",
    )
    unset = [
        "id",
        "partner_reference",
        "driver_name",
        "driver_phone",
        "driver_plate",
        "meeting_point",
        "cancellation_reason_id",
        "cancel_note",
        "synced_at",
        "cancel_idempotency_key",
        "cancellation_fee",
        "cancellation_refund",
        "cancelled_at",
        "cancelled_by",
        "amendment",
    ]
    return {k: v for k, v in row.items() if k not in unset}


def create_message(values: dict[str, Any], now: datetime) -> Any:
    return outbox_repo.new_message(
        partner_id=values["partner_id"],
        kind=MessageKind.CREATE.value,
        payload={"reservation_no": values["reservation_no"], "vehicle_id": values["partner_vehicle_id"]},
        now=now,
        deadline=now + timedelta(hours=24),
        not_before=now + timedelta(seconds=3),
        lease_until=now + timedelta(seconds=60),
    )


async def general_transaction(conn: AsyncConnection) -> None:
    """A ``before`` that writes nothing: ``store_created`` then takes its general path on PostgreSQL too."""


async def two_clients(make_client: ClientFactory, make_partner: PartnerFactory) -> tuple[int, int, int]:
    fast_client, _ = await make_client(balance="100.00")
    general_client, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner(airports=("LHR",))
    return fast_client, general_client, partner_id


async def test_the_one_statement_create_writes_what_the_general_create_writes(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    fast_client, general_client, partner_id = await two_clients(make_client, make_partner)
    now = clock.now()
    fast_no, general_no = new_reservation_no(), new_reservation_no()
    fast_values = create_values(fast_client, partner_id, fast_no, now)
    general_values = create_values(general_client, partner_id, general_no, now)

    async def fast() -> None:
        await fast_paths.store_created(db, fast_values, actor=ACTOR, message=create_message(fast_values, now))

    async def general() -> None:
        await fast_paths.store_created(
            db,
            general_values,
            actor=ACTOR,
            message=create_message(general_values, now),
            before=general_transaction,
        )

    fast_rows, general_rows = await both_ways(db, fast, general)
    assert set(fast_rows) >= CREATE_WRITES
    assert normalised(fast_rows, {fast_client: "client", fast_no: "<reservation>"}) == normalised(
        general_rows, {general_client: "client", general_no: "<reservation>"}
    )


async def test_a_third_partys_one_statement_create_journals_its_payment_as_the_general_create(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    """A ``reverse_api`` booking moves no wallet; its price comes from the world into the platform
    (docs/rules/statements.md#journal), written by the fast statement's own journal CTEs."""
    fast_client, _ = await make_client(balance="0.00", pay_type="reverse_api")
    general_client, _ = await make_client(balance="0.00", pay_type="reverse_api")
    _, partner_id, _ = await make_partner(airports=("LHR",))
    now = clock.now()
    fast_no, general_no = new_reservation_no(), new_reservation_no()
    fast_values = {**create_values(fast_client, partner_id, fast_no, now), "pay_type": "reverse_api"}
    general_values = {**create_values(general_client, partner_id, general_no, now), "pay_type": "reverse_api"}

    async def fast() -> None:
        await fast_paths.store_created(db, fast_values, actor=ACTOR, message=create_message(fast_values, now))

    async def general() -> None:
        await fast_paths.store_created(
            db,
            general_values,
            actor=ACTOR,
            message=create_message(general_values, now),
            before=general_transaction,
        )

    fast_rows, general_rows = await both_ways(db, fast, general)
    assert "wallets" not in fast_rows and "ledger_entries" not in fast_rows
    lines = sorted((line["account"], line["amount"]) for line in fast_rows["journal_lines"][0])
    assert lines == [("platform", "44.0000"), ("world", "-44.0000")]  # the money column's own four places
    assert [e["kind"] for e in fast_rows["journal_entries"][0]] == ["third_party_payment"]
    assert normalised(fast_rows, {fast_client: "client", fast_no: "<reservation>"}) == normalised(
        general_rows, {general_client: "client", general_no: "<reservation>"}
    )


def pair_values(
    client_id: int, partner_id: int, numbers: tuple[str, str], trip_id: str, watch_id: int, now: datetime
) -> list[dict[str, Any]]:
    """A return trip's two legs as ``returns/service.create_trip`` gives them: the trip's columns,
    the way out's flight watch (the way back has none: its key is missing, as when its pickup is no
    airport), the way back later and from the way out's dropoff."""
    out = create_values(client_id, partner_id, numbers[0], now)
    back = create_values(client_id, partner_id, numbers[1], now)
    out.update(trip_id=trip_id, trip_leg=1, trip_other_reservation_no=numbers[1], flight_watch_id=watch_id)
    back.update(
        trip_id=trip_id,
        trip_leg=2,
        trip_other_reservation_no=numbers[0],
        pickup_at=now + timedelta(days=9),
        pickup_location=out["dropoff_location"],
        dropoff_location=out["pickup_location"],
        total=Decimal("51.00"),
        flight_number="BA118",
    )
    back.pop("flight_watch_id", None)
    return [out, back]


async def test_a_return_trips_pair_by_the_create_statement_writes_what_the_general_pair_writes(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    """The pair on PostgreSQL: the create statement once per leg in one direct transaction
    (``store_created_many``, ``Database.write_all``); its general path: ``lifecycle.create_many`` (one
    statement per table for both legs, the two debits one wallet UPDATE by their sum)."""
    fast_client, general_client, partner_id = await two_clients(make_client, make_partner)
    now = clock.now()
    watch_id = await flight_repository.new_watch(db, "BA117", "LHR", now + timedelta(days=3), now)
    fast_nos, general_nos = (new_reservation_no(), new_reservation_no()), (new_reservation_no(), new_reservation_no())
    fast_legs = pair_values(fast_client, partner_id, fast_nos, "TR-FAST", watch_id, now)
    general_legs = pair_values(general_client, partner_id, general_nos, "TR-GENERAL", watch_id, now)
    stored: dict[str, list[tuple[int, OutboxMessage]]] = {}

    async def fast() -> None:
        legs = [(values, create_message(values, now)) for values in fast_legs]
        stored["fast"] = await fast_paths.store_created_many(db, legs, actor=ACTOR)

    async def general() -> None:
        legs = [(values, create_message(values, now)) for values in general_legs]
        stored["general"] = await fast_paths.store_created_many(db, legs, actor=ACTOR, before=general_transaction)

    fast_rows, general_rows = await both_ways(db, fast, general)
    assert set(fast_rows) >= CREATE_WRITES
    assert len(fast_rows["bookings"][0]) == 2 and len(fast_rows["ledger_entries"][0]) == 2
    # each debit's balance after it, as if posted one by one: 100.00 - 44.00, then - 51.00
    assert sorted(e["balance_after"] for e in fast_rows["ledger_entries"][0]) == ["5.0000", "56.0000"]
    for way in ("fast", "general"):  # each leg's message as stored, with its booking's and its own id
        async with db.read() as conn:
            for booking_id, message in stored[way]:
                assert message.booking_id == booking_id
                assert await outbox_repo.id_of(conn, message.webhook_id) == message.id
    assert normalised(
        fast_rows, {fast_client: "client", fast_nos[0]: "<out>", fast_nos[1]: "<back>", "TR-FAST": "<trip>"}
    ) == normalised(
        general_rows,
        {general_client: "client", general_nos[0]: "<out>", general_nos[1]: "<back>", "TR-GENERAL": "<trip>"},
    )


async def test_a_wallet_enough_for_one_leg_but_not_both_writes_nothing_either_way(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    """1101 on the sum (docs/rules/return-trips.md#create): the first leg's statement fits and is rolled
    back with the second's refusal; the general path's one UPDATE by the sum does not fit."""
    fast_client, _ = await make_client(balance="60.00")
    general_client, _ = await make_client(balance="60.00")
    _, partner_id, _ = await make_partner(airports=("LHR",))
    now = clock.now()
    watch_id = await flight_repository.new_watch(db, "BA117", "LHR", now + timedelta(days=3), now)
    numbers = [(new_reservation_no(), new_reservation_no()) for _ in range(2)]
    fast_legs = pair_values(fast_client, partner_id, numbers[0], "TR-FAST", watch_id, now)
    general_legs = pair_values(general_client, partner_id, numbers[1], "TR-GENERAL", watch_id, now)

    async def fast() -> None:
        with pytest.raises(InsufficientBalance):
            await fast_paths.store_created_many(db, [(v, create_message(v, now)) for v in fast_legs], actor=ACTOR)

    async def general() -> None:
        with pytest.raises(InsufficientBalance):
            await fast_paths.store_created_many(
                db, [(v, create_message(v, now)) for v in general_legs], actor=ACTOR, before=general_transaction
            )

    assert await both_ways(db, fast, general) == ({}, {})


async def test_the_one_statement_acknowledgement_writes_what_the_general_one_writes(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock
) -> None:
    fast_client, general_client, partner_id = await two_clients(make_client, make_partner)
    now = clock.now()
    created: dict[str, OutboxMessage] = {}
    fast_no, general_no = new_reservation_no(), new_reservation_no()
    for client_id, reservation_no in ((fast_client, fast_no), (general_client, general_no)):
        values = create_values(client_id, partner_id, reservation_no, now)
        _, created[reservation_no] = await fast_paths.store_created(
            db, values, actor=ACTOR, message=create_message(values, now), before=general_transaction
        )
    later = now + timedelta(seconds=1)

    def attempt(message: OutboxMessage) -> dict[str, Any]:
        return {
            "attempt_no": message.attempts + 1,
            "started_at": later,
            "duration_ms": 12,
            "outcome": "done:ok",
            "http_status": 200,
            "error": None,
            "answer_excerpt": '{"status": "PENDING", "reservation_no": "P-77"}',
        }

    async def fast() -> None:
        message = created[fast_no]
        moved = await fast_paths.finish_acknowledged(
            db, message, attempt=attempt(message), partner_reference="P-77", actor=ACTOR, now=later
        )
        assert moved is not None and moved.partner_reference == "P-77"

    async def general() -> None:
        """What the dispatcher's general path (``Dispatcher._apply``) writes for the same answer."""
        message = created[general_no]
        async with db.write() as conn:
            await outbox_repo.record_attempt(conn, outbox_id=message.id, **attempt(message))
            assert await outbox_repo.finish(conn, message, status=outbox_repo.DELIVERED, now=later)
            moved = await partner_updates.acknowledge_pending(
                conn, message.booking_id, actor=ACTOR, now=later, partner_reference="P-77"
            )
        assert moved is not None and moved.partner_reference == "P-77"

    fast_rows, general_rows = await both_ways(db, fast, general)
    assert set(fast_rows) >= {"bookings", "booking_transitions", "outbox", "delivery_attempts", "client_events"}
    await render_unrendered_events(db, fast_rows)
    assert normalised(fast_rows, {fast_client: "client", fast_no: "<reservation>"}) == normalised(
        general_rows, {general_client: "client", general_no: "<reservation>"}
    )


async def render_unrendered_events(db: Database, diff: dict[str, Any]) -> None:
    """The snapshot a fast statement leaves to the fan-out, rendered as the fan-out renders it
    (``webhooks/delivery.WebhookDispatcher._body``: the booking row with the event's status)."""
    for event in diff.get("client_events", ([], []))[0]:
        if event["booking"] is None:
            async with db.read() as conn:
                row = await booking_repo.get_by_id(conn, event["booking_id"])
            assert isinstance(row, Booking)
            at = datetime.fromisoformat(event["created_at"])
            rendered = booking_resource(row.moved({"status": event["status"]}), at)
            event["booking"] = orjson.loads(orjson.dumps(rendered, default=str))
