"""The delivery engine with a kind of its own (no partner, no booking logic): the registry, and the
"try once, drop when stale" flag a coming kind (live driver positions) needs: coalesced on write,
tried once, dropped unsent when stale, claimed ahead of other kinds' due retries. Both databases."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.conftest import ClientFactory, PartnerFactory, make_settings
from tests.integration.test_outbox_and_jobs import book
from transfers import deliveries
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import bookings, outbox
from transfers.delivery import operators
from transfers.delivery import repository as repo
from transfers.delivery.engine import STALE, Engine
from transfers.delivery.kinds import DeliveryKind, Judged, Registry, UnknownKind
from transfers.delivery.models import OutboxMessage
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.transport import CallResult, Receiver
from transfers.hosted.mail import PARTNER_EMAIL
from transfers.partners.calls import MessageKind
from transfers.ride.service import DRIVER_POSITION_KIND
from transfers.services import Services
from transfers.webhooks.kind import CLIENT_WEBHOOK

POSITION, CHORE = "test.position", "test.chore"


class Recorder:
    """A transport that answers what the test says and remembers what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.result = CallResult("ok", 200, {"ok": True}, None, 1.0)

    async def send(self, kind: DeliveryKind, message: OutboxMessage, *, timeout: float, target: Any) -> CallResult:
        self.sent.append({"kind": kind.name, **message.payload})
        return self.result


def judge(kind: DeliveryKind, result: CallResult) -> Judged:
    return Judged(Verdict.DONE if result.ok else Verdict.RETRY, result.body, result.error, result)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def endings() -> list[tuple[str, Ending]]:
    return []


@pytest.fixture
def engine(db: Database, clock: ShiftedClock, recorder: Recorder, endings: list[tuple[str, Ending]]) -> Engine:
    async def route(message: OutboxMessage, hint: Any) -> Receiver:
        return Receiver(recorder)

    async def effect(
        conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: Any, error: str | None, now: datetime
    ) -> str:
        endings.append((message.kind, ending))
        return ending.value

    registry = Registry(
        (
            DeliveryKind(POSITION, route, judge, effect, once=True),
            DeliveryKind(CHORE, route, judge, effect),
        )
    )
    return Engine(db, clock, registry, lease_seconds=60, timeout=1.0)


@pytest.fixture
async def booking(
    http: httpx.AsyncClient, db: Database, make_client: ClientFactory, make_partner: PartnerFactory
) -> tuple[int, int]:
    """A real booking's id and its partner's (the outbox's foreign keys); its create delivered already."""
    _, key = await make_client()
    _, partner_id, _ = await make_partner(airports=("GLA",))
    reservation_no = (await book(http, key, "GLA"))["reservation_no"]
    async with db.read() as conn:
        booking_id = (
            await conn.execute(select(bookings.c.id).where(bookings.c.reservation_no == reservation_no))
        ).scalar_one()
    return int(booking_id), partner_id


async def write(
    db: Database, clock: ShiftedClock, booking: tuple[int, int], kind: str, payload: dict[str, Any], *, ttl: float = 30
) -> OutboxMessage:
    """A message of ``kind`` for the booking: a kind tried once is written coalescing."""
    now = clock.now()
    booking_id, partner_id = booking
    write_one = repo.enqueue_latest if kind == POSITION else repo.enqueue
    async with db.write() as conn:
        return await write_one(
            conn,
            booking_id=booking_id,
            partner_id=partner_id,
            kind=kind,
            payload=payload,
            now=now,
            deadline=now + timedelta(seconds=ttl),
        )


async def state(db: Database, message_id: int) -> tuple[OutboxMessage, list[dict[str, Any]]]:
    async with db.read() as conn:
        found = await conn.execute(select(outbox).where(outbox.c.id == message_id))
        message = OutboxMessage.from_row(found.mappings().one())
        return message, await operators.attempts_of(conn, message_id)


def test_a_kind_is_registered_once_and_an_unknown_kind_is_refused() -> None:
    async def route(message: OutboxMessage, hint: Any) -> Receiver:
        return Receiver(Recorder())

    registry = Registry((DeliveryKind(CHORE, route, judge),))
    with pytest.raises(ValueError, match="registered already"):
        registry.register(DeliveryKind(CHORE, route, judge))
    with pytest.raises(UnknownKind):
        registry["test.nobody"]
    assert registry.names() == [CHORE] and registry.once_names() == []


