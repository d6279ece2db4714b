"""Money: an exact amount in one ISO 4217 currency, and the one place that parses, rounds and writes
amounts (docs/architecture/money.md).

Rules kept here and nowhere else:

* A currency has its ISO 4217 minor unit of decimals (JPY 0, EUR 2, KWD 3, CLF 4), from the
  maintained ``iso4217`` package, never a literal 2.
* Parsing is strict: an amount with more decimals than its currency has is refused, never rounded;
  booleans, NaN, infinities, exponents (``"1e3"``), non-ASCII digits and over-long texts are refused.
* Rounding (half-up, to the currency's decimals) happens only where a rule computes an amount
  (a markup, a fee's percentage, a share): ``round_half_up`` / ``Money.rounded``.
* An amount is written with exactly its currency's decimals (``"52.80"``, ``"10010"``, ``"20.475"``)
  by ``text`` / ``str(money)``; a JSON number by ``number`` (``52.8``).

Amounts travel through the service as ``Decimal`` beside a currency code (rows, offers, bookings);
the module-level functions serve them, and ``Money`` pairs the two where a value crosses a rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, Inexact, InvalidOperation
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from babel import Locale

# The most decimals any currency has (ISO 4217's largest minor unit), and so what a money column
# stores exactly (db/types.py: NUMERIC(18, 4) on PostgreSQL, the amount x 10^4 on SQLite).
STORED_PLACES = 4
# Integer digits a money column holds: NUMERIC(18, 4) leaves 14.
MAX_INTEGER_DIGITS = 14
# A parsed text longer than this is refused before Decimal sees it (a sign, 14 digits, a point, 4 decimals
# and room for leading zeros).
_MAX_CHARS = 40
# ASCII digits only: str.isdigit and Decimal accept other scripts' digits ("١٢"), which nobody types as money.
_PLAIN = re.compile(r"\A[+-]?[0-9]+(\.[0-9]+)?\Z")
_ZERO = Decimal(0)


class MoneyError(ValueError):
    """An amount or a currency that is not money: the message says what is wrong, in words."""


class UnknownCurrency(MoneyError):
    """Not an active ISO 4217 code with a minor unit (upper case only: ``eur`` is unknown)."""


@cache
def places(currency: str) -> int:
    """The currency's ISO 4217 minor unit: how many decimals its amounts have."""
    # Imported on first use: the package parses ISO's XML table at import (~25 ms), which a process
    # that never meets an amount (most CLI commands) need not pay.
    from iso4217 import Currency

    if not isinstance(currency, str) or not currency.isascii() or not currency.isupper():
        raise UnknownCurrency(f"{str(currency)[:10]!r} is not an ISO 4217 currency code")
    try:
        exponent = Currency(currency).exponent
    except ValueError:
        raise UnknownCurrency(f"{currency[:10]!r} is not an ISO 4217 currency code") from None
    if exponent is None:  # gold, SDRs, testing codes: no amounts of money in them
        raise UnknownCurrency(f"{currency} has no minor unit: it is not a currency amounts are paid in")
    return int(exponent)


def is_currency(code: str) -> bool:
    """Whether ``code`` is a currency amounts can be held in (``places`` answers for it)."""
    try:
        places(code)
    except UnknownCurrency:
        return False
    return True


def quantum(currency: str) -> Decimal:
    """The currency's smallest unit as a Decimal exponent (EUR ``0.01``, JPY ``1``, KWD ``0.001``)."""
    q = _QUANTA.get(currency)
    if q is None:
        q = _QUANTA[currency] = Decimal(1).scaleb(-places(currency))
    return q


# Each currency's quantum once computed, read with a dict lookup: ``text`` runs per amount written.
_QUANTA: dict[str, Decimal] = {}


_NUMBERS = ("no", "one", "two", "three", "four")


