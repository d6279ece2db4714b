"""Credit amounts typed by an operator (wallet/amounts.py): exact, positive, two decimals at most."""

from __future__ import annotations

from decimal import Decimal

import pytest

from transfers.wallet.amounts import MAX_AMOUNT, parse_credit


@pytest.mark.parametrize(
    ("typed", "amount"),
    [
        ("50", Decimal("50.00")),
        ("50.5", Decimal("50.50")),
        (" 0.01 ", Decimal("0.01")),
        ("+7.10", Decimal("7.10")),
        (".5", Decimal("0.50")),
        ("999999999999.99", MAX_AMOUNT),
    ],
)
def test_amounts_accepted(typed: str, amount: Decimal) -> None:
    assert parse_credit(typed, "EUR") == amount and parse_credit(typed, "EUR").as_tuple().exponent == -2


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Enter an amount"),
        ("   ", "Enter an amount"),
        (None, "Enter an amount"),
        (50, "Enter an amount"),
        (True, "Enter an amount"),
        ("-5.00", "cannot be negative"),
        ("-0.01", "cannot be negative"),
        ("0", "more than 0.00"),
        ("0.00", "more than 0.00"),
        ("10.005", "at most two decimals"),
        ("1e3", "in digits"),
        ("NaN", "in digits"),
        ("Infinity", "in digits"),
        ("5,00", "in digits"),
        ("١٠", "in digits"),
        ("1" * 40, "in digits"),
        ("1000000000000.00", "at most 999999999999.99"),
        ("1.2.3", "in digits"),
        ("--5", "in digits"),
    ],
)
def test_amounts_refused(typed: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_credit(typed, "EUR")


def test_zero_only_where_allowed() -> None:
    assert parse_credit("0", "EUR", allow_zero=True) == Decimal("0.00")
    with pytest.raises(ValueError, match="negative"):
        parse_credit("-1", "EUR", allow_zero=True)


@pytest.mark.parametrize(
    ("typed", "currency", "amount"),
    [("10010", "JPY", Decimal("10010")), ("20.465", "KWD", Decimal("20.465")), ("7.5", "KWD", Decimal("7.500"))],
)
def test_the_wallet_currency_gives_the_decimals(typed: str, currency: str, amount: Decimal) -> None:
    assert parse_credit(typed, currency) == amount
    assert parse_credit(typed, currency).as_tuple().exponent == -len(str(amount).partition(".")[2])


@pytest.mark.parametrize(
    ("typed", "currency", "message"),
    [
        ("10010.5", "JPY", "can have no decimals"),
        ("20.4651", "KWD", "at most three decimals"),
        ("", "JPY", r"like 50\."),
    ],
)
def test_more_decimals_than_the_currency_has_are_refused(typed: str, currency: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_credit(typed, currency)


def test_without_a_known_currency_only_what_does_not_depend_on_it_is_checked() -> None:
    """The console's new-client form: a wrong currency beside a negative balance shows both mistakes."""
    with pytest.raises(ValueError, match="cannot be negative"):
        parse_credit("-1", None, allow_zero=True)
    with pytest.raises(ValueError, match=r"like 50\."):
        parse_credit("ten", None)
    assert parse_credit("10.005", None) == Decimal("10.005")  # its decimals are judged once the currency is
