"""Booking-and-money invariants (RELIABILITY-TESTS.md I3-I5, I8), checked after every API,
integration and end-to-end test against everything the session has written so far."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select

from transfers.bookings.state import REFUNDING, TRANSITIONS, BookingStatus
from transfers.db.engine import Database
from transfers.db.tables import booking_transitions, bookings, clients, ledger_entries, wallets


async def check_booking_invariants(db: Database) -> int:
    async with db.read() as conn:
        rows = (
            await conn.execute(
                select(
                    bookings.c.id,
                    bookings.c.status,
                    bookings.c.pay_type,
                    bookings.c.total,
                    bookings.c.reservation_no,
                    bookings.c.cancellation_fee,
                    bookings.c.cancellation_refund,
                    bookings.c.incident_refunded,
                )
            )
        ).all()
        entries = (
            await conn.execute(
                select(ledger_entries.c.booking_id, ledger_entries.c.kind, ledger_entries.c.amount).where(
                    ledger_entries.c.booking_id.is_not(None)
                )
            )
        ).all()
        steps = (
            await conn.execute(
                select(
                    booking_transitions.c.booking_id, booking_transitions.c.from_status, booking_transitions.c.to_status
                ).order_by(booking_transitions.c.id)
            )
        ).all()
        third_party_moves = (
            await conn.execute(
                select(ledger_entries.c.id)
                .join(wallets, wallets.c.id == ledger_entries.c.wallet_id)
                .join(clients, clients.c.id == wallets.c.client_id)
                .where(clients.c.pay_type == "reverse_api", ledger_entries.c.booking_id.is_not(None))
            )
        ).all()
    by_booking: dict[int, list[tuple[str, Decimal]]] = defaultdict(list)
    for booking_id, kind, amount in entries:
        by_booking[booking_id].append((kind, Decimal(amount)))
    history: dict[int, list[tuple[str | None, str]]] = defaultdict(list)
    for booking_id, from_status, to_status in steps:
        history[booking_id].append((from_status, to_status))
    problems: list[str] = []
    if third_party_moves:
        problems.append(f"I5: reverse_api clients have booking ledger entries: {len(third_party_moves)}")
    for booking_id, status, pay_type, total, reservation_no, fee, refund, incident_refunded in rows:
        moves = by_booking.get(booking_id, [])
        debits = [a for k, a in moves if k == "debit_booking"]
        refunds = [a for k, a in moves if k == "credit_refund"]
        # docs/rules/incidents.md#resolve: one entry per incident refund; the status refund gives only the rest
        by_incidents = Decimal(incident_refunded or 0)
        incident_refunds = sum((a for k, a in moves if k.startswith("incident_")), Decimal("0.00"))
        if by_incidents > Decimal(total):
            problems.append(f"I4 {reservation_no}: incidents refunded {by_incidents} of {total}")
        if pay_type != "reverse_api":
            if debits != [-Decimal(total)]:
                problems.append(f"I3 {reservation_no}: debits {debits} for total {total}")
            if incident_refunds != by_incidents:
                problems.append(f"I4 {reservation_no}: incident refund entries {incident_refunds} != {by_incidents}")
            rest = Decimal(total) - by_incidents
            expected_refunds = [rest] if BookingStatus(status) in REFUNDING and rest > 0 else []
            if status == BookingStatus.CANCELLED and refund is not None:
                # docs/rules/cancellation.md: a client's cancel keeps the fee; no entry when nothing is refunded
                if Decimal(fee) + Decimal(refund) != Decimal(total):
                    problems.append(f"I4 {reservation_no}: fee {fee} + refund {refund} != total {total}")
                rest = Decimal(refund) - by_incidents
                expected_refunds = [rest] if rest > 0 else []
            if refunds != expected_refunds:
                problems.append(f"I4 {reservation_no} ({status}): refunds {refunds}, expected {expected_refunds}")
        path = history.get(booking_id, [])
        if not path or path[0] != (None, "PENDING") or path[-1][1] != status:
            problems.append(f"I8 {reservation_no}: audit trail {path} does not end in {status}")
        for from_status, to_status in path[1:]:
            assert from_status is not None
            same = from_status == to_status  # a recorded detail change (driver updated), not a transition
            if not same and BookingStatus(to_status) not in TRANSITIONS[BookingStatus(from_status)]:
                problems.append(f"I8 {reservation_no}: refused transition {from_status} -> {to_status} recorded")
    assert not problems, "\n".join(problems[:20])
    return len(rows)
