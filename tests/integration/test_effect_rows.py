"""Each side effect's rows function is what both paths write (docs/architecture/how-to-add.md, "A side effect").

A side effect is one function of the change (``bookings/effects.EFFECTS``); the general path runs its
steps, and PostgreSQL's one-statement create and acknowledgement bind the same rows
(``bookings/fast_rows.py``). Here a change is made, every row it wrote is read back, and each of the
effects' steps for that change must be exactly one of them, its plain values as computed and its
made values (``Of``) as the write made them: the booking's id and event numbers, the wallet move's
outcome, a row's id; no row may be written that no step names. Ignored: a client event's
``event_id``, random by design (computing the steps again draws a new one).

The fast statements are checked on PostgreSQL (and that they did not step aside); the general path
on both databases. tests/integration/test_fast_paths_equal.py compares the two paths row by row.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import orjson
import pytest

from tests.conftest import ClientFactory, PartnerFactory
from tests.integration.test_fast_paths_equal import (
    ACTOR,
    create_message,
    create_values,
    general_transaction,
    snapshot,
    written,
)
from transfers.bookings import effect_rows, fast_paths, partner_updates
from transfers.bookings.effect_rows import CHANGE, MOVED, Bump, Insert, Of, Step, WalletMove
from transfers.bookings.effects import EFFECTS, Change
from transfers.bookings.lifecycle import CREATED_REASON
from transfers.bookings.models import UNASSIGNED_ID, Booking
from transfers.bookings.reservation import new_reservation_no
from transfers.bookings.state import BookingStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.delivery import repository as outbox_repo

RANDOM_COLUMNS = {"client_events": {"event_id"}}


def plain(value: Any) -> Any:
    """A value as the database snapshot renders a stored one (canonical JSON); an amount stays a
    Decimal (``same`` compares it by value: a money column may store more places than it was given)."""
    if isinstance(value, Decimal):
        return value
    return orjson.loads(orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS))


def same(stored: Any, expected: Any) -> bool:
    if isinstance(expected, Decimal):
        return stored is not None and Decimal(str(stored)) == expected
    return bool(stored == expected)


def assert_the_steps_wrote(change: Change, diff: dict[str, Any], *, not_effects: frozenset[str] = frozenset()) -> None:
    """Each step of ``change``'s effects is one row of ``diff`` (``written``: the rows a change
    added), and every added row but the booking's, the wallet's new balance and ``not_effects`` is
    one step's."""
    steps = steps_of(change)
    added = {table: list(rows) for table, (rows, _) in diff.items() if table not in not_effects}
    (booking,) = added.pop("bookings")
    wallets = added.pop("wallets", [])
    made: dict[int, dict[str, Any]] = {}

    def value(v: Of) -> Any:
        if v.step is CHANGE:
            return plain(getattr(change, v.column))
        found = booking[v.column] if v.step is MOVED else made[id(v.step)][v.column]
        return found + v.plus if v.plus else found

    for step in steps:
        if isinstance(step, WalletMove):
            (wallet,) = wallets
            made[id(step)] = {
                "id": wallet["id"],
                "balance": wallet["balance"],
                "currency": wallet["currency"],
                "delta": plain(step.delta),
            }
        elif isinstance(step, Bump):
            made[id(step)] = {"event_sequence": booking["event_sequence"]}
        else:
            assert isinstance(step, Insert), step
            name, skip = step.table, RANDOM_COLUMNS.get(step.table, set())
            expected = {k: plain(v) for k, v in step.values.items() if k not in skip}
            expected.update((k, value(v)) for k, v in step.made.items())
            found = [row for row in added.get(name, []) if all(same(row[k], v) for k, v in expected.items())]
            assert len(found) == 1, (name, expected, added.get(name))
            added[name].remove(found[0])
            made[id(step)] = {"id": found[0]["id"]}
    assert {table: rows for table, rows in added.items() if rows} == {}, "rows no effect's step names"


def steps_of(change: Change) -> list[Step]:
    return [step for effect in EFFECTS for step in effect.rows(change)]


