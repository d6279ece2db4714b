"""The soak's invariants (``bench/soak.py``), checked once everything has settled, each one a row of
the final table: what was checked, the figure, and for a failure the bookings and the evidence.

They read the soak's own database (every row in it is the soak's), what the test partners and the
client-webhook receiver recorded, and the client's journal of answers.
"""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from tests.booking_invariants import check_booking_invariants
from tests.invariants import check_event_invariants, check_statement_invariants, check_wallet_invariants

from bench.soak_load import Attempt, Booked
from bench.soak_partners import FlakyReceiver, PartnerSetup
from bench.soak_world import Slot
from transfers import money
from transfers.db.engine import Database
from transfers.db.tables import bookings, client_events, ledger_entries, outbox, partner_emails, webhook_deliveries
from transfers.db.tables import wallets as wallets_table

GRACE_SECONDS = 5.0  # after a fault ends, answers still cut off by it are counted as the fault's


@dataclass
class Check:
    name: str
    ok: bool
    figure: str
    evidence: list[str] = field(default_factory=list)


@dataclass
class Window:
    name: str
    start: float
    end: float
    detail: str = ""


def in_window(t: float, windows: list[Window], took: float = 0.0) -> bool:
    """Whether the moment ``t`` (or a request sent then and answered ``took`` s later: one in flight
    when the fault struck is the fault's) falls in a fault window or its grace."""
    return any(t <= w.end + GRACE_SECONDS and t + took >= w.start for w in windows)


async def _rows(db: Database) -> dict[str, Any]:
    async with db.read() as conn:
        booking_rows = [dict(r._mapping) for r in await conn.execute(select(bookings))]
        entries = (
            await conn.execute(
                select(ledger_entries.c.booking_id, ledger_entries.c.kind, ledger_entries.c.amount).where(
                    ledger_entries.c.booking_id.is_not(None)
                )
            )
        ).all()
        messages = [dict(r._mapping) for r in await conn.execute(select(outbox))]
        events = (
            await conn.execute(
                select(
                    client_events.c.event_id, client_events.c.booking_id, client_events.c.sequence, client_events.c.type
                )
            )
        ).all()
        deliveries = (
            await conn.execute(
                select(webhook_deliveries.c.kind, webhook_deliveries.c.status, func.count()).group_by(
                    webhook_deliveries.c.kind, webhook_deliveries.c.status
                )
            )
        ).all()
        emails = (await conn.execute(select(partner_emails.c.booking_id, partner_emails.c.kind))).all()
    return {
        "bookings": booking_rows,
        "entries": entries,
        "outbox": messages,
        "events": events,
        "deliveries": deliveries,
        "emails": emails,
    }


async def answered_bookings(db: Database, journal: list[Booked], client_ids: list[int]) -> tuple[Check, dict[str, Any]]:
    data = await _rows(db)
    by_no = {b["reservation_no"]: b for b in data["bookings"]}
    debits: dict[int, list[Decimal]] = defaultdict(list)
    for booking_id, kind, amount in data["entries"]:
        if kind == "debit_booking":
            debits[booking_id].append(Decimal(amount))
    problems = []
    answered = [b for b in journal if b.status == 200]
    for booked in answered:
        for number, total in zip(booked.reservation_nos, booked.totals, strict=True):
            row = by_no.get(number)
            if row is None:
                problems.append(f"{booked.key}: answered Success with {number}, which is not in the database")
                continue
            if Decimal(row["total"]) != Decimal(total):
                problems.append(f"{number}: answered total {total}, stored {row['total']}")
            if row["currency"] != booked.currency:
                problems.append(f"{number}: searched in {booked.currency}, booked in {row['currency']}")
            if row["client_id"] != client_ids[booked.client]:
                problems.append(f"{number}: stored for client {row['client_id']}")
            if debits.get(row["id"], []) != [-Decimal(total)]:
                problems.append(f"{number} ({booked.key}): debits {debits.get(row['id'])} for total {total}")
        if booked.kind == "return" and len(booked.reservation_nos) != 2:
            problems.append(f"{booked.key}: a return pair answered with {booked.reservation_nos}")
    answered_nos = {no for b in answered for no in b.reservation_nos}
    for number, row in by_no.items():
        if number not in answered_nos:
            problems.append(f"{number} (key {row['idempotency_key']}): in the database, never answered Success")
    unanswered = [b for b in journal if b.status is None]
    for booked in unanswered:
        problems.append(f"{booked.key}: no final answer to the create within the client's retry window")
    refused: dict[str, int] = defaultdict(int)
    for booked in journal:
        if booked.status not in (None, 200):
            refused[f"{booked.status} {booked.answer.get('code')}"] += 1
    figure = (
        f"{len(answered)} creates answered Success ({sum(len(b.reservation_nos) for b in answered)} bookings), "
        f"{len(by_no)} in the database, each debited once; refused {dict(refused) or 0}"
    )
    return Check("every booking answered Success exists once, debited once", not problems, figure, problems), data


