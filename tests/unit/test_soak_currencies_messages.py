"""How the soak (bench/soak.py) judges its currencies and its messages to travellers: the FX legs a
converted booking's partner lines must have, and a traveller message received twice, never, or for
no row. Pure functions over recorded figures; the soak itself runs in CI (`make soak`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from email.message import EmailMessage
from typing import Any

from bench.soak_fx import converted, expected_legs
from bench.soak_messages import Outboxes, _ended, _once

from tests.fake_twilio import FakeTwilio, TwilioRequest
from tests.smtp_server import Inbox

# docs/rules/fx.md#books: a GBP agency books a 56.05 EUR ride sold at 52.80 GBP (net 48.00 GBP).
BOOKING = {
    "currency": "GBP",
    "partner_currency": "EUR",
    "total": Decimal("52.80"),
    "net_total": Decimal("48.00"),
    "partner_net_total": Decimal("56.05"),
    "cancellation_fee": Decimal("10.56"),
}
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)


def test_a_converted_bookings_ride_and_fee_move_its_own_amounts_through_fx() -> None:
    assert converted(BOOKING) and not converted({**BOOKING, "partner_currency": "GBP"})
    assert expected_legs(BOOKING, "RIDE", {}) == {"GBP": Decimal("48.00"), "EUR": Decimal("-56.05")}
    # 10.56 x 48.00 / 52.80 = 9.60 GBP in; 10.56 x 56.05 / 52.80 = 11.2100 -> 11.21 EUR out
    assert expected_legs(BOOKING, "CANCELLATION_FEE", {}) == {"GBP": Decimal("9.60"), "EUR": Decimal("-11.21")}
    recovery = {("platform", "GBP"): Decimal("8.00"), ("partner", "EUR"): Decimal("-9.34")}
    assert expected_legs(BOOKING, "RECOVERY", recovery) == {"GBP": Decimal("-8.00"), "EUR": Decimal("9.34")}


def _row(id_: int, status: str, body: str, *, channel: str = "email", reason: str | None = None) -> dict[str, Any]:
    to = "ada@example.com" if channel == "email" else "+447911123456"
    return {
        "id": id_,
        "booking_id": 7,
        "template": "confirmed",
        "channel": channel,
        "to_address": to,
        "status": status,
        "reason": reason,
        "body": body,
        "expires_at": NOW + timedelta(days=3),
    }


def _outboxes(emails: list[str], texts: list[str]) -> Outboxes:
    inbox = Inbox()
    for body in emails:
        mail = EmailMessage()
        mail.set_content(body)
        inbox.messages.append((["ada@example.com"], mail))
    twilio = FakeTwilio()
    for body in texts:
        form = {"To": "+447911123456", "Body": body}
        twilio.requests.append(TwilioRequest("POST", "/2010-04-01/Accounts/AC/Messages.json", form, None, None, 201))
    return Outboxes(inbox, 0, twilio)


def test_each_sent_message_received_once_for_its_dedupe_key() -> None:
    rows = [_row(1, "sent", "Booked TB-1"), _row(2, "sent", "Driver here TB-1", channel="sms")]
    held = _once(rows, _outboxes(["Booked TB-1\n"], ["Driver here TB-1"]))
    assert held.ok and "1 e-mails and 1 SMS received" in held.figure
    twice = _once(rows, _outboxes(["Booked TB-1", "Booked TB-1"], ["Driver here TB-1"]))
    assert not twice.ok and "email of booking 7 received 2x for rows [1 confirmed sent]" in twice.evidence[0]
    never = _once(rows, _outboxes([], ["Driver here TB-1"]))
    assert not never.ok and "sent, never received" in never.evidence[0]
    stray = _once(rows, _outboxes(["Booked TB-1", "Something else"], ["Driver here TB-1"]))
    assert not stray.ok and "no message row has its text" in stray.evidence[0]


def test_a_send_cut_by_a_killed_worker_may_have_been_received_once() -> None:
    rows = [_row(1, "failed", "Booked TB-1", reason="ambiguous")]
    assert _once(rows, _outboxes(["Booked TB-1"], [])).ok
    assert _once(rows, _outboxes([], [])).ok
    assert not _once(rows, _outboxes(["Booked TB-1", "Booked TB-1"], [])).ok


def test_no_message_scheduled_past_its_expiry_nor_failed_without_a_reason() -> None:
    late = {**_row(1, "scheduled", "x"), "expires_at": NOW - timedelta(minutes=1)}
    found = _ended([late, _row(2, "failed", "y"), _row(3, "failed", "z", reason="refused")], NOW)
    assert not found.ok
    assert "message 1 confirmed email: scheduled past" in found.evidence[0]
    assert found.evidence[1] == "message 2 confirmed email: failed without a reason"
    assert _ended([_row(3, "failed", "z", reason="refused"), _row(4, "scheduled", "w")], NOW).ok
