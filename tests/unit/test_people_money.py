"""Amounts as pages show them (docs/architecture/money.md#pages): Babel's format for the reader's locale,
with exactly the currency's ISO 4217 decimals (JPY none, KWD three; CLDR's own digits are not used), a
letter sign spaced from its digits; the locale from the browser's Accept-Language; a converted price's
rate in words."""

from __future__ import annotations

from decimal import Decimal

import pytest

from transfers import money
from transfers.webauth.formats import fx_words, people_money, reader_locale

NBSP = "\u00a0"


@pytest.mark.parametrize(
    ("amount", "currency", "locale", "shown"),
    [
        ("52.80", "GBP", "en", "£52.80"),
        ("56.05", "EUR", "en", "€56.05"),
        ("10010", "JPY", "en", "¥10,010"),
        ("20.465", "KWD", "en", f"KWD{NBSP}20.465"),
        ("20.4", "KWD", "en", f"KWD{NBSP}20.400"),
        ("1234.5", "EUR", "de", f"1.234,50{NBSP}€"),
        ("20.465", "KWD", "de", f"20,465{NBSP}KWD"),
        ("10010", "JPY", "ja", "￥10,010"),
        ("-12.3", "EUR", "en", "-€12.30"),
        ("0", "EUR", "en", "€0.00"),
        # CLDR writes IQD with no decimals; ISO 4217 gives it three, and the service's amounts have three
        ("1.5", "IQD", "en", f"IQD{NBSP}1.500"),
        ("5", "CHF", "en_GB", f"CHF{NBSP}5.00"),
        ("1", "EUR", "not-a-locale", "€1.00"),
    ],
)
def test_amounts_are_written_for_the_reader_with_the_currencys_decimals(
    amount: str, currency: str, locale: str, shown: str
) -> None:
    assert money.for_people(Decimal(amount), currency, locale) == shown


def test_an_amount_with_more_decimals_than_its_currency_is_refused_not_rounded() -> None:
    with pytest.raises(money.MoneyError):
        money.for_people(Decimal("10010.5"), "JPY")
    with pytest.raises(money.MoneyError):
        money.for_people(Decimal("52.805"), "GBP")


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [
        (Decimal("45"), "EUR", "€45.00"),
        ("1234.5", "GBP", "£1,234.50"),
        (52.8, "GBP", "£52.80"),  # a search's JSON number
        (None, "EUR", "—"),
        ("", "EUR", "—"),
        ("not money", "EUR", "not money"),
        ("1.5", "JPY", "1.5"),  # not an amount of yen: shown as it is, the page still answers
        ("12", "eur", "12"),
    ],
)
def test_the_pages_filter_never_fails_a_page(amount: object, currency: str, shown: str) -> None:
    assert people_money(amount, currency) == shown


@pytest.mark.parametrize(
    ("header", "locale"),
    [
        ("", "en"),
        ("de-DE,de;q=0.9,en;q=0.8", "de_DE"),
        ("en-GB,en;q=0.9", "en_GB"),
        ("fr;q=0.5, ja;q=0.8", "ja"),
        ("xx-YY, pt-BR;q=0.7", "pt_BR"),
        ("*", "en"),
        ("de;q=0", "en"),
        ("de;q=abc, it", "it"),
        ("<script>", "en"),
        ("x" * 5000, "en"),
    ],
)
def test_the_readers_locale_comes_from_accept_language(header: str, locale: str) -> None:
    assert reader_locale(header) == locale


def test_a_converted_price_says_its_rate_source_and_date() -> None:
    fx = {"from_currency": "EUR", "to_currency": "GBP", "rate": "0.8563", "source": "ecb", "as_of": "2026-11-27"}
    assert fx_words(fx) == "Converted from EUR at 1 EUR = 0.8563 GBP, the ECB's rate of 27 Nov 2026"
    assert fx_words({**fx, "source": "manual"}).endswith("a manual rate of 27 Nov 2026")
    assert fx_words(None) == ""
