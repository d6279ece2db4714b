"""The delivery engine with kinds of its own (no partner, no booking logic): the registries, messages
that name a recipient and neither a booking nor a partner, and the "try once, drop when stale" flag
(coalesced on write, tried once, dropped unsent when stale, claimed ahead of other kinds' due
retries). A kind of the test's own is registered at start-up and delivered by the real worker. Both
databases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from tests.conftest import make_settings
from tests.helpers import own_database
from transfers import deliveries
from transfers.client_events.positions_repository import DRIVER_POSITION_KIND
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.db.tables import outbox
from transfers.delivery import operators
from transfers.delivery import repository as repo
from transfers.delivery.engine import STALE, Engine
from transfers.delivery.kinds import DeliveryKind, Judged, Registry, UnknownKind
from transfers.delivery.models import DeliveryAttempt, OutboxMessage
from transfers.delivery.policy import Ending, Verdict
from transfers.delivery.transport import CallResult, Receiver
from transfers.hosted.mail import PARTNER_EMAIL
from transfers.messages.queue import TRAVELLER_MESSAGE
from transfers.partners.calls import MessageKind
from transfers.services import Services
from transfers.webhooks.models import CLIENT_WEBHOOK
from transfers.worker import Worker

POSITION, CHORE = "test.position", "test.chore"
RECIPIENT = "test:someone"


class Recorder:
    """A transport that answers what the test says and remembers what it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, object]] = []
        self.result = CallResult("ok", 200, {"ok": True}, None, 1.0)

    async def send(self, kind: str, message: OutboxMessage, *, timeout: float, target: object) -> CallResult:
        self.sent.append({"kind": kind, "recipient": message.recipient, **message.payload})
        return self.result


def judge(result: CallResult) -> Judged:
    return Judged(Verdict.DONE if result.ok else Verdict.RETRY, result.body, result.error, result)


def own_kinds(recorder: Recorder, endings: list[tuple[str, Ending]]) -> tuple[DeliveryKind[OutboxMessage], ...]:
    async def route(message: OutboxMessage, hint: object) -> Receiver[OutboxMessage]:
        return Receiver(recorder)

    async def effect(
        conn: AsyncConnection, message: OutboxMessage, ending: Ending, answer: object, error: str | None, now: datetime
    ) -> str:
        endings.append((message.kind, ending))
        return ending.value

    return DeliveryKind(POSITION, route, judge, effect, once=True), DeliveryKind(CHORE, route, judge, effect)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def endings() -> list[tuple[str, Ending]]:
    return []


@pytest.fixture
def engine(
    db: Database, clock: ShiftedClock, recorder: Recorder, endings: list[tuple[str, Ending]]
) -> Engine[OutboxMessage]:
    registry = Registry(own_kinds(recorder, endings))
    return Engine(db, clock, registry, queue=repo.OutboxQueue(), lease_seconds=60, timeout=1.0)


async def write(
    db: Database, clock: ShiftedClock, kind: str, payload: dict[str, object], *, ttl: float = 30
) -> OutboxMessage:
    """A message of ``kind`` for ``RECIPIENT``, about no booking and to no partner: a kind tried once
    is written coalescing."""
    now = clock.now()
    async with db.write() as conn:
        if kind == POSITION:
            return await repo.enqueue_latest(
                conn, recipient=RECIPIENT, kind=kind, payload=payload, now=now, deadline=now + timedelta(seconds=ttl)
            )
        return await repo.enqueue(
            conn, recipient=RECIPIENT, kind=kind, payload=payload, now=now, deadline=now + timedelta(seconds=ttl)
        )


async def state(db: Database, message_id: int) -> tuple[OutboxMessage, list[DeliveryAttempt]]:
    async with db.read() as conn:
        found = await conn.execute(select(outbox).where(outbox.c.id == message_id))
        message = OutboxMessage.from_row(found.mappings().one())
        return message, await operators.attempts_of(conn, message_id)


def test_a_kind_is_registered_once_and_an_unknown_kind_is_refused() -> None:
    async def route(message: OutboxMessage, hint: object) -> Receiver[OutboxMessage]:
        return Receiver(Recorder())

    registry = Registry((DeliveryKind(CHORE, route, judge),))
    with pytest.raises(ValueError, match="registered already"):
        registry.register(DeliveryKind(CHORE, route, judge))
    with pytest.raises(UnknownKind):
        registry["test.nobody"]
    assert registry.names() == [CHORE] and registry.once_names() == []


async def test_every_queue_has_its_registry_and_each_engine_keeps_its_own(tmp_path: Path) -> None:
    """Partner calls, client webhooks and driver positions, partner e-mails and messages to travellers are registered at
    start-up (``deliveries.registry``), each in its queue's registry; a name is taken once."""
    svc = Services.build(make_settings(f"sqlite+aiosqlite:///{tmp_path / 'kinds.db'}", tmp_path))
    kinds = deliveries.registry(svc)
    assert (
        kinds.outbox.names(),
        kinds.webhooks.names(),
        kinds.partner_emails.names(),
        kinds.traveller_messages.names(),
    ) == (
        [kind.value for kind in MessageKind],
        [CLIENT_WEBHOOK, DRIVER_POSITION_KIND],
        [PARTNER_EMAIL],
        [TRAVELLER_MESSAGE],
    )
    assert kinds.webhooks.once_names() == [DRIVER_POSITION_KIND]
    email = kinds.partner_emails[PARTNER_EMAIL]
    clash = Registry((DeliveryKind(CLIENT_WEBHOOK, email.router, email.judge),))
    with pytest.raises(ValueError, match="two queues"):
        deliveries.Kinds(kinds.outbox, kinds.webhooks, clash, kinds.traveller_messages)
    assert deliveries.Dispatcher(svc).registry.names() == kinds.outbox.names()
    webhooks = deliveries.webhook_dispatcher(svc)
    try:
        assert webhooks.engine.registry.names() == [CLIENT_WEBHOOK, DRIVER_POSITION_KIND]
    finally:
        await webhooks.aclose()
        await svc.partner_client.aclose()
        await svc.db.dispose()


