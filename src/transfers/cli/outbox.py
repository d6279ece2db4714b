"""``transfers outbox ...``: look at partner deliveries, and send a given-up one again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import click

from transfers.bookings import repository as bookings_repo
from transfers.bookings.state import TERMINAL, BookingStatus
from transfers.cli.common import actor, fail, print_json, settings, with_db
from transfers.cli.tables import cell, jsonable, render
from transfers.clients.repository import record_admin_action
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.outbox import repository as repo
from transfers.outbox.kinds import MessageKind
from transfers.outbox.models import ListedMessage
from transfers.outbox.policy import delivery_deadline

RETRY_WINDOW = timedelta(hours=24)
LIST_COLUMNS = ["id", "kind", "reservation_no", "partner", "status", "attempts", "next_attempt", "deadline",
                "last_error"]


class RetryRefused(Exception):
    """The message cannot (or must not) be sent again; the text says why."""


@click.group("outbox")
def outbox_group() -> None:
    """Partner deliveries: booking.create and booking.update messages."""


@outbox_group.command("list")
@click.option("--failed", is_flag=True, help="messages whose delivery stopped: failed (refused) or expired")
@click.option("--pending", is_flag=True, help="messages still being delivered")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def outbox_list(failed: bool, pending: bool, limit: int, as_json: bool) -> None:
    """Outbox messages, newest first (every status unless --failed and/or --pending). Times are UTC."""
    statuses: list[str] | None = None
    if failed or pending:
        statuses = [*(repo.GAVE_UP if failed else ()), *((repo.PENDING,) if pending else ())]

    async def load(db: Database, _clock: SystemClock) -> list[ListedMessage]:
        async with db.read() as conn:
            return await repo.list_messages(conn, statuses=statuses, limit=limit)

    rows = with_db(load)
    if as_json:
        print_json(jsonable([r.as_dict() for r in rows]))
        return
    click.echo(render(
        LIST_COLUMNS,
        [[m.id, m.kind, r.reservation_no, f"{m.partner_id} {r.partner_name}", m.status, m.attempts,
          m.next_attempt_at if m.status == repo.PENDING else None, m.deadline_at, m.last_error]
         for r in rows for m in (r.message,)],
        max_width={"partner": 24, "last_error": 60}, right={"id", "attempts"},
    ))


ENDED = ", ".join(sorted(s.value for s in TERMINAL if s is not BookingStatus.DEFAULT))
RETRY_HELP = f"""Send a failed or expired message again: back to pending, due now, with a new deadline
(now + 24 h; for a booking.create also no later than the pickup's delivery cut-off). The webhook-id
stays the same, so a partner that did receive an earlier attempt recognises the repeat. Delivered
and still-pending messages are refused. Written to admin_audit.

A booking.create whose booking already ended ({ENDED}) is
refused: re-sending it would ask the partner for a ride while the booking stays ended and the client
stays refunded (a retry never revives a booking). Book again instead. booking.update messages (e.g.
a cancellation notice) can always be retried.
"""


@outbox_group.command("retry", help=RETRY_HELP, short_help="Send a failed or expired message again.")
@click.argument("outbox_id", type=int)
def outbox_retry(outbox_id: int) -> None:
    who = actor()
    cfg = settings()

    async def work(db: Database, clock: SystemClock) -> dict[str, Any]:
        now = clock.now()
        async with db.write() as conn:
            message = await repo.get_for_update(conn, outbox_id)
            if message is None:
                raise RetryRefused(f"no outbox message {outbox_id}")
            status = message.status
            if status == repo.DELIVERED:
                raise RetryRefused(f"outbox message {outbox_id} was delivered at {cell(message.finished_at)}; "
                                   "nothing to retry")
            if status == repo.PENDING:
                raise RetryRefused(f"outbox message {outbox_id} is still pending (next attempt at "
                                   f"{cell(message.next_attempt_at)}); nothing to retry")
            if status not in repo.GAVE_UP:
                raise RetryRefused(f"outbox message {outbox_id} has the unexpected status {status!r}")
            booking = await bookings_repo.get_by_id(conn, message.booking_id)
            deadline = now + RETRY_WINDOW
            if message.kind == MessageKind.CREATE and booking is not None:
                if booking.status in TERMINAL:
                    raise RetryRefused(
                        f"outbox message {outbox_id} creates booking {booking.reservation_no}, which is "
                        f"{booking.status.value} (and refunded): a retry would ask the partner for a ride the "
                        "booking no longer pays for. Book again instead.")
                deadline = delivery_deadline(
                    now, booking.pickup_at, hours_after_creation=RETRY_WINDOW.total_seconds() / 3600,
                    hours_before_pickup=cfg.delivery_deadline_before_pickup_hours)
                if deadline <= now:
                    raise RetryRefused(f"outbox message {outbox_id}: the pickup of booking "
                                       f"{booking.reservation_no} is too close to deliver a create now")
            if not await repo.retry(conn, outbox_id, now=now, deadline=deadline):
                raise RetryRefused(f"outbox message {outbox_id} changed meanwhile; try again")
            details = {"kind": message.kind, "previous_status": status, "attempts": message.attempts,
                       "last_error": message.last_error, "webhook_id": message.webhook_id,
                       "reservation_no": booking.reservation_no if booking else None,
                       "deadline": deadline.isoformat()}
            await record_admin_action(conn, actor=who, action="outbox.retry", subject=f"outbox:{outbox_id}",
                                      details=details, now=now)
        return {"outbox_id": outbox_id, "kind": message.kind, "status": repo.PENDING,
                "previous_status": status, "webhook_id": message.webhook_id,
                "reservation_no": details["reservation_no"], "next_attempt_at": now.isoformat(),
                "deadline": deadline.isoformat()}

    try:
        result = with_db(work)
    except RetryRefused as exc:
        fail(str(exc))
        return
    print_json(result)