async def refunds(db: Database, journal: list[Booked], data: dict[str, Any], fee_partner_id: int) -> Check:
    """The booking invariants (tests/booking_invariants.py) over every booking, and each cancel the
    client was answered Success for: the booking CANCELLED, one refund at most, and the 25 % fee kept
    exactly at the partner whose policy says so (by the booking's own partner: a return pair's legs
    may be at two partners)."""
    problems = []
    try:
        await check_booking_invariants(db)
    except AssertionError as exc:
        problems.extend(str(exc).splitlines())
    by_no = {b["reservation_no"]: b for b in data["bookings"]}
    refunded: dict[int, list[Decimal]] = defaultdict(list)
    for booking_id, kind, amount in data["entries"]:
        if kind.startswith("credit_") or kind.startswith("incident_"):
            refunded[booking_id].append(Decimal(amount))
    cancels = fees = 0
    for booked in journal:
        for number, (status, answer) in booked.cancels.items():
            if status != 200:
                continue
            cancels += 1
            row = by_no[number]
            if row["status"] != "CANCELLED":
                problems.append(f"{number}: cancel answered {answer}, booking is {row['status']}")
                continue
            fee = Decimal(row["cancellation_fee"] or 0)
            fees += fee > 0
            quarter = money.round_half_up(Decimal(row["total"]) / 4, row["currency"])  # the policy's 25 %, half-up
            wanted = quarter if row["partner_id"] == fee_partner_id else 0
            if fee != wanted:
                problems.append(
                    f"{number}: fee {fee} on {row['total']}, expected {wanted} (partner {row['partner_id']})"
                )
            if len(refunded[row["id"]]) > 1:
                problems.append(f"{number}: refunded {refunded[row['id']]}")
    incidents = sum(1 for b in journal if b.incident)
    figure = (
        f"{cancels} client cancels ({fees} keeping a fee), {sum(len(v) for v in refunded.values())} refund entries "
        f"over {len(refunded)} bookings, {incidents} ride incidents; the booking invariants over every booking"
    )
    return Check("every refund once (cancels, fees, incidents)", not problems, figure, problems)


async def wallets(db: Database) -> Check:
    problems = []
    checked = 0
    try:
        checked = await check_wallet_invariants(db)
        await check_statement_invariants(db)
    except AssertionError as exc:
        problems.append(str(exc))
    async with db.read() as conn:
        by_currency = (
            await conn.execute(select(wallets_table.c.currency, func.count()).group_by(wallets_table.c.currency))
        ).all()
    shown = ", ".join(f"{c} {n}" for c, n in sorted(by_currency))
    return Check("wallet = sum of its ledger, never negative", not problems, f"{checked} wallets ({shown})", problems)


