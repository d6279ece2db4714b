"""What an operator may type as an adjustment or a payout reference (docs/rules/statements.md#operators). Pure.

Typed text, not a float: ``"10.005"`` is refused in EUR, not rounded (the currency's decimals,
``money.places``); ``"1e3"``, ``"NaN"`` are no amounts.
"""

from __future__ import annotations

import re
from decimal import Decimal

from transfers import money
from transfers.errors import Invalid

MAX_AMOUNT = Decimal("999999999999.99")
MAX_NOTE = 1000
MAX_REFERENCE = 200
_DIGITS = re.compile(r"\A[+-]?[0-9]+(\.[0-9]+)?\Z")


class InvalidAmount(Invalid):
    """An amount that is not a non-zero amount of its currency."""


class InvalidNote(Invalid):
    """A note or a reference that is empty or too long."""


def parse_adjustment(text: object, currency: str) -> Decimal:
    """A signed, non-zero amount with at most the currency's decimals (``-12.50``, ``30`` in EUR)."""
    typed = text.strip() if isinstance(text, str) else ""
    if not typed:
        raise InvalidAmount("Enter an amount, like 12.50 or -12.50.")
    if not _DIGITS.match(typed):
        raise InvalidAmount("Enter an amount in digits, like 12.50 or -12.50.")
    amount = Decimal(typed)
    limits = f"The amount can have {money.decimals_in_words(currency)} and be at most {MAX_AMOUNT}."
    if abs(amount) > MAX_AMOUNT:
        raise InvalidAmount(limits)
    try:
        amount = money.exact(amount, currency)
    except money.MoneyError:
        raise InvalidAmount(limits) from None
    if amount == 0:
        raise InvalidAmount(f"The amount cannot be {money.text(Decimal(0), currency)}.")
    return amount


def clean_text(text: object, *, what: str, limit: int) -> str:
    """1..``limit`` characters after trimming, NULs dropped."""
    cleaned = text.replace("\x00", "").strip() if isinstance(text, str) else ""
    if not cleaned:
        raise InvalidNote(f"Give a {what}.")
    if len(cleaned) > limit:
        raise InvalidNote(f"A {what} has at most {limit} characters.")
    return cleaned
