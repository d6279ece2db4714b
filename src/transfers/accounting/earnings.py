"""What a partner earns from a booking (docs/rules/statements.md#earnings). Pure.

A booking's ``net`` is the partner's own price (extras at net); the platform keeps ``total - net``.
Shares of an amount of the client's money (a kept fee, an incident's refund) are in proportion
``net / total``, rounded half-up to the currency's decimals (``money.round_half_up``),
so the partner's and the platform's parts always add
up to the amount.
"""

from __future__ import annotations

from decimal import Decimal

from transfers import money

ZERO = Decimal(0)


def partner_share(amount: Decimal, net: Decimal, total: Decimal, currency: str) -> Decimal:
    """``amount x net / total``, half-up to the currency's decimals (0 for a free booking)."""
    if total <= 0:
        return money.round_half_up(ZERO, currency)
    return money.round_half_up(amount * net / total, currency)


def ride(net: Decimal) -> Decimal:
    """``RIDE``: the net, when the booking becomes COMPLETED (a customer no-show included)."""
    return net


def cancellation_fee(fee: Decimal, net: Decimal, total: Decimal, currency: str) -> Decimal:
    """``CANCELLATION_FEE``: the partner's share of the fee a client's cancel kept."""
    return partner_share(fee, net, total, currency)


def recovery(refund: Decimal, net: Decimal, total: Decimal, currency: str) -> Decimal:
    """``RECOVERY``: minus the partner's share of an incident's refund it is responsible for."""
    return -partner_share(refund, net, total, currency)