def partner_creates(partners: dict[str, PartnerSetup], data: dict[str, Any]) -> Check:
    problems = []
    redelivered = overlapping = total = 0
    rows = data["bookings"]
    for name, setup in partners.items():
        mine = [b for b in rows if b["partner_id"] == setup.partner_id]
        if setup.partner is None:  # hosted: its e-mail, once per booking
            news: dict[int, int] = defaultdict(int)
            for booking_id, kind in data["emails"]:
                if kind == "booking.new":
                    news[booking_id] += 1
            wrong = [b["reservation_no"] for b in mine if news.get(b["id"]) != 1]
            problems += [f"{name} {no}: {news.get(by_id, 0)} new-booking e-mails" for no, by_id in _ids(mine, wrong)]
            total += len(mine)
            continue
        partner = setup.partner
        ids_by_no: dict[str, set[str]] = defaultdict(set)
        ok_ids: set[str] = set()
        calls_by_id: dict[str, list[Any]] = defaultdict(list)
        for call in partner.calls("/booking/create"):
            wid = call.headers.get("webhook-id", "")
            ids_by_no[(call.body or {}).get("reservation_no", "")].add(wid)
            calls_by_id[wid].append(call)
            if partner.ok(call):
                ok_ids.add(wid)
        for wid, calls in calls_by_id.items():
            oks = [c for c in calls if partner.ok(c)]
            redelivered += max(0, len(oks) - 1)
            ordered = sorted(calls, key=lambda c: c.started)
            for a, b in itertools.pairwise(ordered):
                if a.finished == 0.0 or b.started < a.finished:
                    overlapping += 1
                    problems.append(f"{name}: two overlapping deliveries of {wid}")
        for booking in mine:
            got = ids_by_no.get(booking["reservation_no"], set())
            effective = got & ok_ids
            if len(effective) != 1:
                problems.append(
                    f"{name} {booking['reservation_no']} ({booking['status']}): {len(effective)} accepted creates, "
                    f"webhook-ids {sorted(got)}"
                )
        unknown = set(ids_by_no) - {b["reservation_no"] for b in mine}
        problems += [f"{name}: a create for {no}, which is not one of its bookings" for no in sorted(unknown)]
        total += len(mine)
    figure = (
        f"{total} bookings, each accepted once by its partner (by webhook-id); {redelivered} redeliveries of an "
        f"accepted webhook-id after a kill, {overlapping} overlapping"
    )
    return Check("every partner got exactly one create per booking", not problems, figure, problems)


def _ids(rows: list[dict[str, Any]], numbers: list[str]) -> list[tuple[str, int]]:
    return [(r["reservation_no"], r["id"]) for r in rows if r["reservation_no"] in numbers]


def partner_cancels(partners: dict[str, PartnerSetup], data: dict[str, Any]) -> Check:
    problems = []
    told = 0
    cancelled = {
        b["reservation_no"]: b for b in data["bookings"] if b["status"] == "CANCELLED" and b["cancelled_by"] == "client"
    }
    for name, setup in partners.items():
        partner = setup.partner
        if partner is None:
            continue
        ids_by_no: dict[str, set[str]] = defaultdict(set)
        ok_ids: set[str] = set()
        for call in partner.calls("/booking/update"):
            if (call.body or {}).get("status") != "CANCELLED":
                continue
            wid = call.headers.get("webhook-id", "")
            ids_by_no[call.body["reservation_no"]].add(wid)
            if partner.ok(call):
                ok_ids.add(wid)
        for number, booking in cancelled.items():
            if booking["partner_id"] != setup.partner_id:
                continue
            effective = ids_by_no.get(number, set()) & ok_ids
            told += len(effective) == 1
            if len(effective) != 1:
                problems.append(f"{name} {number}: {len(effective)} accepted cancels, ids {ids_by_no.get(number)}")
        for number in ids_by_no:
            if number not in cancelled:
                problems.append(f"{name} {number}: told CANCELLED, booking is not cancelled by its client")
    hosted = sum(
        1 for b in cancelled.values() if partners.get("Hosted") and b["partner_id"] == partners["Hosted"].partner_id
    )
    figure = f"{told} cancels told to server partners once each (+{hosted} at the hosted partner)"
    return Check("every cancel told to its partner once", not problems, figure, problems)


def client_deliveries(receiver: FlakyReceiver, data: dict[str, Any]) -> Check:
    problems = []
    expected: dict[str, set[int]] = defaultdict(set)
    numbers = {b["id"]: b["reservation_no"] for b in data["bookings"]}
    sequence_of = {b["reservation_no"]: b["event_sequence"] for b in data["bookings"]}
    for _event_id, booking_id, sequence, _type in data["events"]:
        if booking_id is not None and sequence is not None:
            expected[numbers[booking_id]].add(sequence)
    got: dict[str, set[int]] = defaultdict(set)
    bodies: dict[str, bytes] = {}
    failures = 0
    for hook in receiver.received:
        if hook.sequence is None or hook.reservation_no is None:
            continue
        if hook.webhook_id in bodies and bodies[hook.webhook_id] != hook.body:
            problems.append(f"{hook.reservation_no}: {hook.webhook_id} sent with two different bodies")
        bodies[hook.webhook_id] = hook.body
        if hook.status == 200:
            got[hook.reservation_no].add(hook.sequence)
        else:
            failures += 1
    for number, wanted in expected.items():
        full = set(range(1, sequence_of[number] + 1))
        if wanted != full:
            problems.append(f"{number}: events in the database {sorted(wanted)}, event_sequence {sequence_of[number]}")
        if got.get(number, set()) != full:
            missing = sorted(full - got.get(number, set()))
            problems.append(f"{number}: delivered sequences {sorted(got.get(number, set()))}, missing {missing}")
    accepted = sum(len(v) for v in got.values())
    figure = (
        f"{accepted} events over {len(expected)} bookings, each delivered with sequences 1..n "
        f"({failures} deliveries answered 500 by the receiver and retried)"
    )
    return Check("every client event delivered, consecutive sequences", not problems, figure, problems)


