"""Booking statuses and the one transition table (docs/rules/states.md). Pure: no HTTP, no SQL.

    PENDING ─ack─▶ PENDING_APPROVAL ─approve─▶ APPROVED ─pickup+12h─▶ COMPLETED ─operator─▶ REFUNDED
       │  └───────────approve──────────────────▶   │   └──────incident refund of the whole price──▶ REFUNDED
       ├─▶ DECLINED  (partner refuses the create; refunded)
       ├─▶ FAILED    (create undelivered at its deadline; refunded)
       └─▶ CANCELLED (refunded) ◀── client or partner, from PENDING_APPROVAL or APPROVED too

Clients may cancel only PENDING_APPROVAL and APPROVED bookings whose pickup is still ahead
(docs/rules/states.md#is-cancelable). DEFAULT is reserved and never stored. Anything not in the table is refused.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from transfers.errors import Refused


class BookingStatus(StrEnum):
    PENDING = "PENDING"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    APPROVED = "APPROVED"
    CANCELLED = "CANCELLED"
    FAILED = "FAILED"
    DECLINED = "DECLINED"
    REFUNDED = "REFUNDED"
    COMPLETED = "COMPLETED"
    DEFAULT = "DEFAULT"


S = BookingStatus

TRANSITIONS: dict[BookingStatus, frozenset[BookingStatus]] = {
    S.PENDING: frozenset({S.PENDING_APPROVAL, S.APPROVED, S.DECLINED, S.FAILED, S.CANCELLED}),
    S.PENDING_APPROVAL: frozenset({S.APPROVED, S.CANCELLED, S.DECLINED}),
    # APPROVED -> REFUNDED: an incident's refund of the whole price (docs/rules/incidents.md#resolve)
    S.APPROVED: frozenset({S.CANCELLED, S.COMPLETED, S.REFUNDED}),
    S.COMPLETED: frozenset({S.REFUNDED}),
    S.CANCELLED: frozenset(),
    S.FAILED: frozenset(),
    S.DECLINED: frozenset(),
    S.REFUNDED: frozenset(),
    S.DEFAULT: frozenset(),
}

# Entering these statuses gives a wallet-paid booking its money back (exactly once).
REFUNDING = frozenset({S.CANCELLED, S.DECLINED, S.FAILED, S.REFUNDED})
CLIENT_CANCELLABLE = frozenset({S.PENDING_APPROVAL, S.APPROVED})
TERMINAL = frozenset(s for s, targets in TRANSITIONS.items() if not targets)
DRIVER_VISIBLE = frozenset({S.APPROVED, S.COMPLETED})


class TransitionRefused(Refused):
    def __init__(self, current: BookingStatus, target: BookingStatus) -> None:
        super().__init__(f"{current} -> {target} is not an allowed transition")
        self.current = current
        self.target = target


def can_transition(current: BookingStatus, target: BookingStatus) -> bool:
    return target in TRANSITIONS[current]


def check_transition(current: BookingStatus, target: BookingStatus) -> None:
    if not can_transition(current, target):
        raise TransitionRefused(current, target)


def is_cancelable(status: BookingStatus, pickup_at: datetime, now: datetime) -> bool:
    """docs/rules/states.md#is-cancelable, docs/rules/booking.md: cancellable state and the pickup still in the
    future."""
    return status in CLIENT_CANCELLABLE and pickup_at > now