def decimals_in_words(currency: str) -> str:
    """How many decimals the currency's amounts may have, for a message: "at most two decimals"
    (EUR), "no decimals" (JPY), "at most three decimals" (KWD)."""
    n = places(currency)
    return "no decimals" if n == 0 else "at most one decimal" if n == 1 else f"at most {_NUMBERS[n]} decimals"


# Quantizing in this context raises instead of rounding: ``Inexact`` when non-zero digits would be
# dropped (45.105 to cents), ``InvalidOperation`` for NaN, infinities and more than 28 digits. One C call
# checks and pads an amount (``text`` runs per amount written: a search writes ~40).
_EXACT = Context(traps=[Inexact, InvalidOperation])


def exact(amount: Decimal, currency: str) -> Decimal:
    """``amount`` with exactly the currency's decimals (45.1 -> 45.10), or ``MoneyError`` if it has
    more (45.105 in EUR): an amount is never rounded on its way in or out."""
    try:
        shown = amount.quantize(_QUANTA.get(currency) or quantum(currency), context=_EXACT)
    except Inexact:
        raise MoneyError(
            f"{currency} amounts have {decimals_in_words(currency)}: {amount} is refused, not rounded"
        ) from None
    except InvalidOperation:
        raise MoneyError(f"{amount} is not an amount of {currency}") from None
    if shown.is_nan():  # a quiet NaN quantizes to itself, signalling nothing
        raise MoneyError(f"{amount} is not an amount of {currency}")
    return shown if shown else abs(shown)  # -0.00 is 0.00


def round_half_up(amount: Decimal, currency: str) -> Decimal:
    """A computed amount (a markup, a fee's percentage, a share) rounded half-up to the currency's
    decimals: the one rounding rule (docs/architecture/money.md#rounding)."""
    shown = amount.quantize(_QUANTA.get(currency) or quantum(currency), rounding=ROUND_HALF_UP)
    return shown if shown else abs(shown)


def round_significant(value: Decimal, digits: int) -> Decimal:
    """A computed ratio (a derived exchange rate, docs/rules/fx.md#derived) rounded half-up to ``digits``
    significant digits: the one rounding rule, applied to a number that has no currency."""
    step = Decimal(1).scaleb(value.adjusted() - (digits - 1))
    return value.quantize(step, rounding=ROUND_HALF_UP)


def text(amount: Decimal, currency: str) -> str:
    """The amount as the service writes it, everywhere (API strings, CSV, pages, CLI, notes): exactly
    the currency's decimals, a point, no grouping, no exponent ("52.80", "10010", "20.475")."""
    # ``exact``'s work inlined for the common case (a search writes ~40 amounts): a non-zero amount that
    # quantizes to itself. str() of a Decimal quantized to at most four places is plain notation.
    try:
        shown = amount.quantize(_QUANTA.get(currency) or quantum(currency))
    except InvalidOperation:  # infinity, or more digits than the context holds
        return str(exact(amount, currency))
    if shown != amount or not shown:  # more decimals, NaN, or a zero (-0.00 is written 0.00)
        return str(exact(amount, currency))
    return str(shown)


def diagnostic(amount: Decimal, currency: str) -> str:
    """``text``, or for an amount that breaks its currency's rule (what a check of the books reports)
    or an unknown currency, the digits as they are: a report must never fail on the data it reports."""
    try:
        return text(amount, currency)
    except MoneyError:
        return format(amount, "f")


# The locale pages format for when the reader's is not known (or not one CLDR has).
PEOPLE_LOCALE = "en"


@cache
def _people_pattern(locale: str, currency: str) -> tuple[Locale, str]:
    """The Babel locale and the CLDR currency pattern of ``locale`` with the currency's ISO 4217 decimals
    in place of CLDR's own (CLDR gives IQD none and ISO three): "¤#,##0.000" for KWD in English."""
    from babel import Locale, UnknownLocaleError

    try:
        parsed = Locale.parse(locale)
    except (ValueError, TypeError, UnknownLocaleError):
        parsed = Locale.parse(PEOPLE_LOCALE)
    standard = parsed.currency_formats["standard"].pattern
    n = places(currency)
    decimals = "0." + "0" * n if n else "0"
    return parsed, re.sub(r"0\.0+", decimals, standard)


