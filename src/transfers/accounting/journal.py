"""Accounts and balanced entries: the journal's vocabulary. Pure.

Signs: an account's balance is what the service holds for (or owes) its owner. A wallet's balance
is the client's money; a partner's balance is what the service owes the partner; ``platform`` is
what the service keeps (and, until a booking is earned, refunded or cancelled, the price it holds
for it); ``world`` is the other side of every movement in or out (a top-up, a third party's
payment, a payout), so it runs negative. Every entry's legs add up to zero, hence so do all
accounts together (docs/rules/statements.md#journal).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from transfers import money


class AccountKind(StrEnum):
    WALLET = "wallet"
    PARTNER = "partner"
    PLATFORM = "platform"
    WORLD = "world"


@dataclass(frozen=True, slots=True)
class Account:
    """One account of one currency's books: a kind and its owner (a wallet id, a partner id, 0)."""

    kind: AccountKind
    owner_id: int = 0

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.owner_id}" if self.owner_id else self.kind.value


PLATFORM = Account(AccountKind.PLATFORM)
WORLD = Account(AccountKind.WORLD)


def wallet(wallet_id: int) -> Account:
    return Account(AccountKind.WALLET, wallet_id)


def partner(partner_id: int) -> Account:
    return Account(AccountKind.PARTNER, partner_id)


class PartnerLine(StrEnum):
    """The kinds of a partner's statement lines (docs/rules/statements.md#earnings)."""

    RIDE = "RIDE"
    CANCELLATION_FEE = "CANCELLATION_FEE"
    RECOVERY = "RECOVERY"
    PAYOUT = "PAYOUT"
    ADJUSTMENT = "ADJUSTMENT"


# Money of a booking paid by a third party (a ``reverse_api`` client): it comes from the world
# and a refund goes back there (docs/rules/statements.md#journal).
THIRD_PARTY_PAYMENT = "third_party_payment"
THIRD_PARTY_REFUND = "third_party_refund"


class Unbalanced(ValueError):
    """An entry whose legs do not add up to zero: a programming error, never written."""


@dataclass(frozen=True, slots=True)
class Leg:
    account: Account
    amount: Decimal  # signed, two decimals


@dataclass(frozen=True, slots=True)
class NewEntry:
    """One balanced movement, as it will be written (``repository.post``)."""

    kind: str
    currency: str
    legs: tuple[Leg, ...]
    booking_id: int | None = None
    ledger_entry_id: int | None = None
    note: str | None = None
    reference: str | None = None
    actor: str | None = None

    def __post_init__(self) -> None:
        if len(self.legs) < 2:
            raise Unbalanced("an entry has at least two legs")
        for leg in self.legs:
            try:
                money.exact(leg.amount, self.currency)
            except money.MoneyError:
                raise Unbalanced(f"{leg.account}: {leg.amount} is not an amount of {self.currency}") from None
        if sum((leg.amount for leg in self.legs), Decimal("0")) != 0:
            raise Unbalanced(f"{self.kind}: legs add up to {sum(leg.amount for leg in self.legs)}")


def transfer(
    kind: str,
    currency: str,
    source: Account,
    target: Account,
    amount: Decimal,
    *,
    booking_id: int | None = None,
    ledger_entry_id: int | None = None,
    note: str | None = None,
    reference: str | None = None,
    actor: str | None = None,
) -> NewEntry:
    """``amount`` moved from ``source`` to ``target`` (a negative amount moves the other way)."""
    return NewEntry(
        kind,
        currency,
        (Leg(source, -amount), Leg(target, amount)),
        booking_id=booking_id,
        ledger_entry_id=ledger_entry_id,
        note=note,
        reference=reference,
        actor=actor,
    )


def wallet_entry(
    kind: str,
    currency: str,
    wallet_id: int,
    delta: Decimal,
    counter: Account,
    ledger_entry_id: int,
    booking_id: int | None,
    note: str | None,
) -> NewEntry:
    """The journal entry of one wallet movement (``delta`` signed as the wallet moved): the wallet
    and its counter-account, ``platform`` or ``world``."""
    return NewEntry(
        kind,
        currency,
        (Leg(wallet(wallet_id), delta), Leg(counter, -delta)),
        booking_id=booking_id,
        ledger_entry_id=ledger_entry_id,
        note=note,
    )
