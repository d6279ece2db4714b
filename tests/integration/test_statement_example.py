"""The worked example of docs/partners/statements.md, built with the service's own code and read
through the reverse API: its answer must be the page's, to the cent (only the reservation numbers,
random, are compared by position)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx

from tests import ledger_world as world
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.unit.test_partner_openapi import assert_valid
from transfers.accounting import service as books
from transfers.bookings.earnings import recover_partner_share
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

PAGE = Path(__file__).resolve().parents[2] / "docs" / "partners" / "statements.md"


def documented() -> dict[str, object]:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"<!-- worked-example -->\s*```json\n(.*?)```", text, re.S)
    assert found, "docs/partners/statements.md lost its worked example"
    return dict(json.loads(found.group(1)))


def at(clock: ShiftedClock, when: datetime) -> datetime:
    clock.advance(when - clock.now())
    return clock.now()


async def test_the_worked_example_is_what_the_service_answers(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    client_id, _ = await make_client(balance="1000.00")
    _, partner_id, key = await make_partner()

    now = at(clock, datetime(2026, 10, 20, 10, 0, tzinfo=UTC))
    october = await world.book(db, world.values(client_id, partner_id, now, total="44.00", net="40.00"), now)
    await world.complete(db, october, now)
    await books.close_ended(db, at(clock, datetime(2026, 11, 1, 0, 5, tzinfo=UTC)))
    now = at(clock, datetime(2026, 11, 3, 9, 0, tzinfo=UTC))
    assert await books.mark_paid(db, partner_id, "2026-10", "EUR", "SEPA-2026-10-7", actor="tests", now=now) == (
        Decimal("40.00")
    )
    now = at(clock, datetime(2026, 11, 5, 18, 0, tzinfo=UTC))
    ride = await world.book(db, world.values(client_id, partner_id, now, total="55.00", net="50.00"), now)
    await world.complete(db, ride, now)
    now = at(clock, datetime(2026, 11, 8, 7, 30, tzinfo=UTC))
    fee = await world.book(
        db, world.values(client_id, partner_id, now, total="33.33", net="22.22", policy=world.FEE_20), now
    )
    await world.move(db, fee, world.S.PENDING_APPROVAL, now)
    cancelled = await world.cancel(db, fee, now)
    assert cancelled.cancellation_fee == Decimal("6.67")
    now = at(clock, datetime(2026, 11, 12, 21, 0, tzinfo=UTC))
    late = await world.book(db, world.values(client_id, partner_id, now, total="60.00", net="48.00"), now)
    completed = await world.complete(db, late, now)
    async with db.write() as conn:
        await recover_partner_share(conn, completed, Decimal("15.00"), now=now, note="driver late")
    now = at(clock, datetime(2026, 11, 14, 12, 0, tzinfo=UTC))
    await books.adjust(db, partner_id, "EUR", "2.50", "waiting time at the airport", actor="tests", now=now)
    await books.close_ended(db, at(clock, datetime(2026, 12, 1, 0, 5, tzinfo=UTC)))

    answer = await http.get("/api/v1/reverse/statements/2026-11", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    actual = answer.json()
    expected = documented()
    numbers: dict[str, str] = {}
    for line, shown in zip(actual["lines"], expected["lines"], strict=True):  # type: ignore[call-overload]
        if shown["reservation_no"] is not None:
            assert line["reservation_no"] is not None
            numbers.setdefault(shown["reservation_no"], line["reservation_no"])
            shown["reservation_no"] = numbers[shown["reservation_no"]]
    assert actual == expected
    assert_valid("StatementWithLines", actual)  # the partner OpenAPI document describes it
    listed = (await http.get("/api/v1/reverse/statements", headers=bearer(key))).json()
    for statement in listed["data"]:
        assert_valid("Statement", statement)
    csv_text = (await http.get("/api/v1/reverse/statements/2026-11?format=csv", headers=bearer(key))).text
    assert csv_text.splitlines()[1] == "2026-11-03,,PAYOUT,,,,-40.00,payout of 2026-10 (reference SEPA-2026-10-7)"
    # The JSON's lines come by the direct path on PostgreSQL (no SQLAlchemy row processing): the
    # same lines as the engine's path (taken here with a limit), value for value, on both databases.
    found = await books.statement(db, partner_id, "2026-11", None)
    assert await books.statement_lines(db, found) == await books.statement_lines(db, found, limit=1000)
    assert len(actual["lines"]) == 6
