"""Ledger posting rules. The wallet balance moves only by appending one of these entries."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum

from transfers.db.types import CENT
from transfers.errors import Refused


class LedgerKind(StrEnum):
    DEBIT_BOOKING = "debit_booking"
    CREDIT_REFUND = "credit_refund"
    CREDIT_TOPUP = "credit_topup"

    @property
    def sign(self) -> int:
        return -1 if self is LedgerKind.DEBIT_BOOKING else 1


# How the wallet statement names each kind (docs/rules/wallet.md: top_up | debit | refund |
# cancellation_fee | adjustment). A new LedgerKind needs its name here (tests/unit/test_wallet_kinds.py).
API_KINDS: dict[str, str] = {
    LedgerKind.DEBIT_BOOKING.value: "debit",
    LedgerKind.CREDIT_REFUND.value: "refund",
    LedgerKind.CREDIT_TOPUP.value: "top_up",
}
STATEMENT_KINDS = ("top_up", "debit", "refund", "cancellation_fee", "adjustment")


class InsufficientBalance(Refused):
    """The debit would take the balance below zero; nothing was written."""


def signed_amount(kind: LedgerKind, amount: Decimal) -> Decimal:
    """The signed entry for a positive ``amount``: debits negative, credits positive."""
    if not amount.is_finite():  # NaN/sNaN/Infinity would raise decimal.InvalidOperation below
        raise ValueError("ledger amounts are finite numbers")
    if amount <= 0:
        raise ValueError("ledger amounts are positive; the kind gives the sign")
    if amount != amount.quantize(CENT):
        raise ValueError("ledger amounts have at most two decimals")
    return amount * kind.sign
