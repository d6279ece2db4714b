"""What an operator may type as an adjustment or a payout reference (docs/rules/statements.md#operators). Pure.

Typed text, not a float: ``"10.005"`` is refused, not rounded; ``"1e3"``, ``"NaN"`` are no amounts.
"""

from __future__ import annotations

import re
from decimal import Decimal

from transfers.errors import Invalid

MAX_AMOUNT = Decimal("999999999999.99")
MAX_NOTE = 1000
MAX_REFERENCE = 200
_AMOUNT = re.compile(r"\A[+-]?[0-9]{1,12}(\.[0-9]{1,2})?\Z")
_DIGITS = re.compile(r"\A[+-]?[0-9]+(\.[0-9]+)?\Z")


class InvalidAmount(Invalid):
    """An amount that is not a non-zero number of cents."""


class InvalidNote(Invalid):
    """A note or a reference that is empty or too long."""


def parse_adjustment(text: object) -> Decimal:
    """A signed, non-zero amount with at most two decimals (``-12.50``, ``30``)."""
    typed = text.strip() if isinstance(text, str) else ""
    if not typed:
        raise InvalidAmount("Enter an amount, like 12.50 or -12.50.")
    if not _DIGITS.match(typed):
        raise InvalidAmount("Enter an amount in digits, like 12.50 or -12.50.")
    if not _AMOUNT.match(typed):
        raise InvalidAmount(f"The amount can have at most two decimals and be at most {MAX_AMOUNT}.")
    amount = Decimal(typed)
    if amount == 0:
        raise InvalidAmount("The amount cannot be 0.00.")
    return amount.quantize(Decimal("0.01"))


def clean_text(text: object, *, what: str, limit: int) -> str:
    """1..``limit`` characters after trimming, NULs dropped."""
    cleaned = text.replace("\x00", "").strip() if isinstance(text, str) else ""
    if not cleaned:
        raise InvalidNote(f"Give a {what}.")
    if len(cleaned) > limit:
        raise InvalidNote(f"A {what} has at most {limit} characters.")
    return cleaned
