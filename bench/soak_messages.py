"""The soak's messages to travellers (``bench/soak.py``, docs/operations/reliability.md#invariants): a
local SMTP server (aiosmtpd, its own thread) and a local Twilio-shaped server, both on loopback, that
the service's processes send to; the drain's part for the ``traveller_messages`` queue; and the
invariants over what the two servers received against what the database says was sent.

A received message is matched to its row by channel, address and text: the service records the text
on the row before it hands it over (``messages/delivery.py``, step 3), so a text received twice for
one dedupe key, or received for no row, is seen; two rows with the same text (a revision that changed
nothing the text says) are counted together.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, func, or_, select, update
from tests.fake_twilio import ACCOUNT_SID, AUTH_TOKEN, FakeTwilio
from tests.smtp_server import Inbox, smtp_server

from bench.soak_checks import Check
from bench.soak_load import PASSENGER, Booked
from bench.soak_partners import Agency
from transfers.db.engine import Database
from transfers.db.tables import traveller_messages as M
from transfers.messages import planner, planning, planning_repository
from transfers.messages.delivery import LEASE  # a claimed message's lease

SENDING = "sending"  # last_error of a row whose send began (messages/queue_repository.py)
ABANDONED_AFTER = timedelta(seconds=30)  # a send is bounded by 10 s time-outs: older is a killed worker's
SENT = ("sent", "delivered")
QUIET_UNTIL = 7  # confirmed and reminder due in the night wait until 07:00 at the airport


@dataclass
class Outboxes:
    """The two servers the service sends travellers' messages to."""

    inbox: Inbox
    smtp_port: int
    twilio: FakeTwilio
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def env(self) -> dict[str, str]:
        return {
            "TRANSFERS_SMTP_URL": f"smtp://127.0.0.1:{self.smtp_port}",
            "TRANSFERS_SMTP_FROM": "soak@example.com",
            "TRANSFERS_SMS_PROVIDER": "twilio",
            "TRANSFERS_SMS_PROVIDER_URL": self.twilio.url,
            "TRANSFERS_TWILIO_ACCOUNT_SID": ACCOUNT_SID,
            "TRANSFERS_TWILIO_AUTH_TOKEN": AUTH_TOKEN,
            "TRANSFERS_SMS_LONG_CODE": "+15005550006",  # required with twilio; the soak's travellers are British
        }

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await self.twilio.stop()
        self._stack.close()

    def received(self) -> list[tuple[str, str, str]]:
        """(channel, address, text) of every message the servers took."""
        got = [("sms", r.form.get("To", ""), r.form.get("Body", "")) for r in self.twilio.sent]
        for recipients, mail in list(self.inbox.messages):
            # parsed with the default policy (tests/smtp_server.py): an EmailMessage
            content = mail.get_content() if isinstance(mail, EmailMessage) and not mail.is_multipart() else ""
            got += [("email", to, content) for to in recipients]
        return got


async def start() -> Outboxes:
    stack = contextlib.ExitStack()
    inbox, port = stack.enter_context(smtp_server())
    try:
        twilio = await FakeTwilio().start()
    except BaseException:
        stack.close()
        raise
    return Outboxes(inbox, port, twilio, stack)


async def make_due(db: Database, now: datetime) -> int:
    """The drain's part: a message waiting out a retry's backoff is due now (an operator's retry), a
    send begun long ago by a killed worker has its lease end now (the sweep then fails it
    ``ambiguous``, never sends it again); and how many are still due, in a send or not planned yet. A
    message waiting for 07:00 (quiet hours) is left waiting."""
    free = or_(M.c.lease_until.is_(None), M.c.lease_until < now)
    async with db.write() as conn:
        await conn.execute(
            update(M)
            .where(M.c.status == "scheduled", M.c.attempts > 0, M.c.scheduled_for > now, free)
            .values(scheduled_for=now)
        )
        await conn.execute(
            update(M)
            .where(M.c.status == "scheduled", M.c.last_error == SENDING, M.c.lease_until > now)
            .where(M.c.lease_until < now + LEASE - ABANDONED_AFTER)  # taken more than 30 s ago
            .values(lease_until=now)
        )
    async with db.read() as conn:
        waiting = or_(M.c.scheduled_for <= now, M.c.last_error == SENDING)
        found = await conn.execute(select(func.count()).where(and_(M.c.status == "scheduled", waiting)))
        # ... and the client events the planner (a scheduled job, every few seconds) has not planned yet:
        # an approval just before the drain has its confirmed e-mail only once it is planned.
        low = await planning_repository.window_start(conn)
        unplanned = await planning_repository.unplanned_events(
            conn, low=low, since=now - planner.WINDOW, types=planning.EVENT_TYPES, limit=1000
        )
        return int(found.scalar_one()) + len(unplanned)


def _text(value: str | None) -> str:
    return (value or "").replace("\r\n", "\n").strip()


async def _rows(db: Database) -> list[dict[str, Any]]:
    async with db.read() as conn:
        return [dict(r._mapping) for r in await conn.execute(select(M).order_by(M.c.id))]


def _at_seven(moment: datetime, tz: ZoneInfo) -> bool:
    """Whether ``moment`` is 07:00 at the airport: when a message due in the quiet hours goes."""
    local = moment.astimezone(tz)
    return (local.hour, local.minute, local.second) == (QUIET_UNTIL, 0, 0)