def creation(values: dict[str, Any], message: Any) -> Change:
    booking = Booking.new(values, UNASSIGNED_ID)
    return Change(booking, None, BookingStatus.PENDING, ACTOR, CREATED_REASON, values["created_at"], (message,))


@pytest.mark.parametrize("pay_type", ["wallet", "reverse_api"])
@pytest.mark.parametrize("way", ["fast", "general"])
async def test_a_creation_writes_exactly_its_effects_rows(
    db: Database,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    clock: ShiftedClock,
    way: str,
    pay_type: str,
) -> None:
    if way == "fast" and db.is_sqlite:
        pytest.skip("the one-statement create is PostgreSQL's")
    client_id, _ = await make_client(balance="100.00", pay_type=pay_type)
    _, partner_id, _ = await make_partner(airports=("LHR",))
    now = clock.now()
    values = {**create_values(client_id, partner_id, new_reservation_no(), now), "pay_type": pay_type}
    message = create_message(values, now)
    change = creation(values, message)
    if way == "fast":  # the statement takes every step: it does not step aside for this creation
        assert fast_paths._created_step(values, ACTOR, message) is not None
    before = await snapshot(db)
    await fast_paths.store_created(
        db, values, actor=ACTOR, message=message, before=None if way == "fast" else general_transaction
    )
    diff = written(before, await snapshot(db))
    assert ("ledger_entries" in diff) is (pay_type == "wallet")
    assert_the_steps_wrote(change, diff)


@pytest.mark.parametrize("way", ["fast", "general"])
async def test_an_acknowledgement_writes_exactly_its_effects_rows(
    db: Database, make_client: ClientFactory, make_partner: PartnerFactory, clock: ShiftedClock, way: str
) -> None:
    """The fast statement's change reads no booking (its event stores no snapshot, the fan-out renders
    it); the general path's change has the booking as moved and before."""
    if way == "fast" and db.is_sqlite:
        pytest.skip("the one-statement acknowledgement is PostgreSQL's")
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner(airports=("LHR",))
    now = clock.now()
    values = create_values(client_id, partner_id, new_reservation_no(), now)
    booking_id, message = await fast_paths.store_created(
        db, values, actor=ACTOR, message=create_message(values, now), before=general_transaction
    )
    later = now + timedelta(seconds=1)
    attempt: dict[str, Any] = {
        "attempt_no": 1,
        "started_at": later,
        "duration_ms": 12,
        "outcome": "done:ok",
        "http_status": 200,
        "error": None,
        "answer_excerpt": "{}",
    }
    before = await snapshot(db)
    if way == "fast":
        moved = await fast_paths.finish_acknowledged(
            db, message, attempt=attempt, partner_reference="P-1", actor=ACTOR, now=later
        )
        change = Change(
            None, BookingStatus.PENDING, BookingStatus.PENDING_APPROVAL, ACTOR, "partner acknowledged", later
        )
    else:
        async with db.write() as conn:
            await outbox_repo.record_attempt(conn, outbox_id=message.id, **attempt)
            assert await outbox_repo.finish(conn, message, status=outbox_repo.DELIVERED, now=later)
            moved = await partner_updates.acknowledge_pending(
                conn, booking_id, actor=ACTOR, now=later, partner_reference="P-1"
            )
        assert moved is not None  # ``transition_unread``'s change: the booking as moved, none before
        change = Change(
            moved, BookingStatus.PENDING, BookingStatus.PENDING_APPROVAL, ACTOR, "partner acknowledged", later
        )
    assert moved is not None and moved.status is BookingStatus.PENDING_APPROVAL
    diff = written(before, await snapshot(db))
    assert_the_steps_wrote(change, diff, not_effects=frozenset({"outbox", "delivery_attempts"}))


def test_a_step_that_needs_a_read_makes_the_fast_statement_step_aside() -> None:
    """A ``Call`` (rows that need the database first) has no SQL form: ``fast_plan`` answers None, and
    the fast paths then take the general path for that change."""
    from transfers.bookings.fast_rows import fast_plan

    async def nothing(conn: Any) -> None:
        return None

    assert fast_plan([effect_rows.Call(nothing)]) is None
    assert fast_plan([effect_rows.OpenPeriod(1, "EUR")]) is None
    assert fast_plan([]) is not None
