"""Money (docs/architecture/money.md): each currency's ISO 4217 decimals, the strict parser, the one
half-up rounding and the one writer, table-driven over the inputs people and partners actually send."""

from __future__ import annotations

from decimal import Decimal

import pytest

from transfers import money
from transfers.money import Money, MoneyError, UnknownCurrency

D = Decimal


@pytest.mark.parametrize(
    ("currency", "places"),
    [("JPY", 0), ("EUR", 2), ("GBP", 2), ("USD", 2), ("KWD", 3), ("BHD", 3), ("CLF", 4), ("ISK", 0)],
)
def test_each_currency_has_its_iso_4217_decimals(currency: str, places: int) -> None:
    assert money.places(currency) == places
    assert money.quantum(currency) == D(1).scaleb(-places)


@pytest.mark.parametrize("code", ["eur", "Eur", "EURO", "XXX", "XAU", "ZZZ", "", " EUR", "ЕUR", None, 978])
def test_unknown_currencies_are_refused(code: object) -> None:
    with pytest.raises(UnknownCurrency):
        money.places(code)


# (value, currency, the amount parsed) -- every accepted spelling.
ACCEPTED = [
    ("52.80", "EUR", D("52.80")),
    ("52.8", "EUR", D("52.80")),
    ("52", "EUR", D("52.00")),
    ("+52", "EUR", D("52.00")),
    ("-12.50", "EUR", D("-12.50")),
    ("0", "EUR", D("0.00")),
    ("-0", "EUR", D("0.00")),
    ("-0.00", "EUR", D("0.00")),
    ("0052.80", "EUR", D("52.80")),
    ("52.800", "EUR", D("52.80")),  # trailing zeros add no precision
    ("10010", "JPY", D("10010")),
    ("10010.0", "JPY", D("10010")),
    ("20.475", "KWD", D("20.475")),
    ("20.465", "KWD", D("20.465")),
    ("0.0001", "CLF", D("0.0001")),
    ("99999999999999.99", "EUR", D("99999999999999.99")),
    (45, "EUR", D("45.00")),
    (-3, "JPY", D("-3")),
    (45.1, "EUR", D("45.10")),
    (45.0, "EUR", D("45.00")),
    (0.1, "EUR", D("0.10")),
    (20.475, "KWD", D("20.475")),
    (10010.0, "JPY", D("10010")),
    (D("45.1"), "EUR", D("45.10")),
    (D("1E+3"), "EUR", D("1000.00")),  # a Decimal is a value, not a spelling
]


@pytest.mark.parametrize(("value", "currency", "amount"), ACCEPTED)
def test_accepted_amounts(value: object, currency: str, amount: Decimal) -> None:
    parsed = money.parse(value, currency)
    assert parsed == amount
    assert parsed.as_tuple().exponent == -money.places(currency)
    assert not parsed.is_signed() or parsed < 0
    assert Money.parse(value, currency) == Money(amount, currency)


# (value, currency) -- refused, never rounded or guessed.
REFUSED = [
    ("10.005", "EUR"),
    ("52.801", "EUR"),
    ("10010.5", "JPY"),
    ("1.1", "JPY"),
    ("20.4751", "KWD"),
    ("0.00001", "CLF"),
    (10.005, "EUR"),
    (0.1 + 0.2, "EUR"),  # 0.30000000000000004
    (10010.5, "JPY"),
    (D("10.005"), "EUR"),
    ("1e3", "EUR"),
    ("1E3", "EUR"),
    ("1e-2", "EUR"),
    (1e16, "EUR"),  # repr 1e+16
    ("NaN", "EUR"),
    ("nan", "EUR"),
    ("Infinity", "EUR"),
    ("-inf", "EUR"),
    (float("nan"), "EUR"),
    (float("inf"), "EUR"),
    (float("-inf"), "EUR"),
    (D("NaN"), "EUR"),
    (D("Infinity"), "EUR"),
    (D("sNaN"), "EUR"),
    (True, "EUR"),
    (False, "EUR"),
    (None, "EUR"),
    ([], "EUR"),
    ({"amount": 1}, "EUR"),
    (b"12.50", "EUR"),
    ("", "EUR"),
    (" ", "EUR"),
    (" 12.50", "EUR"),
    ("12.50 ", "EUR"),
    ("12,50", "EUR"),
    ("1,000.00", "EUR"),
    ("1_000", "EUR"),
    ("12.", "EUR"),
    (".5", "EUR"),
    ("--5", "EUR"),
    ("+-5", "EUR"),
    ("5-", "EUR"),
    ("0x10", "EUR"),
    ("١٢", "EUR"),  # Arabic-Indic digits
    ("１２", "EUR"),  # fullwidth digits
    ("12\x00", "EUR"),
    ("9" * 41, "EUR"),
    ("9" * 15, "EUR"),  # 15 integer digits: more than a money column holds
    ("1" + "0" * 10_000, "EUR"),
    (10**15, "EUR"),
    ("12.50", "eur"),
    ("12.50", "XAU"),
]


