"""What counts as an amount of money an operator may credit (a top-up, an opening balance). Pure.

Typed text, not a float: ``"10.005"`` must be refused in EUR, not rounded, and ``"1e3"``, ``"NaN"`` or
``"-5"`` are not amounts anyone means. The decimals are the wallet currency's (``money.places``).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from transfers import money

MAX_AMOUNT = Decimal("999999999999.99")
_MAX_CHARS = 32


def parse_credit(text: object, currency: str | None, *, allow_zero: bool = False) -> Decimal:
    """The amount, with the currency's decimals, or ``ValueError`` saying what is wrong with ``text``.
    ``currency`` None: the currency typed beside the amount is itself wrong, so only what does not depend
    on it is checked (a form then shows both mistakes at once); its decimals cannot be judged."""
    typed = text.strip() if isinstance(text, str) else ""
    example = money.text(Decimal(50), currency) if currency else "50"
    if not typed:
        raise ValueError(f"Enter an amount, like {example}.")
    if len(typed) > _MAX_CHARS or not all(ch in "0123456789.-+" for ch in typed):  # ASCII digits only
        raise ValueError(f"Enter an amount in digits, like {example}.")
    try:
        amount = Decimal(typed)
    except InvalidOperation:
        raise ValueError(f"Enter an amount in digits, like {example}.") from None
    if amount < 0:
        raise ValueError("The amount cannot be negative.")
    if amount == 0 and not allow_zero:
        raise ValueError(f"The amount must be more than {money.text(Decimal(0), currency) if currency else 0}.")
    if amount > MAX_AMOUNT:
        raise ValueError(f"The amount can be at most {MAX_AMOUNT}.")
    if currency is None:
        return amount
    try:
        return money.exact(amount, currency)
    except money.MoneyError:
        raise ValueError(f"The amount can have {money.decimals_in_words(currency)}.") from None