async def test_a_kind_tried_once_is_coalesced_and_only_the_newest_is_sent(
    db: Database, clock: ShiftedClock, engine: Engine[OutboxMessage], recorder: Recorder
) -> None:
    first = await write(db, clock, POSITION, {"lat": 1})
    second = await write(db, clock, POSITION, {"lat": 2})
    newest = await write(db, clock, POSITION, {"lat": 3})
    for old in (first, second):
        message, attempts = await state(db, old.id)
        assert (message.status, message.last_error, attempts) == ("expired", repo.SUPERSEDED, [])
    assert await engine.run_once() == 1
    assert recorder.sent == [{"kind": POSITION, "recipient": RECIPIENT, "lat": 3}]
    message, attempts = await state(db, newest.id)
    assert (message.status, message.attempts, len(attempts)) == ("delivered", 1, 1)


async def test_a_kind_tried_once_is_never_retried(
    db: Database,
    clock: ShiftedClock,
    engine: Engine[OutboxMessage],
    recorder: Recorder,
    endings: list[tuple[str, Ending]],
) -> None:
    recorder.result = CallResult("timeout", None, None, "no answer within 1s", 1000.0)
    position = await write(db, clock, POSITION, {"lat": 4})
    chore = await write(db, clock, CHORE, {"n": 1}, ttl=3600)
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
    engine: Engine[OutboxMessage],
    recorder: Recorder,
    endings: list[tuple[str, Ending]],
) -> None:
    position = await write(db, clock, POSITION, {"lat": 5}, ttl=5)
    clock.advance(timedelta(seconds=10))  # claimed (its deadline not swept yet) after it went stale
    assert await engine.run_once() == 1
    assert recorder.sent == [] and endings == []
    message, attempts = await state(db, position.id)
    assert (message.status, message.last_error, attempts) == ("expired", STALE, [])


async def test_a_kind_tried_once_is_claimed_ahead_of_due_retries(
    db: Database, clock: ShiftedClock, engine: Engine[OutboxMessage], recorder: Recorder
) -> None:
    backlog = [await write(db, clock, CHORE, {"n": n}, ttl=3600) for n in range(3)]
    clock.advance(timedelta(seconds=1))
    await write(db, clock, POSITION, {"lat": 6})
    assert await engine.run_once(limit=1) == 1
    assert recorder.sent == [{"kind": POSITION, "recipient": RECIPIENT, "lat": 6}]  # though the chores were due earlier
    assert await engine.run_once(limit=5) == 3
    assert sorted(int(str(s["n"])) for s in recorder.sent[1:]) == [0, 1, 2]  # delivered concurrently
    assert [(await state(db, m.id))[0].status for m in backlog] == ["delivered"] * 3


# --- a kind of its own, registered at start-up, delivered by the real worker ---------------------------


@pytest.fixture
async def fresh_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, migrated: the worker runs every scheduled job on it too."""
    async with own_database(tmp_path, "worker") as url:
        await asyncio.to_thread(upgrade, url)
        yield url


async def test_a_kind_with_no_booking_and_no_partner_is_delivered_by_the_worker(
    fresh_url: str, tmp_path: Path, recorder: Recorder, endings: list[tuple[str, Ending]]
) -> None:
    """A message for a recipient of its own (no booking, no partner row anywhere in the database)
    is claimed, sent, recorded with its attempt and finished by the worker's delivery loop, beside the
    application's own kinds, from a kind registered at start-up."""
    svc = Services.build(make_settings(fresh_url, tmp_path, outbox_poll_seconds=0.05))
    dispatcher = deliveries.Dispatcher(svc)
    for kind in own_kinds(recorder, endings):
        dispatcher.registry.register(kind)
    worker = Worker(svc, dispatcher)
    now = svc.clock.now()
    async with svc.db.write() as conn:
        message = await repo.enqueue(
            conn,
            recipient="traveller:1:email",
            kind=CHORE,
            payload={"to": "ada@example.com"},
            now=now,
            deadline=now + timedelta(hours=1),
        )
    running = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(20):
            while not endings:
                await asyncio.sleep(0.05)
    finally:
        worker.stop()
        await running
        await svc.partner_client.aclose()
    try:
        assert recorder.sent == [{"kind": CHORE, "recipient": "traveller:1:email", "to": "ada@example.com"}]
        assert endings == [(CHORE, Ending.ANSWERED)]
        stored, attempts = await state(svc.db, message.id)
        assert (stored.booking_id, stored.partner_id, stored.recipient) == (None, None, "traveller:1:email")
        assert (stored.status, stored.attempts) == ("delivered", 1)
        assert [(a.attempt_no, a.outcome, a.http_status) for a in attempts] == [(1, "done:ok", 200)]
        async with svc.db.read() as conn:
            (listed,) = await operators.list_messages(conn)
        assert (listed.reservation_no, listed.partner_name, listed.message.id) == (None, None, message.id)
    finally:
        await svc.db.dispose()
