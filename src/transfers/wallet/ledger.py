"""Ledger posting rules. The wallet balance moves only by appending one of these entries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from transfers import money
from transfers.accounting.journal import PLATFORM, WORLD, Account
from transfers.errors import Refused
from transfers.rows import row_type


class LedgerKind(StrEnum):
    DEBIT_BOOKING = "debit_booking"
    CREDIT_REFUND = "credit_refund"
    CREDIT_TOPUP = "credit_topup"
    # An incident's refund (docs/rules/incidents.md#resolve), one kind per incident type: a booking
    # has at most one incident of each type, so ``UNIQUE (booking_id, kind)`` keeps "at most one
    # refund per incident" in the database as it keeps one debit and one status refund per booking.
    INCIDENT_DRIVER_NO_SHOW = "incident_driver_no_show"
    INCIDENT_DRIVER_LATE = "incident_driver_late"
    INCIDENT_CUSTOMER_NO_SHOW = "incident_customer_no_show"
    INCIDENT_WRONG_VEHICLE = "incident_wrong_vehicle"
    INCIDENT_OTHER = "incident_other"

    @property
    def sign(self) -> int:
        return -1 if self is LedgerKind.DEBIT_BOOKING else 1

    @property
    def counter_account(self) -> Account:
        """The other side of this wallet movement in the journal (docs/rules/statements.md#journal):
        a top-up comes from the outside world; a booking's debit goes to the platform, which holds
        the price until it is earned or refunded, and a refund comes back from it."""
        return WORLD if self is LedgerKind.CREDIT_TOPUP else PLATFORM


# How the wallet statement names each kind (docs/rules/wallet.md: top_up | debit | refund |
# cancellation_fee | adjustment). A new LedgerKind needs its name here (tests/unit/test_wallet_kinds.py).
API_KINDS: dict[str, str] = {
    LedgerKind.DEBIT_BOOKING.value: "debit",
    LedgerKind.CREDIT_REFUND.value: "refund",
    LedgerKind.CREDIT_TOPUP.value: "top_up",
    LedgerKind.INCIDENT_DRIVER_NO_SHOW.value: "refund",
    LedgerKind.INCIDENT_DRIVER_LATE.value: "refund",
    LedgerKind.INCIDENT_CUSTOMER_NO_SHOW.value: "refund",
    LedgerKind.INCIDENT_WRONG_VEHICLE.value: "refund",
    LedgerKind.INCIDENT_OTHER.value: "refund",
}


def incident_refund_kind(incident_type: str) -> LedgerKind:
    """The ledger kind of a refund for an incident of ``incident_type`` (``DRIVER_LATE``: ``incident_driver_late``)."""
    return LedgerKind(f"incident_{incident_type.lower()}")


STATEMENT_KINDS = ("top_up", "debit", "refund", "cancellation_fee", "adjustment")


class InsufficientBalance(Refused):
    """The debit would take the balance below zero; nothing was written."""


def signed_amount(kind: LedgerKind, amount: Decimal) -> Decimal:
    """The signed entry for a positive ``amount``: debits negative, credits positive."""
    if not amount.is_finite():  # NaN/sNaN/Infinity would raise decimal.InvalidOperation below
        raise ValueError("ledger amounts are finite numbers")
    if amount <= 0:
        raise ValueError("ledger amounts are positive; the kind gives the sign")
    try:  # what a money column holds exactly; the wallet currency's decimals: ``in_currency``
        return money.stored(amount) * kind.sign
    except money.MoneyError:
        raise ValueError(f"ledger amounts are exact decimals a money column holds, not {amount}") from None


def in_currency(delta: Decimal, currency: str) -> Decimal:
    """``delta`` if it has at most the wallet currency's decimals, else ``ValueError`` (checked once the
    wallet's UPDATE named its currency; the caller's transaction is then rolled back, writing nothing)."""
    try:
        return money.exact(delta, currency)
    except money.MoneyError:
        raise ValueError(f"ledger amounts in {currency} have {money.decimals_in_words(currency)}") from None


@row_type
class LedgerEntry:
    """One ``ledger_entries`` row: a signed move of a wallet and the balance after it."""

    id: int
    wallet_id: int
    kind: str  # a ``LedgerKind`` value
    amount: Decimal  # signed: debits are negative
    booking_id: int | None
    note: str | None
    created_at: datetime
    balance_after: Decimal

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> LedgerEntry:
        return cls(*[row[name] for name in LEDGER_ENTRY_FIELDS])

    def as_dict(self, currency: str) -> dict[str, Any]:
        """Every column by name (the operator CLI's JSON), the amounts in the wallet's ``currency`` as
        ``money.text`` writes them."""
        values = {name: getattr(self, name) for name in LEDGER_ENTRY_FIELDS}
        return {
            **values,
            "amount": money.text(self.amount, currency),
            "balance_after": money.text(self.balance_after, currency),
        }


LEDGER_ENTRY_FIELDS = tuple(f.name for f in fields(LedgerEntry))


@row_type
class StatementLine:
    """A line of a client's wallet statement: a ``ledger_entries`` row's columns the statement
    shows, with the reservation number of its booking (None: a top-up or an adjustment)."""

    id: int
    kind: str
    amount: Decimal
    balance_after: Decimal
    note: str | None
    created_at: datetime
    reservation_no: str | None

    @classmethod
    def from_row(cls, row: Mapping[Any, Any]) -> StatementLine:
        return cls(*[row[name] for name in STATEMENT_LINE_FIELDS])


STATEMENT_LINE_FIELDS = tuple(f.name for f in fields(StatementLine))