@pytest.mark.parametrize(("value", "currency"), REFUSED)
def test_refused_amounts(value: object, currency: str) -> None:
    with pytest.raises(MoneyError):
        money.parse(value, currency)


def test_extra_decimals_are_named_in_the_error() -> None:
    with pytest.raises(MoneyError, match=r"EUR amounts have at most two decimals: 10\.005"):
        money.parse("10.005", "EUR")
    with pytest.raises(MoneyError, match="JPY amounts have no decimals"):
        money.parse("1.5", "JPY")


# (computed value, currency, rounded half-up)
ROUNDED = [
    (D("45.105"), "EUR", D("45.11")),
    (D("45.104999"), "EUR", D("45.10")),
    (D("45.115"), "EUR", D("45.12")),  # half-up, not half-even
    (D("-45.105"), "EUR", D("-45.11")),  # away from zero
    (D("-0.004"), "EUR", D("0.00")),  # no negative zero
    (D("10010.5"), "JPY", D("10011")),
    (D("10009.5"), "JPY", D("10010")),
    (D("20.4745"), "KWD", D("20.475")),
    (D("0.00005"), "CLF", D("0.0001")),
    (D("52.8"), "EUR", D("52.80")),
]


@pytest.mark.parametrize(("value", "currency", "rounded"), ROUNDED)
def test_rounding_is_half_up_to_the_currencys_decimals(value: Decimal, currency: str, rounded: Decimal) -> None:
    assert money.round_half_up(value, currency) == rounded
    assert money.round_half_up(value, currency).as_tuple().exponent == -money.places(currency)
    assert Money.rounded(value, currency) == Money(rounded, currency)


# (amount, currency, text, JSON number)
WRITTEN = [
    (D("52.8"), "EUR", "52.80", 52.8),
    (D("52.80"), "EUR", "52.80", 52.8),
    (D("45"), "EUR", "45.00", 45.0),
    (D("45.0000"), "EUR", "45.00", 45.0),  # a money column's own scale
    (D("0"), "EUR", "0.00", 0.0),
    (D("-0.00"), "EUR", "0.00", 0.0),
    (D("-12.5"), "EUR", "-12.50", -12.5),
    (D("10010"), "JPY", "10010", 10010.0),
    (D("10010.0000"), "JPY", "10010", 10010.0),
    (D("1E+4"), "JPY", "10000", 10000.0),
    (D("20.475"), "KWD", "20.475", 20.475),
    (D("20.4"), "KWD", "20.400", 20.4),
    (D("0.0001"), "CLF", "0.0001", 0.0001),
    (D("99999999999999.99"), "EUR", "99999999999999.99", None),
]


@pytest.mark.parametrize(("amount", "currency", "written", "as_number"), WRITTEN)
def test_one_writer_gives_exactly_the_currencys_decimals(
    amount: Decimal, currency: str, written: str, as_number: float | None
) -> None:
    assert money.text(amount, currency) == written
    assert str(Money(amount, currency)) == written
    assert Money(amount, currency).text == written
    if as_number is None:
        with pytest.raises(MoneyError):  # 16 digits: a JSON number (a double) would not keep them
            money.number(amount)
    else:
        assert money.number(amount) == as_number
        assert repr(money.number(amount)) == repr(as_number)


