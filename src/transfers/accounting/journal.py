"""Accounts and balanced entries: the journal's vocabulary. Pure.

Signs: an account's balance is what the service holds for (or owes) its owner. A wallet's balance
is the client's money; a partner's balance is what the service owes the partner; ``platform`` is
what the service keeps (and, until a booking is earned, refunded or cancelled, the price it holds
for it); ``world`` is the other side of every movement in or out (a top-up, a third party's
payment, a payout), so it runs negative; ``fx`` (one per currency) is where the platform changes one
currency into another: a converted booking's partner line takes the client's currency in and pays the
partner's out, so its balance is the platform's exposure in that currency (positive: taken in it,
negative: owed in it; docs/rules/fx.md#books). Every entry's legs add up to zero in each currency,
hence so do all accounts of a currency together (docs/rules/statements.md#journal).
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
    FX = "fx"


@dataclass(frozen=True, slots=True)
class Account:
    """One account of one currency's books: a kind and its owner (a wallet id, a partner id, 0)."""

    kind: AccountKind
    owner_id: int = 0

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.owner_id}" if self.owner_id else self.kind.value


PLATFORM = Account(AccountKind.PLATFORM)
WORLD = Account(AccountKind.WORLD)
FX = Account(AccountKind.FX)


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
    amount: Decimal  # signed, in its currency's decimals
    currency: str | None = None  # None: the entry's; another one only through the FX accounts


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
        sums: dict[str, Decimal] = {}
        for leg in self.legs:
            currency = self.currency_of(leg)
            try:
                money.exact(leg.amount, currency)
            except money.MoneyError:
                raise Unbalanced(f"{leg.account}: {leg.amount} is not an amount of {currency}") from None
            sums[currency] = sums.get(currency, Decimal("0")) + leg.amount
        for currency, total in sums.items():
            if total != 0:
                raise Unbalanced(f"{self.kind}: legs in {currency} add up to {total}")

    def currency_of(self, leg: Leg) -> str:
        return leg.currency or self.currency


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


def to_partner(
    kind: str,
    partner_id: int,
    paid: tuple[Decimal, str],
    earned: tuple[Decimal, str],
    *,
    booking_id: int | None = None,
    note: str | None = None,
    keep_zero: bool = False,
) -> NewEntry | None:
    """A partner line of a booking (docs/rules/statements.md#earnings): ``earned`` (amount, the partner's
    currency) to the partner's account, ``paid`` (amount, the booking's currency) from the platform, both
    signed the same way (a ``RECOVERY`` is negative). In one currency they are the same amount and the
    entry is the platform's transfer; across two the FX accounts change one into the other
    (docs/rules/fx.md#books): the platform's ``paid`` into the FX account of the booking's currency, the
    ``earned`` out of the one of the partner's, each currency balanced. A side whose amount rounds to
    nothing is left out (``keep_zero``: never, a ``RIDE`` is on the statement whatever its net); None when
    both are nothing."""
    (client_amount, client_currency), (partner_amount, partner_currency) = paid, earned
    account = partner(partner_id)
    if client_currency == partner_currency:
        if partner_amount == 0 and not keep_zero:
            return None
        if partner_amount < 0:  # a recovery: from the partner's account, as one reads it
            return transfer(
                kind, partner_currency, account, PLATFORM, -partner_amount, booking_id=booking_id, note=note
            )
        return transfer(kind, partner_currency, PLATFORM, account, partner_amount, booking_id=booking_id, note=note)
    legs: list[Leg] = []
    if client_amount != 0 or keep_zero:
        legs += [Leg(PLATFORM, -client_amount, client_currency), Leg(FX, client_amount, client_currency)]
    if partner_amount != 0 or keep_zero:
        legs += [Leg(FX, -partner_amount, partner_currency), Leg(account, partner_amount, partner_currency)]
    if not legs:
        return None
    return NewEntry(kind, partner_currency, tuple(legs), booking_id=booking_id, note=note)


def whole_partner_line(
    kind: str, partner_id: int, paid: tuple[Decimal, str], earned: tuple[Decimal, str], *, booking_id: int | None
) -> NewEntry:
    """``to_partner`` with every leg, zero or not (a ``RIDE``: on the statement whatever its net)."""
    entry = to_partner(kind, partner_id, paid, earned, booking_id=booking_id, keep_zero=True)
    if entry is None:  # never: keep_zero always answers an entry
        raise Unbalanced(f"{kind}: no legs")
    return entry
