"""Exchange rates: which rate is in use, derived (cross) rates and converting an amount. Pure: no SQL,
no HTTP (docs/rules/fx.md).

Every stored rate is a reference rate from EUR (``EUR -> X``: 1 EUR buys ``rate`` X), with a
``source`` and an ``as_of`` date. The rules kept here and nowhere else:

* The rate in use for a currency is the one with the newest ``as_of`` not after today (UTC); on the
  same date ``manual`` wins over ``ecb`` over ``sandbox`` (``in_use``).
* From A to B: A = EUR, B's rate as stored; B = EUR, ``1 / rate(A)``; otherwise ``rate(B) / rate(A)``.
  A derived rate (the last two) is rounded half-up to 6 significant digits and carries the source
  and date of the older of the rates it comes from (``RateTable.rate``).
* A rate dated more than ``max_age_days`` before today cannot be used: the pair is unavailable
  (``RateUnavailable``; ``RateTable.usable`` logs ``fx_rate_unavailable`` and answers None, so a
  search leaves those offers out and answers the others).
* A converted amount is ``round_half_up(amount x rate)`` in the target currency (``RateTable.convert``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

import structlog

from transfers import money
from transfers.errors import Invalid, Unavailable
from transfers.money import Money

log = structlog.get_logger("transfers.fx")

BASE = "EUR"  # every stored rate is EUR -> X
DERIVED_DIGITS = 6  # significant digits of a derived (cross) rate


class Source(StrEnum):
    """Where a rate comes from; ``rank``: which wins when two share a date (manual over ecb over sandbox)."""

    SANDBOX = "sandbox"
    ECB = "ecb"
    MANUAL = "manual"

    @property
    def rank(self) -> int:
        return _RANKS[self]


_RANKS = {Source.SANDBOX: 0, Source.ECB: 1, Source.MANUAL: 2}

# The sandbox table (docs/rules/fx.md#sources): fixed rates, dated every UTC day, so a sandbox converts
# the same way every day and its worked examples stay true.
SANDBOX_RATES: Mapping[str, Decimal] = {
    "GBP": Decimal("0.8563"),
    "USD": Decimal("1.0420"),
    "CHF": Decimal("0.9385"),
    "PLN": Decimal("4.2650"),
    "TRY": Decimal("36.120"),
    "THB": Decimal("37.550"),
    "AED": Decimal("3.8270"),
    "JPY": Decimal("162.35"),
    "KWD": Decimal("0.3321"),
}


class RateError(Invalid):
    """A rate or a currency that cannot be stored: the message says what is wrong, in words."""


class RateUnavailable(Unavailable):
    """No usable rate for a pair: none stored, or one older than the allowed age. ``reason`` is a word
    for the log line (``missing`` | ``stale``)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Rate:
    """One stored reference rate: 1 EUR buys ``rate`` of ``currency``, per ``source``, as of ``as_of``."""

    currency: str
    rate: Decimal
    source: Source
    as_of: date

    def as_dict(self) -> dict[str, str]:
        """What ``transfers fx list --json`` prints of a rate."""
        return {
            "currency": self.currency,
            "rate": rate_text(self.rate),
            "source": self.source.value,
            "as_of": self.as_of.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class FxRate:
    """The rate that converts ``from_currency`` into ``to_currency`` (the ``fx`` object of an offer
    and a booking's price), with the source and date it carries."""

    from_currency: str
    to_currency: str
    rate: Decimal
    source: Source
    as_of: date

    def as_dict(self) -> dict[str, str]:
        return {
            "from_currency": self.from_currency,
            "to_currency": self.to_currency,
            "rate": rate_text(self.rate),
            "source": self.source.value,
            "as_of": self.as_of.isoformat(),
        }


@dataclass(frozen=True, slots=True)
class Converted:
    """An amount converted: the result, rounded half-up in its currency, and the rate used."""

    amount: Money
    fx: FxRate


# --- parsing a rate -------------------------------------------------------------------------------------

_RATE = re.compile(r"\A[0-9]{1,12}(\.[0-9]{1,10})?\Z")


def parse_rate(value: object) -> Decimal:
    """A strict rate from a text: a positive decimal in plain digits (``0.8563``, ``162.35``), at most 12
    integer and 10 decimal digits; zero, negatives, exponents, NaN and grouping are refused (``RateError``)."""
    typed = value.strip() if isinstance(value, str) else ""
    if typed.startswith("-"):
        raise RateError(f"a rate is positive: {typed[:24]} is refused")
    if not _RATE.match(typed):
        raise RateError(f"{str(value)[:24]!r} is not a rate: a positive decimal in digits, like 0.8563")
    rate = Decimal(typed)
    if rate == 0:
        raise RateError("a rate of zero is refused: 1 EUR always buys some of a currency")
    return rate


def rate_text(rate: Decimal) -> str:
    """A rate as the service writes it: plain digits, never an exponent (``0.8563``, ``189.595``)."""
    return format(rate, "f")


def check_currency(code: str, enabled: frozenset[str] | None) -> str:
    """``code`` if a rate may be stored for it, else ``RateError``: an active ISO 4217 currency in
    capitals, other than EUR (the base: it has no rate), among TRANSFERS_CURRENCIES when that is set."""
    if not money.is_currency(code):
        raise RateError(f"{code[:10]!r} is not an ISO 4217 currency code (three capitals, like GBP)")
    if code == BASE:
        raise RateError("rates are from EUR: EUR itself has none")
    if enabled is not None and code not in enabled:
        raise RateError(f"{code} is not one of the currencies this service accepts (TRANSFERS_CURRENCIES)")
    return code


# --- the rate in use, derived rates, conversion ------------------------------------------------------------


def in_use(rates: Iterable[Rate], today: date) -> dict[str, Rate]:
    """The rate in use per currency: the newest ``as_of`` not after ``today``; on one date the
    source of highest rank (manual over ecb over sandbox). Rates dated after today are ignored."""
    chosen: dict[str, Rate] = {}
    for rate in rates:
        if rate.as_of > today:
            continue
        held = chosen.get(rate.currency)
        if held is None or (rate.as_of, rate.source.rank) > (held.as_of, held.source.rank):
            chosen[rate.currency] = rate
    return chosen


def sandbox_table(today: date) -> list[Rate]:
    """The sandbox rates, dated ``today``."""
    return [Rate(currency, rate, Source.SANDBOX, today) for currency, rate in SANDBOX_RATES.items()]


def derived(value: Decimal) -> Decimal:
    """``value`` rounded half-up to 6 significant digits, written without trailing zeros (1/0.8563 ->
    1.16782; 1/0.8 -> 1.25)."""
    return _plain(money.round_significant(value, DERIVED_DIGITS))


def _plain(value: Decimal) -> Decimal:
    """``value`` without trailing zeros and without an exponent form (100, not 1E+2)."""
    normal = value.normalize()
    exponent = normal.as_tuple().exponent
    return normal.quantize(Decimal(1)) if isinstance(exponent, int) and exponent > 0 else normal


@dataclass
class RateTable:
    """The rates in use on ``today`` (``in_use``'s answer), and how old one may be. Built once per
    search (``fx.service.rate_table``) and read for every offer; cross rates are computed once per pair."""

    rates: Mapping[str, Rate]
    today: date
    max_age_days: int
    _pairs: dict[tuple[str, str], FxRate | RateUnavailable] = field(default_factory=dict, repr=False)
    _logged: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def _fresh(self, currency: str) -> Rate:
        rate = self.rates.get(currency)
        if rate is None:
            raise RateUnavailable(f"no rate for {currency}", "missing")
        if rate.as_of < self.today - timedelta(days=self.max_age_days):
            age = (self.today - rate.as_of).days
            raise RateUnavailable(
                f"the {currency} rate is {age} days old ({rate.as_of}), over {self.max_age_days}", "stale"
            )
        return rate

    def rate(self, from_currency: str, to_currency: str) -> FxRate:
        """The rate from one currency to another (``RateUnavailable`` when a rate it needs is missing or
        stale). The same currency on both sides is not a conversion: ``ValueError``."""
        if from_currency == to_currency:
            raise ValueError(f"{from_currency} to {from_currency} is not a conversion")
        key = (from_currency, to_currency)
        found = self._pairs.get(key)
        if found is None:
            try:
                found = self._compute(from_currency, to_currency)
            except RateUnavailable as exc:
                found = exc
            self._pairs[key] = found
        if isinstance(found, RateUnavailable):
            raise found
        return found

    def _compute(self, a: str, b: str) -> FxRate:
        if a == BASE:
            to = self._fresh(b)
            return FxRate(a, b, to.rate, to.source, to.as_of)
        frm = self._fresh(a)
        if b == BASE:
            return FxRate(a, b, derived(Decimal(1) / frm.rate), frm.source, frm.as_of)
        to = self._fresh(b)
        older = frm if (frm.as_of, frm.source.rank) <= (to.as_of, to.source.rank) else to
        return FxRate(a, b, derived(to.rate / frm.rate), older.source, older.as_of)

    def usable(self, from_currency: str, to_currency: str) -> FxRate | None:
        """``rate``, or None with one ``fx_rate_unavailable`` log line per pair and table (a search
        leaves the offers that need it out and answers the others; never an error to the client)."""
        try:
            return self.rate(from_currency, to_currency)
        except RateUnavailable as exc:
            if (from_currency, to_currency) not in self._logged:
                self._logged.add((from_currency, to_currency))
                log.warning(
                    "fx_rate_unavailable",
                    from_currency=from_currency,
                    to_currency=to_currency,
                    reason=exc.reason,
                    detail=str(exc),
                )
            return None

    def convert(self, amount: Money, to_currency: str) -> Converted:
        """``amount`` in ``to_currency``: ``round_half_up(amount x rate)`` (``RateUnavailable`` as
        ``rate``). Each line of a price is converted by itself, then the lines are added."""
        fx = self.rate(amount.currency, to_currency)
        return Converted(Money.rounded(amount.amount * fx.rate, to_currency), fx)

    def ages(self) -> dict[str, int]:
        """Days since each rate in use was dated (``transfers doctor``)."""
        return {currency: (self.today - rate.as_of).days for currency, rate in self.rates.items()}

    def describe(self) -> list[dict[str, Any]]:
        return [self.rates[c].as_dict() for c in sorted(self.rates)]