async def test_one_registry_holds_every_kind_and_each_engine_keeps_its_queues(tmp_path: Path) -> None:
    """Partner calls, driver positions, client webhooks and partner e-mails are registered in one
    place (``deliveries.registry``); the engine over a table delivers only the kinds stored in it."""
    svc = Services.build(make_settings(f"sqlite+aiosqlite:///{tmp_path / 'kinds.db'}", tmp_path))
    kinds = deliveries.registry(svc)
    by_queue = {queue: kinds.stored_in(queue).names() for queue in ("outbox", "webhooks", "partner_emails")}
    assert by_queue == {
        "outbox": [*(kind.value for kind in MessageKind), DRIVER_POSITION_KIND],
        "webhooks": [CLIENT_WEBHOOK],
        "partner_emails": [PARTNER_EMAIL],
    }
    assert sorted(kinds.names()) == sorted(name for names in by_queue.values() for name in names)
    assert deliveries.Dispatcher(svc).registry.names() == by_queue["outbox"]
    webhooks = deliveries.webhook_dispatcher(svc)
    try:
        assert webhooks.engine.registry.names() == [CLIENT_WEBHOOK]
    finally:
        await webhooks.aclose()
        await svc.partner_client.aclose()
        await svc.db.dispose()


async def test_a_kind_tried_once_is_coalesced_and_only_the_newest_is_sent(
    db: Database, clock: ShiftedClock, engine: Engine, recorder: Recorder, booking: tuple[int, int]
) -> None:
    first = await write(db, clock, booking, POSITION, {"lat": 1})
    second = await write(db, clock, booking, POSITION, {"lat": 2})
    newest = await write(db, clock, booking, POSITION, {"lat": 3})
    for old in (first, second):
        message, attempts = await state(db, old.id)
        assert (message.status, message.last_error, attempts) == ("expired", repo.SUPERSEDED, [])
    assert await engine.run_once() == 1
    assert recorder.sent == [{"kind": POSITION, "lat": 3}]
    message, attempts = await state(db, newest.id)
    assert (message.status, message.attempts, len(attempts)) == ("delivered", 1, 1)


async def test_a_kind_tried_once_is_never_retried(
    db: Database,
    clock: ShiftedClock,
    engine: Engine,
    recorder: Recorder,
    endings: list[tuple[str, Ending]],
    booking: tuple[int, int],
) -> None:
    recorder.result = CallResult("timeout", None, None, "no answer within 1s", 1000.0)
    position = await write(db, clock, booking, POSITION, {"lat": 4})
    chore = await write(db, clock, booking, CHORE, {"n": 1}, ttl=3600)
    assert await engine.run_once() == 2
    message, attempts = await state(db, position.id)
    assert (message.status, message.attempts) == ("expired", 1)
    assert [a.outcome for a in attempts] == ["retry:timeout"]
    assert (POSITION, Ending.EXPIRED) in endings
    message, _ = await state(db, chore.id)  # an ordinary kind waits for its next attempt
    assert (message.status, message.attempts) == ("pending", 1)
    assert message.next_attempt_at > clock.now()
    clock.advance(timedelta(minutes=5))
    recorder.result = CallResult("ok", 200, {}, None, 1.0)
    assert await engine.run_once() == 1  # the chore again; the position is gone for good
    assert [s["kind"] for s in recorder.sent] == [POSITION, CHORE, CHORE]


async def test_a_stale_message_of_a_kind_tried_once_is_dropped_unsent(
    db: Database,
    clock: ShiftedClock,
    engine: Engine,
    recorder: Recorder,
    endings: list[tuple[str, Ending]],
    booking: tuple[int, int],
) -> None:
    position = await write(db, clock, booking, POSITION, {"lat": 5}, ttl=5)
    clock.advance(timedelta(seconds=10))  # claimed (its deadline not swept yet) after it went stale
    assert await engine.run_once() == 1
    assert recorder.sent == [] and endings == []
    message, attempts = await state(db, position.id)
    assert (message.status, message.last_error, attempts) == ("expired", STALE, [])


async def test_a_kind_tried_once_is_claimed_ahead_of_due_retries(
    db: Database, clock: ShiftedClock, engine: Engine, recorder: Recorder, booking: tuple[int, int]
) -> None:
    backlog = [await write(db, clock, booking, CHORE, {"n": n}, ttl=3600) for n in range(3)]
    clock.advance(timedelta(seconds=1))
    await write(db, clock, booking, POSITION, {"lat": 6})
    assert await engine.run_once(limit=1) == 1
    assert recorder.sent == [{"kind": POSITION, "lat": 6}]  # though the chores were due earlier
    assert await engine.run_once(limit=5) == 3
    assert sorted(s["n"] for s in recorder.sent[1:]) == [0, 1, 2]  # delivered concurrently
    assert [(await state(db, m.id))[0].status for m in backlog] == ["delivered"] * 3