async def client_event_rows(db: Database) -> list[str]:
    try:
        await check_event_invariants(db)
    except AssertionError as exc:
        return [str(exc)]
    return []


def server_errors(attempts: list[Attempt], windows: list[Window]) -> Check:
    problems = []
    inside = outside = 0
    for a in attempts:
        if not isinstance(a.status, int) or a.status < 500:
            continue
        if in_window(a.sent, windows, a.took):
            inside += 1
            if a.status != 503 or a.code != "UNAVAILABLE":
                problems.append(f"{a.op} at {a.sent:.1f}s (api-{a.api + 1}): {a.status} {a.code} in a fault window")
        else:
            outside += 1
            problems.append(f"{a.op} at {a.sent:.1f}s (api-{a.api + 1}): {a.status} {a.code} outside the fault windows")
    cut = sum(1 for a in attempts if not isinstance(a.status, int))
    figure = f"{len(attempts)} requests: {outside} 5xx outside the faults, {inside} 503 inside, {cut} cut off (retried)"
    return Check("no 5xx outside fault windows (503 UNAVAILABLE inside)", not problems, figure, problems)


def memory(slots: list[Slot], half: float, end: float) -> Check:
    """RSS growth over the run's second half, per process: the median of the last three samples
    against the median of the three samples nearest the half (one process: a restart starts anew)."""
    problems = []
    parts = []
    for slot in slots:
        current = [(t, mib) for t, pid, mib in slot.rss if pid == slot.pid and t <= end]
        second = [(t, mib) for t, mib in current if t >= half]
        if len(second) < 4 or current[0][0] > half:
            parts.append(f"{slot.name}: too few samples")
            problems.append(f"{slot.name}: its process did not live through the second half ({len(second)} samples)")
            continue
        near_half = sorted(current, key=lambda s: abs(s[0] - half))[:3]
        start = statistics.median(m for _, m in near_half)
        last = statistics.median(m for _, m in second[-3:])
        growth = (last - start) / start * 100
        parts.append(f"{slot.name} {start:.0f}->{last:.0f} MiB ({growth:+.1f} %)")
        if growth >= 10.0:
            problems.append(
                f"{slot.name}: RSS {start:.1f} MiB at the half, {last:.1f} MiB at the end ({growth:+.1f} %)"
            )
    return Check("RSS flat over the second half (< 10 %)", not problems, "; ".join(parts), problems)


def error_logs(slots: list[Slot], started_wall: datetime, windows: list[Window]) -> Check:
    """Error-level log lines of the service's processes: expected while a fault lasts (a connection
    cut under a delivery), never outside one."""
    problems = []
    inside = 0
    for slot in slots:
        for stamp, line in slot.logged_errors():
            try:
                t = (datetime.fromisoformat(stamp.replace("Z", "+00:00")) - started_wall).total_seconds()
            except ValueError:
                t = -1.0
            if in_window(t, windows):
                inside += 1
            else:
                problems.append(f"{slot.name} at {t:.1f}s: {line}")
    figure = f"{inside} inside the fault windows, {len(problems)} outside"
    return Check("no error logged outside the fault windows", not problems, figure, problems)


def drained(data: dict[str, Any]) -> Check:
    problems = []
    states: dict[str, int] = defaultdict(int)
    for m in data["outbox"]:
        states[f"{m['kind']} {m['status']}"] += 1
        if m["status"] != "delivered":
            problems.append(f"outbox {m['id']} {m['kind']} ({m['recipient']}): {m['status']} {m['last_error'] or ''}")
    for kind, status, count in data["deliveries"]:
        states[f"{kind} {status}"] += count
        if kind == "client.webhook" and status != "delivered":
            problems.append(f"{count} client webhook deliveries {status}")
    return Check("every partner message and client webhook delivered", not problems, _counts(states), problems)


def _counts(states: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(states.items()))
