"""In-memory bookings of the sandbox partner.

Status is computed from the clock, not from whether a background task got to run: a booking is
APPROVED once ``now >= approve_at`` whether or not the reverse-API call got through, so the
service's reconciliation through ``/booking/info`` always converges. Every map is bounded (oldest
entries evicted) so a long-running sandbox cannot grow without limit.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(OrderedDict[K, V], Generic[K, V]):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        while len(self) > self.limit:
            self.popitem(last=False)


@dataclass
class Booking:
    reservation_no: str  # the service's reference (every call names the booking by it)
    partner_reference: str | None  # ours: SBX-...; None when declined
    created_at: float
    approve_at: float
    details: dict[str, Any]
    driver: dict[str, str]
    meeting_point: str
    declined: bool = False
    no_show: bool = False
    partner_cancel_at: float | None = None  # PARTNERCANCEL: when the partner itself cancels
    cancelled_at: float | None = None  # the service cancelled (PUT /booking/update)
    cancel_reason: str | None = None
    no_amend: bool = False  # NOAMEND: amendments are refused
    amendments: int = 0  # amendments accepted (docs/rules/cancellation.md)
    flight_updates: int = 0  # flight notices received (docs/rules/flights.md)
    ride: str | None = None  # RIDE or NOSHOW: the driver plays a ride once approved (docs/rules/ride.md)
    first_answer: dict[str, Any] = field(default_factory=dict)

    def status(self, now: float) -> str:
        if self.declined:
            return "DECLINED"
        if self.cancelled_at is not None:
            return "CANCELLED"
        if self.partner_cancel_at is not None and now >= self.partner_cancel_at:
            return "CANCELLED"
        if now >= self.approve_at:
            return "APPROVED"
        return "PENDING"

    def info(self, now: float) -> dict[str, Any]:
        status = self.status(now)
        approved = status == "APPROVED"
        return {
            "reservation_no": self.partner_reference,
            "status": status,
            "driver_info": dict(self.driver) if approved else None,
            "meeting_point": self.meeting_point if approved else None,
            "booking_details": {**self.details, "no_show": approved and self.no_show},
        }


@dataclass
class Ledger:
    """Everything the partner remembers, plus the counters the tests read."""

    limit: int
    bookings: BoundedDict[str, Booking] = field(init=False)
    answers_by_webhook_id: BoundedDict[str, tuple[int, dict[str, Any]]] = field(init=False)
    create_attempts: BoundedDict[str, int] = field(init=False)
    effective_creates: BoundedDict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.bookings = BoundedDict(self.limit)
        self.answers_by_webhook_id = BoundedDict(self.limit * 2)
        self.create_attempts = BoundedDict(self.limit)
        self.effective_creates = BoundedDict(self.limit)

    def count_attempt(self, reservation_no: str) -> int:
        count = self.create_attempts.pop(reservation_no, 0) + 1
        self.create_attempts[reservation_no] = count
        return count

    def record(self, booking: Booking) -> None:
        self.bookings[booking.reservation_no] = booking
        self.effective_creates[booking.reservation_no] = self.effective_creates.get(booking.reservation_no, 0) + 1
