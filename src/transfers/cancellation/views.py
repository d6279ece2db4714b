"""How policies, cancellations and amendments read in API answers (docs/rules/cancellation.md). Pure.

Instants a traveller plans by (``free_until``) are shown in the airport's local time with its
offset, like ``pickup_datetime``; bookkeeping instants (``cancelled_at``, amendment times) in UTC,
like ``created_at``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from transfers import money
from transfers.cancellation.policy import FREE_UNTIL_PICKUP, Policy, from_json
from transfers.reference.airports import find_airport


class CancellableFacts(Protocol):
    """What these views read of a booking (``bookings.models.Booking`` and ``BookingView`` have it): named
    here so the cancellation rules sit below the bookings and never import them."""

    @property
    def currency(self) -> str: ...
    @property
    def cancellation_fee(self) -> Decimal | None: ...
    @property
    def cancellation_refund(self) -> Decimal | None: ...
    @property
    def incident_refunded(self) -> Decimal | None: ...
    @property
    def cancelled_at(self) -> datetime | None: ...
    @property
    def cancelled_by(self) -> str | None: ...
    @property
    def amendment(self) -> dict[str, Any] | None: ...


def stored_policy(value: Any) -> Policy:
    """A stored policy (JSON tiers), or "free until pickup" for NULL (rows sold before policies existed)."""
    return FREE_UNTIL_PICKUP if value is None else from_json(value)


def policy_view(policy: Policy, *, pickup_at: datetime, now: datetime, iata: str) -> dict[str, Any]:
    """``{"tiers": [...], "free_until": "<ISO 8601, airport time>" | null}``; ``free_until`` is
    ``local_time(iata, instant).isoformat()``, with the airport looked up here rather than in one more call
    (once per distinct policy in every search's answer)."""
    free_until = policy.free_until(pickup_at, now)
    if free_until is None:
        return {"tiers": policy.public(), "free_until": None}
    airport = find_airport(iata)
    return {
        "tiers": policy.public(),
        "free_until": (free_until.astimezone(airport.tz) if airport else free_until).isoformat(),
    }


ZERO = Decimal("0.00")


def net_of_incidents(refund: Decimal, incident_refunded: Decimal | None) -> Decimal:
    """What a cancel refunds (or would refund) once the booking's incidents gave back ``incident_refunded``
    already: ``refund`` less those refunds, never below 0.00 (docs/rules/incidents.md#refund-then-cancel)."""
    return max(ZERO, refund - (incident_refunded or ZERO))


def cancel_refund(b: CancellableFacts) -> Decimal | None:
    """What the cancellation itself refunded (None: not cancelled): the one figure the BookingResource's
    ``cancellation.refund``, its webhooks, the console, the CLI and the ledger move share. The stored
    ``cancellation_refund`` is the price less the fee (``fee + refund = total``); the incidents' refunds
    paid before the cancel are taken off it (``bookings.cancel_rules.refund_due``)."""
    if b.cancellation_refund is None:
        return None
    return net_of_incidents(b.cancellation_refund, b.incident_refunded)


def cancellation_view(b: CancellableFacts) -> dict[str, Any] | None:
    """``{"fee", "refund", "cancelled_at", "by"}`` of a cancelled booking, else None; ``refund`` is what the
    cancel gave back (``cancel_refund``), not counting the incidents' earlier refunds."""
    refund = cancel_refund(b)
    if b.cancelled_at is None or b.cancellation_fee is None or refund is None:
        return None
    return {
        "fee": money.text(b.cancellation_fee, b.currency),
        "refund": money.text(refund, b.currency),
        "cancelled_at": b.cancelled_at.isoformat(),
        "by": b.cancelled_by,
    }


def amendment_view(b: CancellableFacts) -> dict[str, Any] | None:
    """The latest amendment ``{"status", "changes", "message", "requested_at", "decided_at"}``, or None
    (the stored one also names its outbox message, which clients have no use for)."""
    stored = b.amendment
    if stored is None:
        return None
    return {k: stored.get(k) for k in ("status", "changes", "message", "requested_at", "decided_at")}
