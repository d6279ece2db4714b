"""The reminders pass: a scheduled pass over upcoming APPROVED bookings writing the 24 h reminder of each
once it is due (docs/rules/messages.md#timing). The reminder is written when its time comes (24 h before
the pickup, out of the airport's night), not at booking: the pickup can still move, and a reminder not yet
sent carries the current pickup time (its text is rendered at the send).

The bookings read are those picked up within the next 24 h, APPROVED, made more than 24 h before their
pickup, of clients with a channel on: one range of the (status, pickup) index, in batches of ``BATCH``,
each its own transaction; those whose reminder is written already are left out by a second read of
the batch's ids (by the messages' booking index) rather than an anti-join, whose plan PostgreSQL got
badly wrong while a pass wrote faster than the table's statistics followed (a nested loop over a
materialized scan of every message: minutes instead of a second). Two workers at once write one reminder
(the dedupe key).
"""

from __future__ import annotations

from datetime import datetime

import structlog

from transfers.db.engine import Database
from transfers.messages import planning
from transfers.messages import planning_repository as planning_repo
from transfers.messages import repository as messages_repo
from transfers.messages.models import MessageSettings
from transfers.messages.planner import Context, settings_for, write_planned
from transfers.messages.timing import REMINDER_BEFORE

log = structlog.get_logger("transfers.messages")
BATCH = 1000


async def reminders_pass(db: Database, now: datetime, *, batch: int = BATCH, max_batches: int | None = None) -> int:
    """Write every reminder due now (batch after batch); how many bookings were read."""
    after: tuple[datetime, int] | None = None
    read = batches = 0
    settings: dict[int, MessageSettings | None] = {}
    while max_batches is None or batches < max_batches:
        async with db.write() as conn:
            read_rows = await planning_repo.upcoming(
                conn, now=now, horizon=now + REMINDER_BEFORE, after=after, limit=batch
            )
            if not read_rows:
                break
            done = await planning_repo.with_reminder(conn, [r.id for r in read_rows])
            rows = [r for r in read_rows if r.id not in done]
            context = await Context.load(conn, rows)
            planned: list[planning.Planned] = []
            for row in rows:
                client_id = row.client_id
                if client_id not in settings:
                    settings[client_id] = await messages_repo.settings_of(conn, client_id)
                client = settings[client_id]
                if client is None or not client.channels:
                    continue
                booking = context.booking(row, client)
                planned += planning.plan_reminder(
                    booking, settings_for(client), now=now, stopped=context.stopped_for(booking)
                )
            written = await write_planned(conn, planned, now)
        read += len(read_rows)
        batches += 1
        if written:
            log.info("reminders_planned", bookings=len(rows), messages=written)
        last = read_rows[-1]
        after = (last.pickup_at, last.id)
        if len(read_rows) < batch:
            break
    return read