def for_people(amount: Decimal, currency: str, locale: str = PEOPLE_LOCALE) -> str:
    """The amount as pages show it to a person reading ``locale`` (docs/architecture/money.md#pages):
    Babel's ``format_currency`` with the locale's sign, grouping and decimal mark, and exactly the
    currency's ISO 4217 decimals ("£52.80", "¥10,010", "KWD 20.465" in English; "52,80 £" in German).
    ``MoneyError`` for an amount with more decimals than its currency has: never rounded."""
    from babel.numbers import format_currency

    shown = exact(amount, currency)
    parsed, pattern = _people_pattern(locale, currency)
    written = format_currency(shown, currency, format=pattern, locale=parsed, currency_digits=False)
    # A sign written in letters ("KWD", "CHF") beside a digit: CLDR's currency spacing puts a no-break
    # space between them, which Babel's format_currency does not do ("KWD20.465").
    if not currency.isalpha() or written.count(currency) != 1:
        return written
    before, _, after = written.partition(currency)
    if after[:1].isdigit():
        after = "\u00a0" + after
    if before[-1:].isdigit():
        before += "\u00a0"
    return before + currency + after


def number(amount: Decimal) -> float:
    """The amount as a JSON number (search prices): the float whose shortest repr is the amount
    (45.10 -> 45.1, 10010 -> 10010.0, 20.475 -> 20.475). An amount of at most four decimals below
    10^11 has at most 15 significant digits, which a double keeps exactly; a larger one is checked
    (a money column holds 18 digits, more than a double keeps)."""
    value = float(amount)
    if -1e11 < value < 1e11:
        return value or 0.0  # -0.00 is 0
    if not amount.is_finite() or Decimal(repr(value)) != amount:
        raise MoneyError(f"{amount} has more digits than a JSON number keeps, or is no number")
    return value


def stored_text(stored: str, currency: str) -> str:
    """``text`` of a money column's own text as PostgreSQL writes it (NUMERIC(18, 4): "45.1000"),
    for the paths that read amounts as text (accounting's CSV): the unused trailing places cut, or
    ``MoneyError`` if they are not zeros (the amount has more decimals than its currency)."""
    point = stored.find(".")
    if point < 0:
        return text(Decimal(stored), currency)
    keep = places(currency)
    cut = stored[point + 1 + keep :]
    if cut.strip("0"):
        raise MoneyError(f"{currency} amounts have {decimals_in_words(currency)}: {stored} is refused, not rounded")
    shown = stored[: point + 1 + keep] if keep else stored[:point]
    return shown[1:] if shown.startswith("-") and not shown.strip("-0.") else shown


_STORED = Decimal(1).scaleb(-STORED_PLACES)
_LIMIT = Decimal(10) ** MAX_INTEGER_DIGITS


