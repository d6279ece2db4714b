"""``transfers outbox ...``: look at partner deliveries, and send a given-up one again."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from transfers.bookings.state import TERMINAL, BookingStatus
from transfers.cli.common import actor, fail, print_json, settings, with_db
from transfers.cli.tables import jsonable, render
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.delivery import operators as repo
from transfers.delivery.models import PENDING, ListedMessage
from transfers.outbox.retry import RetryRefused, retry_message
from transfers.webhooks import operators as hooks_ops
from transfers.webhooks import repository as hooks_repo
from transfers.webhooks.models import OperatorDelivery
from transfers.webhooks.retry import retry_webhook_delivery

LIST_COLUMNS = [
    "id",
    "kind",
    "reservation_no",
    "partner",
    "status",
    "attempts",
    "next_attempt",
    "deadline",
    "last_error",
]


@click.group("outbox")
def outbox_group() -> None:
    """Partner deliveries (booking.create, booking.update, booking.amend) and client webhook deliveries."""


@outbox_group.command("list")
@click.option("--failed", is_flag=True, help="deliveries that stopped: failed (refused) or expired")
@click.option("--pending", is_flag=True, help="deliveries still being attempted")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def outbox_list(failed: bool, pending: bool, limit: int, as_json: bool) -> None:
    """Partner messages and client webhook deliveries (docs/rules/webhooks.md), newest first (every status unless
    --failed and/or --pending). A webhook delivery's ID is shown as ``w<id>`` and its KIND as
    ``webhook:<event type>``, its PARTNER column names the client; retry it with ``outbox retry w<id>``.
    Times are UTC."""
    statuses: list[str] | None = None
    hook_statuses: list[str] | None = None
    if failed or pending:
        statuses = [*(repo.GAVE_UP if failed else ()), *((PENDING,) if pending else ())]
        hook_statuses = [*((hooks_repo.FAILED,) if failed else ()), *((hooks_repo.PENDING,) if pending else ())]

    async def load(db: Database, _clock: SystemClock) -> tuple[list[ListedMessage], list[OperatorDelivery]]:
        async with db.read() as conn:
            return (
                await repo.list_messages(conn, statuses=statuses, limit=limit),
                await hooks_ops.list_for_operator(conn, statuses=hook_statuses, limit=limit),
            )

    messages, hooks = with_db(load)
    rows: list[tuple[datetime, list[Any], dict[str, Any]]] = []
    for r in messages:
        m = r.message
        rows.append(
            (
                m.created_at,
                [
                    m.id,
                    m.kind,
                    r.reservation_no,
                    f"{m.partner_id} {r.partner_name}",
                    m.status,
                    m.attempts,
                    m.next_attempt_at if m.status == PENDING else None,
                    m.deadline_at,
                    m.last_error,
                ],
                r.as_dict(),
            )
        )
    for h in hooks:
        rows.append(
            (
                h.created_at,
                [
                    f"w{h.id}",
                    f"webhook:{h.type}",
                    h.reservation_no,
                    f"client {h.client_id}",
                    h.status,
                    h.attempts,
                    h.next_attempt_at if h.status == hooks_repo.PENDING else None,
                    h.deadline_at,
                    h.last_error,
                ],
                {
                    "id": f"w{h.id}",
                    "source": "webhook",
                    "kind": f"webhook:{h.type}",
                    **{k: v for k, v in h.as_dict().items() if k != "id"},
                },
            )
        )
    rows.sort(key=lambda row: row[0], reverse=True)
    rows = rows[:limit]
    if as_json:
        print_json(jsonable([data for _, _, data in rows]))
        return
    click.echo(
        render(
            LIST_COLUMNS,
            [cells for _, cells, _ in rows],
            max_width={"partner": 24, "last_error": 60},
            right={"id", "attempts"},
        )
    )


class WebhookOrMessageId(click.ParamType[tuple[int, bool]]):
    """An outbox message id (``12``) or, as ``outbox list`` shows them, a webhook delivery's (``w12``)."""

    name = "ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, bool]:
        if isinstance(value, tuple):
            return value
        text = str(value)
        webhook = text[:1] in ("w", "W")
        digits = text[1:] if webhook else text
        if not digits.isascii() or not digits.isdigit():
            self.fail(f"{text!r} is not a message id (12) or a webhook delivery id (w12)", param, ctx)
        return int(digits), webhook


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
@click.argument("outbox_id", type=WebhookOrMessageId())
@click.option(
    "--webhook",
    is_flag=True,
    help="ID is a client webhook delivery's (docs/rules/webhooks.md): a failed one is sent again, same event, "
    "deadline now + 24 h; refused when delivered, pending, or its endpoint is disabled or deleted",
)
def outbox_retry(outbox_id: tuple[int, bool], webhook: bool) -> None:
    number, webhook = outbox_id[0], webhook or outbox_id[1]  # "w12": webhook delivery 12 (outbox list)
    who = actor()
    cfg = settings()
    try:
        if webhook:
            retried = with_db(lambda db, clock: retry_webhook_delivery(db, clock, number, actor=who))
            print_json(retried.as_dict())
            return
        result = with_db(
            lambda db, clock: retry_message(
                db, clock, number, before_pickup_hours=cfg.delivery_deadline_before_pickup_hours, actor=who
            )
        )
    except RetryRefused as exc:
        fail(str(exc))
        return
    print_json(result.as_dict())