async def check(
    db: Database, outboxes: Outboxes, journal: list[Booked], agencies: list[Agency], data: dict[str, Any], now: datetime
) -> list[Check]:
    """The three messages invariants (docs/operations/reliability.md#invariants), ``now`` the drain's end."""
    rows = await _rows(db)
    return [_once(rows, outboxes), _confirmed(rows, outboxes, journal, agencies, data, now), _ended(rows, now)]


def _once(rows: list[dict[str, Any]], outboxes: Outboxes) -> Check:
    """No text received twice for one dedupe key, none received for no row, every ``sent`` one received."""
    problems = []
    by_text: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["body"] is not None:
            by_text[(row["channel"], row["to_address"] or "", _text(row["body"]))].append(row)
    received: dict[tuple[str, str, str], int] = defaultdict(int)
    for channel, to, text in outboxes.received():
        if channel == "email" and to != PASSENGER["email"]:
            continue  # the hosted partner's e-mails go through the same server
        received[(channel, to, _text(text))] += 1
    counts: dict[str, int] = defaultdict(int)
    for key, got in received.items():
        group = by_text.get(key, [])
        if not group:
            problems.append(f"{key[0]} to {key[1]} received {got}x, no message row has its text: {key[2][:120]!r}")
            continue
        sent = sum(r["status"] in SENT for r in group)
        maybe = sum(r["status"] == "failed" and r["reason"] == "ambiguous" for r in group)
        ids = ", ".join(f"{r['id']} {r['template']} {r['status']}" for r in group)
        if not sent <= got <= sent + maybe:
            problems.append(f"{key[0]} of booking {group[0]['booking_id']} received {got}x for rows [{ids}]")
        counts[key[0]] += got
    for key, group in by_text.items():
        sent = sum(r["status"] in SENT for r in group)
        if sent and not received.get(key):
            problems.append(f"{key[0]} row(s) {[r['id'] for r in group]} {group[0]['template']} sent, never received")
    per_booking: dict[int, int] = defaultdict(int)
    for row in rows:
        per_booking[row["booking_id"]] += row["channel"] == "sms" and row["status"] in SENT
    over = {b: n for b, n in per_booking.items() if n > 8}
    problems += [f"booking {b}: {n} SMS sent (at most 8)" for b, n in over.items()]
    figure = (
        f"{counts['email']} e-mails and {counts['sms']} SMS received by the local SMTP and Twilio-shaped servers, "
        f"each once for its dedupe key ({len(rows)} message rows)"
    )
    return Check("no traveller message sent twice (per booking, template, channel)", not problems, figure, problems)


def _confirmed(
    rows: list[dict[str, Any]],
    outboxes: Outboxes,
    journal: list[Booked],
    agencies: list[Agency],
    data: dict[str, Any],
    now: datetime,
) -> Check:
    """Every booking of a messages-on agency whose approval was answered 200 got its ``confirmed``
    e-mail: sent (and received), or waiting for 07:00 at the airport, or left ``skipped`` ``outdated``
    (the booking was no longer APPROVED when it was due), or ``failed`` ``ambiguous`` (a killed worker's
    send: never sent again)."""
    problems = []
    by_no = {b["reservation_no"]: b for b in data["bookings"]}
    confirmed = {r["booking_id"]: r for r in rows if r["template"] == "confirmed" and r["channel"] == "email"}
    london = ZoneInfo("Europe/London")
    outcomes: dict[str, int] = defaultdict(int)
    for booked in journal:
        if "email" not in agencies[booked.client].channels:
            continue
        for number in sorted(booked.approved_ok):
            booking = by_no.get(number)
            row = confirmed.get(booking["id"]) if booking else None
            if booking is None or row is None:
                problems.append(f"{number}: approved, no confirmed e-mail planned")
                continue
            status, reason = row["status"], row["reason"]
            if status in SENT:
                outcomes["sent"] += 1
            elif status == "scheduled" and row["scheduled_for"] > now and _at_seven(row["scheduled_for"], london):
                outcomes["waiting for 07:00"] += 1
            elif status == "skipped" and reason == "outdated" and booking["status"] != "APPROVED":
                outcomes[f"skipped (now {booking['status']})"] += 1
            elif status == "failed" and reason == "ambiguous":
                outcomes["failed ambiguous (worker killed mid-send)"] += 1
            else:
                problems.append(f"{number} ({booking['status']}): confirmed e-mail {row['id']} {status} {reason}")
    figure = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())) or "no approved booking of such an agency"
    return Check(
        "every approved booking of a messages-on agency got its confirmed e-mail", not problems, figure, problems
    )


def _ended(rows: list[dict[str, Any]], now: datetime) -> Check:
    """No message left ``scheduled`` past its expiry, no ``failed`` one without a reason."""
    problems = []
    states: dict[str, int] = defaultdict(int)
    for row in rows:
        states[f"{row['status']}" + (f" {row['reason']}" if row["reason"] else "")] += 1
        if row["status"] == "scheduled" and row["expires_at"] is not None and row["expires_at"] <= now:
            problems.append(
                f"message {row['id']} {row['template']} {row['channel']}: scheduled past {row['expires_at']}"
            )
        if row["status"] == "failed" and not row["reason"]:
            problems.append(f"message {row['id']} {row['template']} {row['channel']}: failed without a reason")
    figure = ", ".join(f"{k}: {v}" for k, v in sorted(states.items())) or "no messages"
    return Check("no message scheduled past its expiry, none failed without a reason", not problems, figure, problems)