def stored(value: object) -> Decimal:
    """``value`` as a money column holds it (any currency: four decimals, 14 integer digits), unchanged,
    or ``MoneyError``: an amount is never rounded on its way to the database. Takes a Decimal, an int or
    a decimal text; a float, a bool or NaN is refused."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int | str):
        raise MoneyError(f"a money column takes a Decimal, not {type(value).__name__}")
    try:
        amount = Decimal(value)
        held = amount.quantize(_STORED)
    except ArithmeticError:
        raise MoneyError(f"{str(value)[:_MAX_CHARS]!r} is not an amount a money column holds") from None
    if held != amount or not -_LIMIT < held < _LIMIT:
        raise MoneyError(f"{value} is not an amount a money column holds exactly (4 decimals, 14 digits)")
    return held


def parse(value: object, currency: str) -> Decimal:
    """A strict amount of ``currency`` from a text, an int or a JSON number (a float), with at most the
    currency's decimals; signed (callers say whether negative or zero make sense). ``MoneyError`` says
    what is wrong. ``"1e3"``, ``"NaN"``, ``"Infinity"``, booleans, ``None``, non-ASCII digits, texts
    longer than 40 characters and amounts a money column cannot hold are refused; ``"-0"`` is 0."""
    n = places(currency)
    if isinstance(value, bool) or value is None:
        raise MoneyError(f"{value!r} is not an amount")
    if isinstance(value, int):
        typed = str(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise MoneyError(f"{value!r} is not an amount")
        typed = repr(value)  # the shortest text that is this float: 45.1, 1e+16 (refused below)
        if typed.endswith(".0"):
            typed = typed[:-2]
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise MoneyError(f"{value} is not an amount")
        typed = format(value, "f")
    elif isinstance(value, str):
        typed = value
    else:
        raise MoneyError(f"an amount is a number or a decimal text, not {type(value).__name__}")
    if len(typed) > _MAX_CHARS or not _PLAIN.match(typed):
        raise MoneyError(f"{typed[:_MAX_CHARS]!r} is not an amount in digits, like {text(Decimal(52), currency)}")
    amount = Decimal(typed)
    whole, _, decimals = typed.lstrip("+-").partition(".")
    if len(decimals.rstrip("0")) > n:
        raise MoneyError(f"{currency} amounts have {decimals_in_words(currency)}: {typed} is refused, not rounded")
    if len(whole.lstrip("0")) > MAX_INTEGER_DIGITS:
        raise MoneyError(f"{typed[:_MAX_CHARS]} is more than an amount can be")
    return exact(amount.quantize(quantum(currency)), currency)


@dataclass(frozen=True, slots=True)
class Money:
    """An amount in one currency, held with exactly its currency's decimals. Built from an exact amount
    (more decimals raise ``MoneyError``); ``Money.parse`` for outside input, ``Money.rounded`` for what a
    rule computes. Adds, subtracts and compares only with the same currency."""

    amount: Decimal
    currency: str

    def __post_init__(self) -> None:
        if not isinstance(self.amount, Decimal):
            raise MoneyError(f"a Money amount is a Decimal, not {type(self.amount).__name__}")
        object.__setattr__(self, "amount", exact(self.amount, self.currency))

    @classmethod
    def parse(cls, value: object, currency: str) -> Money:
        return cls(parse(value, currency), currency)

    @classmethod
    def rounded(cls, value: Decimal, currency: str) -> Money:
        return cls(round_half_up(value, currency), currency)

    @classmethod
    def zero(cls, currency: str) -> Money:
        return cls(_ZERO, currency)

    @property
    def text(self) -> str:
        return format(self.amount, "f")

    @property
    def number(self) -> float:
        return number(self.amount)

    def __str__(self) -> str:
        return format(self.amount, "f")

    def _same(self, other: object) -> Money:
        if not isinstance(other, Money):
            raise TypeError(f"Money combines with Money, not {type(other).__name__}")
        if other.currency != self.currency:
            raise MoneyError(f"{self.currency} and {other.currency} amounts do not mix; convert first")
        return other

    def __add__(self, other: Money) -> Money:
        return Money(self.amount + self._same(other).amount, self.currency)

    def __sub__(self, other: Money) -> Money:
        return Money(self.amount - self._same(other).amount, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def times(self, count: int) -> Money:
        """``count`` of this (a ``PER_ITEM`` extra's units): exact, no rounding."""
        if isinstance(count, bool) or not isinstance(count, int):
            raise TypeError("Money.times takes an int count")
        return Money(self.amount * count, self.currency)

    def __lt__(self, other: Money) -> bool:
        return self.amount < self._same(other).amount

    def __le__(self, other: Money) -> bool:
        return self.amount <= self._same(other).amount

    def __gt__(self, other: Money) -> bool:
        return self.amount > self._same(other).amount

    def __ge__(self, other: Money) -> bool:
        return self.amount >= self._same(other).amount

    def __bool__(self) -> bool:
        return bool(self.amount)
