"""The cancel's money rule: what a cancellation costs and who made it (docs/rules/cancellation.md). Pure:
the booking row in, columns out; the cancel use case, for every actor, is ``cancel.py``.

Who cancels decides the fee:

* the client: the fee of the policy the booking was sold with, at the moment of the cancel (the
  server's clock, read inside the cancelling transaction once the booking's row is locked, compared
  in UTC: real hours, whatever the airport's offset or a DST change in between);
* the partner (reverse API, info sync): no fee; the partner broke the deal, the client gets all back;
* an operator (console, support acting for the service): no fee. An operator who means to keep a
  fee cancels on the client's behalf (``by=CLIENT``).

A pending amendment is rejected by any cancellation (``amend_rules.rejected_by_cancel``).

DECLINED and FAILED bookings were never cancelled: they have no ``cancellation`` and are refunded
in full by ``lifecycle.ledger_move``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from transfers import money
from transfers.bookings.amend_rules import rejected_by_cancel
from transfers.bookings.models import Booking
from transfers.cancellation.policy import Quote
from transfers.cancellation.views import cancel_refund, net_of_incidents, stored_policy

ZERO = Decimal("0.00")


class Canceller(StrEnum):
    """``cancellation.by`` in the BookingResource."""

    CLIENT = "client"
    PARTNER = "partner"
    OPERATOR = "operator"


def quote(booking: Booking, now: datetime) -> Quote:
    """What the client would pay to cancel ``booking`` at ``now``, under the policy it was sold with, counted
    from the current pickup; nothing once its flight is disrupted (docs/rules/flights.md#disruption)."""
    priced = stored_policy(booking.cancellation_policy).quote(booking.total, booking.pickup_at, now, booking.currency)
    if booking.flight_disrupted_at is not None and booking.flight_disrupted_at <= now:
        priced = Quote(priced.tier, ZERO, booking.total, None)
    # the refund a cancel would give: less what the incidents refunded already (incidents.md#refund-then-cancel)
    return replace(priced, refund=net_of_incidents(priced.refund, booking.incident_refunded))


def cancellation_fields(booking: Booking, by: Canceller, now: datetime) -> dict[str, Any]:
    """The booking's cancellation columns for a cancel by ``by`` at ``now`` (``fee + refund = total``)."""
    total = booking.total
    fee = quote(booking, now).fee if by is Canceller.CLIENT else ZERO
    return {
        "cancellation_fee": fee,
        "cancellation_refund": total - fee,
        "cancelled_at": now,
        "cancelled_by": by.value,
        **rejected_by_cancel(booking, now),
    }


def refund_due(booking: Booking) -> Decimal:
    """The one refund rule: what entering a refunding status (CANCELLED, DECLINED, FAILED, REFUNDED)
    gives a wallet-paid client back, read on the booking as the change leaves it. A cancellation's
    ``cancellation_refund`` (the price less a client's fee; the whole price for a partner's or an
    operator's), else the whole price. The ledger effect moves it (``ledger_effects.ledger_move``), the
    operator actions audit it, the console shows it before an operator refunds. Less what the
    booking's incidents refunded already (docs/rules/incidents.md#resolve): a booking's refunds never
    add up to more than its price, and an incident refund that completes the price gives 0.00 here. A
    cancellation's figure is ``cancellation.views.cancel_refund``, the one the BookingResource shows."""
    cancelled = cancel_refund(booking)
    return booking.total - (booking.incident_refunded or ZERO) if cancelled is None else cancelled


def ledger_note(booking: Booking, reason: str | None) -> str:
    """The note of a cancellation's refund entry, which explains a kept fee (``booking``: the
    booking as cancelled, ``lifecycle.Change.booking``)."""
    note = refund_note("cancelled", reason)
    fee, refund = booking.cancellation_fee, cancel_refund(booking)
    if fee and refund is not None:
        c = booking.currency
        note += f"; cancellation fee {money.text(fee, c)} kept of {money.text(booking.total, c)}"
        if booking.incident_refunded:
            note += f", incidents refunded {money.text(booking.incident_refunded, c)} before"
        note += f" (refund {money.text(refund, c)})"
    return note


def refund_note(status: str, reason: str | None) -> str:
    """A refund's note as people read it on the statement: "declined: no driver free"; a reason that
    already says what happened stands alone ("refunded by operator: ...", not "refunded: refunded by
    operator: ..."), and no reason leaves no dangling colon."""
    word, text = status.lower(), (reason or "").strip()
    if not text:
        return word
    return text if text.lower().startswith(word) else f"{word}: {text}"
