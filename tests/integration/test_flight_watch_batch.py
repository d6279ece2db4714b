"""The flight watch writes one pass's moves in bounded multi-row statements (docs/rules/flights.md#watching),
on both databases: several bookings on several late flights, and one cancelled, moved in one pass get each
exactly the rows ``update_details`` writes for one (its audit line, its partner notice, its client event with
the booking's next sequence number), while the statements that write them do not grow with the bookings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event, select

from tests.conftest import ClientFactory, PartnerFactory
from tests.integration.test_flight_watch import book, get, minutes_between, run_pass
from tests.servers import LiveServer
from transfers.clock import ShiftedClock
from transfers.db.tables import bookings, client_events
from transfers.db.tables.bookings import booking_transitions, outbox
from transfers.services import Services


@pytest.fixture
def svc(service: LiveServer) -> Services:
    found: Services = service.app.state.services
    return found


@pytest.fixture
def statements(svc: Services) -> Iterator[list[str]]:
    """Every SQL statement the service's engine sends while the test runs (an executemany counts once)."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        seen.append(" ".join(statement.split()).upper())

    engine = svc.db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


async def test_one_pass_writes_every_move_in_a_few_statements_with_each_bookings_rows(
    http: httpx.AsyncClient,
    svc: Services,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    statements: list[str],
) -> None:
    await make_partner()
    _, key = await make_client()
    flights = {"ZZ1020": 20, "ZZ1035": 35, "ZZ2015": -15}
    booked = [await book(http, key, number, days=4) for number in flights for _ in range(3)]
    cancelled = await book(http, key, "ZZ9001", days=4)
    numbers = [b["reservation_no"] for b in booked]
    async with svc.db.read() as conn:
        ids = dict(
            (
                await conn.execute(
                    select(bookings.c.reservation_no, bookings.c.id).where(
                        bookings.c.reservation_no.in_([*numbers, cancelled["reservation_no"]])
                    )
                )
            ).all()
        )
        sequences = dict(
            (
                await conn.execute(
                    select(bookings.c.id, bookings.c.event_sequence).where(bookings.c.id.in_(ids.values()))
                )
            ).all()
        )
    statements.clear()

    await run_pass(svc, clock)

    for b in booked:
        moved = await get(http, key, b["reservation_no"])
        assert minutes_between(moved["pickup_datetime"], b["pickup_datetime"]) == flights[b["flight_number"]]
    assert (await get(http, key, cancelled["reservation_no"]))["flight"]["status"] == "CANCELLED"
    async with svc.db.read() as conn:
        audit = (
            await conn.execute(
                select(booking_transitions.c.booking_id, booking_transitions.c.reason).where(
                    booking_transitions.c.booking_id.in_(ids.values()), booking_transitions.c.actor == "system:flights"
                )
            )
        ).all()
        notices = (
            await conn.execute(
                select(outbox.c.booking_id, outbox.c.payload).where(
                    outbox.c.booking_id.in_(ids.values()), outbox.c.kind == "booking.flight_update"
                )
            )
        ).all()
        events = (
            await conn.execute(
                select(client_events.c.booking_id, client_events.c.type, client_events.c.sequence).where(
                    client_events.c.booking_id.in_(ids.values()), client_events.c.sequence > 1
                )
            )
        ).all()
        now_sequences = dict(
            (
                await conn.execute(
                    select(bookings.c.id, bookings.c.event_sequence).where(bookings.c.id.in_(ids.values()))
                )
            ).all()
        )
    moved_ids = [ids[n] for n in numbers]
    assert sorted(r.booking_id for r in audit) == sorted([*moved_ids, ids[cancelled["reservation_no"]]])
    assert all("pickup moved" in (r.reason or "") for r in audit if r.booking_id in moved_ids)
    # one notice per moved booking, about that booking; none for the disrupted one (its pickup did not move)
    assert sorted(r.booking_id for r in notices) == sorted(moved_ids)
    assert all(r.payload["reservation_no"] == n for r in notices for n in numbers if ids[n] == r.booking_id)
    # one event per booking, numbered from that booking's own sequence
    events = [r for r in events if r.sequence > sequences[r.booking_id]]
    assert sorted(r.booking_id for r in events) == sorted(ids.values())
    for r in events:
        assert r.sequence == sequences[r.booking_id] + 1 == now_sequences[r.booking_id]
        assert r.type == (
            "booking.flight_disrupted"
            if r.booking_id == ids[cancelled["reservation_no"]]
            else "booking.pickup_time_changed"
        )

    # 10 bookings changed, and each kind of row was written by one statement
    for table in ("BOOKING_TRANSITIONS", "OUTBOX", "CLIENT_EVENTS"):
        assert len([s for s in statements if s.startswith(f"INSERT INTO {table} ")]) == 1, table
    assert len([s for s in statements if s.startswith("UPDATE BOOKINGS SET EVENT_SEQUENCE")]) == 1
