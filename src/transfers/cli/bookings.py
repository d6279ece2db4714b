"""``transfers bookings ...``: what operators need to answer "what happened to this booking?"."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import click

from transfers import money
from transfers.bookings import operator_queries
from transfers.bookings.models import Booking, ListedBooking
from transfers.bookings.state import BookingStatus
from transfers.cancellation.views import cancel_refund, stored_policy
from transfers.cli.common import fail, print_json, with_db
from transfers.cli.tables import cell, jsonable, render, render_pairs, safe
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.delivery import repository as outbox_repo
from transfers.operators.booking_story import BookingDetail, load_detail

STORED_STATUSES = [s.value for s in BookingStatus if s is not BookingStatus.DEFAULT]
MAX_RESERVATION_NO = 64


def _amount(amount: Decimal | None, currency: str) -> str:
    return cell(None) if amount is None else money.text(amount, currency)


def detail_json(detail: BookingDetail) -> dict[str, Any]:
    return {
        "booking": jsonable(
            {**detail.booking.as_dict(), "client_name": detail.client_name, "partner_name": detail.partner_name}
        ),
        "ledger": jsonable([e.as_dict(detail.booking.currency) for e in detail.ledger]),
        "transitions": jsonable([t.as_dict() for t in detail.transitions]),
        "deliveries": jsonable(detail.deliveries),
    }


def _policy_lines(b: Booking) -> list[tuple[str, Any]]:
    """docs/rules/cancellation.md: the policy it was sold with, what its cancellation cost, its latest amendment."""
    policy = b.cancellation_policy
    lines: list[tuple[str, Any]] = [
        ("cancellation_policy", "free until pickup" if policy is None else stored_policy(policy).spec())
    ]
    if b.cancelled_at is not None:
        lines.append(
            (
                "cancellation",
                f"by {b.cancelled_by} at {cell(b.cancelled_at)}: fee "
                f"{_amount(b.cancellation_fee, b.currency)}, refund {_amount(cancel_refund(b), b.currency)}"
                + (
                    f" (the incidents refunded {money.text(b.incident_refunded, b.currency)} before)"
                    if b.incident_refunded
                    else ""
                ),
            )
        )
    amendment = b.amendment
    if amendment:
        message = f" ({amendment['message']})" if amendment.get("message") else ""
        lines.append(("amendment", f"{amendment['status']}{message}: {json.dumps(amendment['changes'])}"))
    return lines


def render_detail(detail: BookingDetail) -> str:
    b = detail.booking
    t = b.trip
    driver = None
    if t.driver is not None:
        driver = f"{t.driver.name}, {t.driver.phone or '-'}, {t.driver.plate or '-'}"
    p, party = t.passenger, t.party
    passenger = (
        f"{p.name} {p.surname}, {p.phone}, {p.email}"
        f" ({party.adult} adult, {party.children} children, {party.infant} infant)"
    )
    summary = render_pairs(
        [
            ("status", b.status.value),
            ("client", f"{b.client_id} {detail.client_name or '?'} ({b.pay_type})"),
            ("partner", f"{b.partner_id} {detail.partner_name or '?'}"),
            ("partner_reference", t.partner_reference),
            ("pickup", f"{cell(t.pickup_at)} at {t.route.airport_iata}, flight {t.flight.number or 'none given'}"),
            ("route", f"{t.route.pickup.label} → {t.route.dropoff.label}"),
            ("vehicle", f"{t.vehicle.make} {t.vehicle.model} ({t.vehicle.type})"),
            (
                "price",
                f"total {money.text(b.total, b.currency)} {b.currency},"
                f" net {money.text(b.net_total, b.currency)} {b.currency}"
                + (
                    f" (the partner's {money.text(b.own_net_total, b.own_currency)} {b.own_currency},"
                    f" converted at {b.fx['rate']}, {b.fx['source']} {b.fx['as_of']})"
                    if b.fx
                    else ""
                ),
            ),
            ("passenger", passenger),
            ("driver", driver),
            ("meeting_point", t.meeting_point),
            ("cancel_note", b.cancel_note),
            *_policy_lines(b),
            ("created", b.created_at),
            ("updated", b.updated_at),
        ],
        indent="  ",
    )
    sections = [f"booking {safe(b.reservation_no)}  (times in UTC)", summary, "", "ledger"]
    sections.append(
        render(
            ["id", "time", "kind", "amount", "note"],
            [[e.id, e.created_at, e.kind, money.text(e.amount, b.currency), e.note] for e in detail.ledger],
            right={"id", "amount"},
            max_width={"note": 60},
            indent="  ",
        )
    )
    sections += ["", "transitions"]
    sections.append(
        render(
            ["time", "actor", "change", "reason"],
            [
                [t.created_at, t.actor, f"{t.from_status or '(new)'} → {t.to_status}", t.reason]
                for t in detail.transitions
            ],
            max_width={"reason": 70},
            indent="  ",
        )
    )
    sections += ["", "deliveries"]
    if not detail.deliveries:
        sections.append("  (none)")
    for m in detail.deliveries:
        sections.append(
            render(
                ["id", "kind", "status", "attempts", "next_attempt", "deadline", "webhook_id", "last_error"],
                [
                    [
                        m["id"],
                        m["kind"],
                        m["status"],
                        m["attempts"],
                        m["next_attempt_at"] if m["status"] == outbox_repo.PENDING else None,
                        m["deadline_at"],
                        m["webhook_id"],
                        m["last_error"],
                    ]
                ],
                right={"id", "attempts"},
                max_width={"last_error": 60},
                indent="  ",
            )
        )
        sections.append(
            render(
                ["attempt_no", "started_at", "duration_ms", "outcome", "http_status", "error"],
                [
                    [a["attempt_no"], a["started_at"], a["duration_ms"], a["outcome"], a["http_status"], a["error"]]
                    for a in m["delivery_attempts"]
                ],
                right={"attempt_no", "duration_ms", "http_status"},
                max_width={"error": 60},
                indent="      ",
                empty="(no attempts yet)",
            )
        )
        # The answer's excerpt (at most 500 characters) in full under the table, one line per attempt,
        # terminal-safe (a newline in it reads as \x0a).
        sections.extend(
            f"      answer #{a['attempt_no']}: {cell(a['answer_excerpt'])}"
            for a in m["delivery_attempts"]
            if a.get("answer_excerpt") is not None
        )
        sections.append("")
    return "\n".join(sections).rstrip("\n")


@click.group("bookings")
def bookings_group() -> None:
    """Bookings of every client, as operators see them."""


@bookings_group.command("show")
@click.argument("reservation_no")
@click.option("--json", "as_json", is_flag=True, help="one JSON object instead of tables")
def bookings_show(reservation_no: str, as_json: bool) -> None:
    """A booking with its ledger entries, status transitions and partner deliveries (each attempt)."""
    wanted = reservation_no.strip()
    if not wanted or len(wanted) > MAX_RESERVATION_NO:
        fail(f"no booking {safe(wanted)!r}")
    detail = with_db(lambda db, _clock: load_detail(db, wanted))
    if detail is None:
        fail(f"no booking {safe(wanted)!r}")
        return
    if as_json:
        print_json(detail_json(detail))
        return
    click.echo(render_detail(detail))


@bookings_group.command("list")
@click.option("--status", type=click.Choice(STORED_STATUSES, case_sensitive=False), default=None)
@click.option("--client", "client_id", type=int, default=None, help="only this client's bookings")
@click.option("--partner", "partner_id", type=int, default=None, help="only this partner's bookings")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def bookings_list(status: str | None, client_id: int | None, partner_id: int | None, limit: int, as_json: bool) -> None:
    """Bookings, newest first. Times are UTC."""

    async def load(db: Database, _clock: SystemClock) -> list[ListedBooking]:
        async with db.read() as conn:
            return await operator_queries.operator_list(
                conn,
                status=None if status is None else status.upper(),
                client_id=client_id,
                partner_id=partner_id,
                limit=limit,
            )

    rows = with_db(load)
    if as_json:
        print_json(jsonable([r.as_dict() for r in rows]))
        return
    click.echo(
        render(
            ["reservation_no", "status", "client", "partner", "airport", "pickup", "total", "currency", "created"],
            [
                [
                    r.reservation_no,
                    r.status,
                    f"{r.client_id} {r.client_name}",
                    f"{r.partner_id} {r.partner_name}",
                    r.airport_iata,
                    r.pickup_at,
                    money.text(r.total, r.currency),
                    r.currency,
                    r.created_at,
                ]
                for r in rows
            ],
            max_width={"client": 28, "partner": 24},
            right={"total"},
        )
    )
