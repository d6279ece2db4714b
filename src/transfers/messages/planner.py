"""The messages planner: a scheduled pass that reads the client events it has not planned yet and writes
the messages they call for (docs/rules/messages.md#templates). No hook in the booking's write paths:
every change already writes its client events in its own transaction, so creating or changing a booking
costs nothing more.

An event is planned once: the pass marks it (``message_planned_events``) in the transaction that writes
its messages, so a failure plans it again and a second worker skips it. The events looked at are those
not marked over a trailing window (2 days), not "every id after the last one": an event committed late
under a lower id is still planned. The unique dedupe key makes writing one plan twice harmless anyway.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.db.engine import Database
from transfers.i18n.languages import message_language
from transfers.messages import planning
from transfers.messages import planning_repository as planning_repo
from transfers.messages import repository as messages_repo
from transfers.messages.models import Channel, MessageSettings, NewMessage, Status, Template
from transfers.reference.airports import find_airport

log = structlog.get_logger("transfers.messages")
WINDOW = timedelta(days=2)
BATCH = 100


async def plan_pass(db: Database, now: datetime, *, limit: int = BATCH) -> int:
    """One batch of unplanned events planned, in one transaction; how many events were read."""
    async with db.write() as conn:
        low = await planning_repo.window_start(conn)
        events = await planning_repo.unplanned_events(
            conn, low=low, since=now - WINDOW, types=planning.EVENT_TYPES, limit=limit
        )
        owned = await planning_repo.mark_planned(conn, [e.pk for e in events], now)
        mine = [e for e in events if e.pk in owned]
        if mine:
            written = await plan_events(conn, mine, now)
            if written:
                log.info("messages_planned", events=len(mine), messages=written)
    return len(events)


async def purge_marks(db: Database, now: datetime, *, limit: int = 1000) -> int:
    """Marks older than the window go (the client events they point at are pruned after 30 days)."""
    async with db.write() as conn:
        return await planning_repo.purge_marks(conn, now - WINDOW, limit=limit)


async def plan_events(conn: AsyncConnection, events: list[planning_repo.EventRow], now: datetime) -> int:
    """The messages of ``events`` (in id order), written; how many rows were new. A pickup move first
    moves the expiry of the booking's waiting messages that expire at the pickup to the pickup as it
    is now (docs/rules/messages.md#timing)."""
    booking_ids = {e.booking_id for e in events}
    facts = await planning_repo.bookings_facts(conn, booking_ids)
    settings: dict[int, MessageSettings | None] = {}
    for client_id in {e.client_id for e in events}:
        settings[client_id] = await messages_repo.settings_of(conn, client_id)
    context = await Context.load(conn, facts.values())
    for booking_id in sorted({e.booking_id for e in events if e.type == planning.PICKUP_MOVED}):
        moved = facts.get(booking_id)
        if moved is not None:
            await planning_repo.follow_pickup(conn, booking_id, moved.pickup_at, planning.AT_PICKUP)
    written = 0
    for event in events:
        row = facts.get(event.booking_id)
        client = settings.get(event.client_id)
        if row is None or client is None or not (client.channels or client.feedback):
            continue
        booking = context.booking(row, client)
        planned = planning.plan_event(
            _event(event), booking, settings_for(client), now=now, stopped=context.stopped_for(booking)
        )
        written += await write_planned(conn, planned, now)
        context.count_sms(booking.id, planned)
    return written


async def write_planned(conn: AsyncConnection, planned: Iterable[planning.Planned], now: datetime) -> int:
    """Write the planned rows (a dedupe key already written writes nothing); a driver change supersedes
    the booking's waiting one, or brings back its own superseded message. How many rows were new."""
    rows = list(planned)
    if not rows:
        return 0
    keys = set(await messages_repo.insert_messages(conn, [_new(p, now) for p in rows], now))
    for p in rows:
        if p.template != "driver_changed" or p.status != "scheduled":
            continue
        fresh = p.dedupe_key in keys or await planning_repo.revive_superseded(
            conn, p.dedupe_key, scheduled_for=p.scheduled_for, expires_at=p.expires_at
        )
        if fresh:
            mine = [q.dedupe_key for q in rows if q.booking_id == p.booking_id and q.template == "driver_changed"]
            await planning_repo.supersede_driver_changes(conn, p.booking_id, mine, now)
    return len(keys)


@dataclass
class Context:
    """What a batch's bookings share: their SMS so far (for the limit) and the opt-outs of their addresses."""

    sms: dict[int, list[str]]
    optouts: set[tuple[int | None, str, str]]

    @classmethod
    async def load(cls, conn: AsyncConnection, rows: Iterable[planning_repo.FactRow]) -> Context:
        rows = list(rows)
        pairs: set[tuple[str, str]] = set()
        for row in rows:
            if row.passenger_email:
                pairs.add((Channel.EMAIL.value, messages_repo.normalize_address(Channel.EMAIL, row.passenger_email)))
            if row.passenger_phone:
                pairs.add((Channel.SMS.value, messages_repo.normalize_address(Channel.SMS, row.passenger_phone)))
        ids = [r.id for r in rows]
        return cls(await planning_repo.sms_statuses(conn, ids), await messages_repo.stopped(conn, pairs, ids))

    def booking(self, row: planning_repo.FactRow, client: MessageSettings) -> planning.BookingFacts:
        return booking_facts(row, client, sms=self.sms.get(row.id, []))

    def stopped_for(self, booking: planning.BookingFacts) -> set[tuple[str, str]]:
        return {(channel, address) for scope, channel, address in self.optouts if scope in (None, booking.id)}

    def count_sms(self, booking_id: int, planned: Iterable[planning.Planned]) -> None:
        self.sms.setdefault(booking_id, []).extend(p.status for p in planned if p.channel == "sms")


def booking_facts(
    row: planning_repo.FactRow, client: MessageSettings, *, sms: Iterable[str] = ()
) -> planning.BookingFacts:
    """A booking's row as planning reads it."""
    airport = find_airport(row.airport_iata)
    switches = row.message_channels if isinstance(row.message_channels, dict) else {}
    return planning.BookingFacts(
        id=row.id,
        client_id=row.client_id,
        pickup_at=row.pickup_at,
        created_at=row.created_at,
        tz=airport.tz if airport else None,
        email=row.passenger_email,
        phone=row.passenger_phone,
        language=message_language(row.passenger_language, client.default_language),
        approved_at=row.approved_at,
        cancelled_by=row.cancelled_by,
        status=row.status,
        driver_name=row.driver_name,
        driver_plate=row.driver_plate,
        channels_off=frozenset(k for k, on in switches.items() if on is False),
        sms_statuses=tuple(sms),
    )


def settings_for(client: MessageSettings) -> planning.Settings:
    """The client's settings as planning reads them."""
    return planning.Settings(frozenset(str(c) for c in client.channels), feedback=client.feedback)


def _event(row: planning_repo.EventRow) -> planning.Event:
    """An event as planning reads it: the pickup and the driver from its snapshot (the BookingResource as
    of the event), when it has one."""
    snapshot = row.snapshot or {}
    pickup_at = None
    text = snapshot.get("pickup_datetime")
    if isinstance(text, str):
        try:
            parsed = datetime.fromisoformat(text)
            pickup_at = parsed if parsed.tzinfo is not None else None
        except ValueError:
            pickup_at = None
    driver = snapshot.get("driver") if isinstance(snapshot.get("driver"), dict) else None
    return planning.Event(
        pk=row.pk,
        type=row.type,
        created_at=row.created_at,
        status=row.status,
        previous_status=row.previous_status,
        data=row.data or {},
        pickup_at=pickup_at,
        driver_name=driver.get("name") if driver else None,
        driver_plate=driver.get("plate") if driver else None,
    )


def _new(p: planning.Planned, now: datetime) -> NewMessage:
    final = p.status != "scheduled"
    return NewMessage(
        booking_id=p.booking_id,
        client_id=p.client_id,
        template=Template(p.template),
        channel=Channel(p.channel),
        to_address=p.to_address or None,
        language=p.language,
        status=Status(p.status),
        revision=p.revision,
        scheduled_for=p.scheduled_for,
        expires_at=p.expires_at,
        reason=p.reason,
        finished_at=now if final else None,
    )
