"""The rate rules (docs/rules/fx.md): which rate is in use, derived rates to 6 significant digits,
staleness, conversion half-up in the target currency's decimals, and what a rate or a currency may be."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
import structlog

from transfers.fx.rates import (
    SANDBOX_RATES,
    FxRate,
    Rate,
    RateError,
    RateTable,
    RateUnavailable,
    Source,
    check_currency,
    derived,
    in_use,
    parse_rate,
    sandbox_table,
)
from transfers.money import Money

TODAY = date(2026, 11, 27)


def rate(currency: str, value: str, source: Source = Source.ECB, days_ago: int = 0) -> Rate:
    return Rate(currency, Decimal(value), source, TODAY - timedelta(days=days_ago))


def table(*rates: Rate, max_age: int = 4) -> RateTable:
    return RateTable(in_use(rates, TODAY), TODAY, max_age)


def test_the_newest_date_wins_then_manual_over_ecb_over_sandbox() -> None:
    chosen = in_use(
        [
            rate("GBP", "0.80", Source.MANUAL, days_ago=1),
            rate("GBP", "0.85", Source.SANDBOX),
            rate("USD", "1.01", Source.SANDBOX),
            rate("USD", "1.02", Source.ECB),
            rate("CHF", "0.93", Source.ECB),
            rate("CHF", "0.95", Source.MANUAL),
            Rate("JPY", Decimal("170"), Source.MANUAL, TODAY + timedelta(days=1)),  # after today: ignored
            rate("JPY", "160", Source.ECB, days_ago=2),
        ],
        TODAY,
    )
    assert {c: (str(r.rate), r.source.value) for c, r in chosen.items()} == {
        "GBP": ("0.85", "sandbox"),  # newer date beats a higher source
        "USD": ("1.02", "ecb"),
        "CHF": ("0.95", "manual"),
        "JPY": ("160", "ecb"),
    }


def test_the_sandbox_table_is_dated_every_day() -> None:
    day = date(2030, 1, 2)
    rates = sandbox_table(day)
    assert {r.currency: r.rate for r in rates} == dict(SANDBOX_RATES)
    assert {r.as_of for r in rates} == {day} and {r.source for r in rates} == {Source.SANDBOX}
    assert SANDBOX_RATES["GBP"] == Decimal("0.8563") and SANDBOX_RATES["KWD"] == Decimal("0.3321")


def test_from_eur_the_stored_rate_to_eur_and_across_derived_to_six_digits() -> None:
    t = table(rate("GBP", "0.8563"), rate("JPY", "162.35", days_ago=2), rate("KWD", "0.3321", Source.MANUAL))
    assert t.rate("EUR", "GBP") == FxRate("EUR", "GBP", Decimal("0.8563"), Source.ECB, TODAY)
    to_eur = t.rate("GBP", "EUR")
    assert str(to_eur.rate) == "1.16782"  # 1 / 0.8563 = 1.1678150...
    across = t.rate("GBP", "JPY")
    assert str(across.rate) == "189.595"  # 162.35 / 0.8563 = 189.5947...
    # the older of the two rates gives the source and date
    assert (across.source, across.as_of) == (Source.ECB, TODAY - timedelta(days=2))
    assert str(t.rate("JPY", "KWD").rate) == "0.00204558"  # 0.3321 / 162.35 = 0.002045580...
    assert t.rate("JPY", "KWD").as_dict() == {
        "from_currency": "JPY",
        "to_currency": "KWD",
        "rate": "0.00204558",
        "source": "ecb",
        "as_of": (TODAY - timedelta(days=2)).isoformat(),
    }


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("1.1678150181", "1.16782"),
        ("1.25", "1.25"),  # no trailing zeros
        ("1.0000005", "1.00000"),  # exactly 1.0000005 rounds half-up to 1.00000 -> 1
        ("9.9999951", "10"),
        ("123456.5", "123457"),
        ("1234567", "1234570"),
        ("0.000123456789", "0.000123457"),
    ],
)
def test_derived_rates_round_half_up_to_six_significant_digits(value: str, shown: str) -> None:
    assert derived(Decimal(value)) == Decimal(shown)
    assert "E" not in format(derived(Decimal(value)), "f")


def test_a_rate_older_than_the_allowed_age_cannot_be_used() -> None:
    t = table(rate("GBP", "0.8563", days_ago=4), rate("USD", "1.0420", days_ago=5))
    assert t.rate("EUR", "GBP").rate == Decimal("0.8563")  # four days: still usable
    with pytest.raises(RateUnavailable) as stale:
        t.rate("EUR", "USD")
    assert stale.value.reason == "stale" and "5 days old" in str(stale.value)
    with pytest.raises(RateUnavailable):
        t.rate("GBP", "USD")  # a derived rate needs both
    with pytest.raises(RateUnavailable) as missing:
        t.rate("EUR", "THB")
    assert missing.value.reason == "missing"


def test_usable_logs_each_unavailable_pair_once_and_answers_none() -> None:
    t = table(rate("GBP", "0.8563"), rate("USD", "1.0420", days_ago=9))
    with structlog.testing.capture_logs() as logs:
        assert t.usable("GBP", "USD") is None
        assert t.usable("GBP", "USD") is None
        assert t.usable("EUR", "GBP") is not None
    assert [(e["event"], e["from_currency"], e["to_currency"], e["reason"]) for e in logs] == [
        ("fx_rate_unavailable", "GBP", "USD", "stale")
    ]


def test_conversion_rounds_half_up_in_the_target_currency() -> None:
    t = table(rate("GBP", "0.8563"), rate("JPY", "162.35"), rate("KWD", "0.3321"))
    # the worked example: 56.05 EUR x 0.8563 = 47.995615 -> 48.00 GBP
    converted = t.convert(Money(Decimal("56.05"), "EUR"), "GBP")
    assert converted.amount == Money(Decimal("48.00"), "GBP") and converted.fx.rate == Decimal("0.8563")
    assert t.convert(Money(Decimal("56.05"), "EUR"), "JPY").amount.text == "9100"  # 9099.7175
    assert t.convert(Money(Decimal("56.05"), "EUR"), "KWD").amount.text == "18.614"  # 18.614205
    assert t.convert(Money(Decimal("10010"), "JPY"), "GBP").amount.text == "52.80"  # x 0.00527441 = 52.7968...
    with pytest.raises(ValueError, match="not a conversion"):
        t.rate("GBP", "GBP")


@pytest.mark.parametrize("text", ["0.8563", "162.35", "1", " 4.2650 ", "999999999999.0000000001"])
def test_rates_are_positive_plain_decimals(text: str) -> None:
    assert parse_rate(text) == Decimal(text.strip())


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0", "zero"),
        ("0.0000", "zero"),
        ("-0.85", "positive"),
        ("1e3", "not a rate"),
        ("NaN", "not a rate"),
        ("1,000.5", "not a rate"),
        ("", "not a rate"),
        (".5", "not a rate"),
        ("1.12345678901", "not a rate"),  # 11 decimals
        ("١٢", "not a rate"),
    ],
)
def test_zero_negative_and_odd_rates_are_refused(text: str, words: str) -> None:
    with pytest.raises(RateError, match=words):
        parse_rate(text)


def test_which_currencies_may_have_a_rate() -> None:
    assert check_currency("GBP", None) == "GBP"
    assert check_currency("JPY", frozenset({"GBP", "JPY"})) == "JPY"
    for code, words in [
        ("gbp", "not an ISO 4217"),
        ("XXX", "not an ISO 4217"),
        ("ABC", "not an ISO 4217"),
        ("EUR", "EUR itself"),
    ]:
        with pytest.raises(RateError, match=words):
            check_currency(code, None)
    with pytest.raises(RateError, match="TRANSFERS_CURRENCIES"):
        check_currency("THB", frozenset({"GBP"}))