@pytest.mark.parametrize(
    ("amount", "currency"),
    [(D("10.005"), "EUR"), (D("10010.5"), "JPY"), (D("20.4751"), "KWD"), (D("NaN"), "EUR"), (D("Infinity"), "EUR")],
)
def test_the_writer_refuses_rather_than_rounds(amount: Decimal, currency: str) -> None:
    with pytest.raises(MoneyError):
        money.text(amount, currency)
    with pytest.raises(MoneyError):
        Money(amount, currency)


@pytest.mark.parametrize("amount", [D("NaN"), D("Infinity"), D("-Infinity"), D("1234567890123456.78")])
def test_a_json_number_is_refused_for_what_it_cannot_hold(amount: Decimal) -> None:
    with pytest.raises(MoneyError):
        money.number(amount)


@pytest.mark.parametrize(
    ("stored", "currency", "written"),
    [
        ("45.1000", "EUR", "45.10"),
        ("-12.5000", "EUR", "-12.50"),
        ("-0.0000", "EUR", "0.00"),
        ("10010.0000", "JPY", "10010"),
        ("20.4650", "KWD", "20.465"),
        ("0.0001", "CLF", "0.0001"),
        ("45", "EUR", "45.00"),
    ],
)
def test_a_columns_own_text_is_written_like_any_amount(stored: str, currency: str, written: str) -> None:
    assert money.stored_text(stored, currency) == written
    assert money.stored_text(stored, currency) == money.text(Decimal(stored), currency)


@pytest.mark.parametrize(("stored", "currency"), [("45.1050", "EUR"), ("10010.5000", "JPY"), ("20.4651", "KWD")])
def test_a_columns_text_with_more_decimals_is_refused(stored: str, currency: str) -> None:
    with pytest.raises(MoneyError):
        money.stored_text(stored, currency)


def test_money_is_frozen_and_slotted() -> None:
    m = Money(D("52.80"), "EUR")
    with pytest.raises(AttributeError):
        m.amount = D("1")  # type: ignore[misc]
    assert not hasattr(m, "__dict__")
    assert hash(m) == hash(Money(D("52.8"), "EUR"))


@pytest.mark.parametrize("amount", [52.8, 52, "52.80", None, True])
def test_money_holds_a_decimal_only(amount: object) -> None:
    with pytest.raises(MoneyError):
        Money(amount, "EUR")  # type: ignore[arg-type]


def test_arithmetic_and_comparison_within_one_currency() -> None:
    a, b = Money(D("52.80"), "EUR"), Money(D("10.25"), "EUR")
    assert a + b == Money(D("63.05"), "EUR")
    assert a - b == Money(D("42.55"), "EUR")
    assert -b == Money(D("-10.25"), "EUR")
    assert b.times(3) == Money(D("30.75"), "EUR")
    assert b < a and b <= a and a > b and a >= b and a >= a
    assert not Money.zero("JPY") and Money.zero("JPY").text == "0"
    assert Money(D("1"), "EUR") != Money(D("1"), "GBP")


@pytest.mark.parametrize(
    "combine",
    [
        lambda a, b: a + b,
        lambda a, b: a - b,
        lambda a, b: a < b,
        lambda a, b: a <= b,
        lambda a, b: a > b,
        lambda a, b: a >= b,
    ],
)
def test_currencies_do_not_mix(combine: object) -> None:
    eur, jpy = Money(D("1.00"), "EUR"), Money(D("1"), "JPY")
    with pytest.raises(MoneyError, match="EUR and JPY"):
        combine(eur, jpy)  # type: ignore[operator]


@pytest.mark.parametrize("other", [D("1.00"), 1, 1.0, "1.00"])
def test_money_does_not_combine_with_bare_numbers(other: object) -> None:
    with pytest.raises(TypeError):
        Money(D("1.00"), "EUR") + other  # type: ignore[operator]
    with pytest.raises(TypeError):
        Money(D("1.00"), "EUR").times(1.5)  # type: ignore[arg-type]
