"""What counts as an amount of money an operator may credit (a top-up, an opening balance). Pure.

Typed text, not a float: ``"10.005"`` must be refused, not rounded, and ``"1e3"``, ``"NaN"`` or
``"-5"`` are not amounts anyone means. The limit is what a ``Money`` column holds (NUMERIC(14,2)).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

CENT = Decimal("0.01")
MAX_AMOUNT = Decimal("999999999999.99")
_MAX_CHARS = 32


def parse_credit(text: object, *, allow_zero: bool = False) -> Decimal:
    """The amount, with two decimals, or ``ValueError`` saying what is wrong with ``text``."""
    typed = text.strip() if isinstance(text, str) else ""
    if not typed:
        raise ValueError("Enter an amount, like 50.00.")
    if len(typed) > _MAX_CHARS or not all(ch in "0123456789.-+" for ch in typed):  # ASCII digits only
        raise ValueError("Enter an amount in digits, like 50.00.")
    try:
        amount = Decimal(typed)
    except InvalidOperation:
        raise ValueError("Enter an amount in digits, like 50.00.") from None
    if amount < 0:
        raise ValueError("The amount cannot be negative.")
    if amount == 0 and not allow_zero:
        raise ValueError("The amount must be more than 0.00.")
    if amount != amount.quantize(CENT):
        raise ValueError("The amount can have at most two decimals.")
    if amount > MAX_AMOUNT:
        raise ValueError(f"The amount can be at most {MAX_AMOUNT}.")
    return amount.quantize(CENT)
