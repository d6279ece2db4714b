"""``transfers outbox ...``: look at partner deliveries, and send a given-up one again."""

from __future__ import annotations

import click

from transfers.bookings.state import TERMINAL, BookingStatus
from transfers.cli.common import actor, fail, print_json, settings, with_db
from transfers.cli.tables import jsonable, render
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.outbox import repository as repo
from transfers.outbox.models import ListedMessage
from transfers.outbox.retry import RetryRefused, retry_message
from transfers.webhooks.retry import retry_webhook_delivery

LIST_COLUMNS = ["id", "kind", "reservation_no", "partner", "status", "attempts", "next_attempt", "deadline",
                "last_error"]


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
a cancellation notice) can always be retried; booking.amend messages never (the amendment was
rejected when its delivery stopped: the client amends again).
"""


@outbox_group.command("retry", help=RETRY_HELP, short_help="Send a failed or expired message again.")
@click.argument("outbox_id", type=int)
@click.option("--webhook", is_flag=True,
              help="ID is a client webhook delivery's (DECISIONS 13): a failed one is sent again, same event, "
                   "deadline now + 24 h; refused when delivered, pending, or its endpoint is disabled or deleted")
def outbox_retry(outbox_id: int, webhook: bool) -> None:
    who = actor()
    cfg = settings()
    try:
        if webhook:
            retried = with_db(lambda db, clock: retry_webhook_delivery(db, clock, outbox_id, actor=who))
            print_json(retried.as_dict())
            return
        result = with_db(lambda db, clock: retry_message(
            db, clock, outbox_id, before_pickup_hours=cfg.delivery_deadline_before_pickup_hours, actor=who))
    except RetryRefused as exc:
        fail(str(exc))
        return
    print_json(result.as_dict())
