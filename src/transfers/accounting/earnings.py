"""What a partner earns from a booking (docs/rules/statements.md#earnings). Pure.

A booking's ``net`` is the partner's own price (extras at net); the platform keeps ``total - net``.
Shares of an amount of the client's money (a kept fee, an incident's refund) are in proportion
``net / total``, rounded half-up to the cent, so the partner's and the platform's parts always add
up to the amount.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from transfers.db.types import CENT

ZERO = Decimal("0.00")


def partner_share(amount: Decimal, net: Decimal, total: Decimal) -> Decimal:
    """``amount x net / total``, half-up to the cent (0.00 for a free booking)."""
    if total <= 0:
        return ZERO
    return (amount * net / total).quantize(CENT, rounding=ROUND_HALF_UP)


def ride(net: Decimal) -> Decimal:
    """``RIDE``: the net, when the booking becomes COMPLETED (a customer no-show included)."""
    return net


def cancellation_fee(fee: Decimal, net: Decimal, total: Decimal) -> Decimal:
    """``CANCELLATION_FEE``: the partner's share of the fee a client's cancel kept."""
    return partner_share(fee, net, total)


def recovery(refund: Decimal, net: Decimal, total: Decimal) -> Decimal:
    """``RECOVERY``: minus the partner's share of an incident's refund it is responsible for."""
    return -partner_share(refund, net, total)
