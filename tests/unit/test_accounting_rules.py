"""The books' pure rules (docs/rules/statements.md): shares half-up, periods, statements assembled
from closed rows and open months, what an operator may type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest

from transfers.accounting import amounts, earnings
from transfers.accounting.periods import InvalidPeriod, next_period, parse_period, period_end, period_of
from transfers.accounting.statements import ClosedRow, Figures, StatementStatus, assemble, figures_of

D = Decimal


@pytest.mark.parametrize(
    ("amount", "net", "total", "share"),
    [
        ("5.00", "20.00", "25.00", "4.00"),
        ("1.00", "3.35", "10.00", "0.34"),  # 0.335: half-up
        ("1.00", "3.25", "10.00", "0.33"),  # 0.325: half-up, never to even
        ("6.67", "22.22", "33.33", "4.45"),
        ("0.01", "0.01", "100.00", "0.00"),
        ("10.00", "0.00", "10.00", "0.00"),
        ("10.00", "5.00", "0.00", "0.00"),  # a free booking has no share
    ],
)
def test_partner_share_is_half_up_to_the_cent(amount: str, net: str, total: str, share: str) -> None:
    assert earnings.partner_share(D(amount), D(net), D(total), "EUR") == D(share)
    assert earnings.cancellation_fee(D(amount), D(net), D(total), "EUR") == D(share)
    assert earnings.recovery(D(amount), D(net), D(total), "EUR") == -D(share)


def test_periods_are_utc_months() -> None:
    late_in_berlin = datetime(2026, 12, 1, 0, 30, tzinfo=timezone(timedelta(hours=1)))
    assert period_of(late_in_berlin) == "2026-11"
    assert period_of(datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)) == "2026-12"
    assert next_period("2026-12") == "2027-01" and next_period("2026-01") == "2026-02"
    assert period_end("2026-11") == datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "bad",
    ["2026-13", "2026-00", "2026-1", "26-11", "2026-11-01", "", " 2026-11", "1999-12", None, 202611, "２０２６-11"],
)
def test_a_bad_period_is_refused(bad: object) -> None:
    with pytest.raises(InvalidPeriod):
        parse_period(bad)


def test_statements_chain_closing_to_opening_and_keep_closed_ones_frozen() -> None:
    closed = [ClosedRow(1, "EUR", "2026-09", StatementStatus.PAID, Figures(D("0"), D("100"), D("0"), D("0")), "R1")]
    sums = [
        ("EUR", "2026-09", "RIDE", D("999.00")),  # a closed month's own figures win (they never change)
        ("EUR", "2026-10", "PAYOUT", D("-100.00")),
        ("EUR", "2026-10", "RIDE", D("40.00")),
        ("EUR", "2026-11", "RECOVERY", D("-8.00")),
        ("EUR", "2026-11", "ADJUSTMENT", D("-2.00")),
    ]
    found = assemble(7, closed, sums)
    assert [(s.period, s.status) for s in found] == [
        ("2026-11", StatementStatus.OPEN),
        ("2026-10", StatementStatus.OPEN),
        ("2026-09", StatementStatus.PAID),
    ]
    nov, oct_, _ = found
    assert oct_.figures.opening == D("100") and oct_.figures.closing == D("40.00")
    assert nov.as_api() == {
        "period": "2026-11",
        "currency": "EUR",
        "status": "OPEN",
        "opening_balance": "40.00",
        "earned": "-2.00",
        "recovered": "-8.00",
        "paid": "0.00",
        "closing_balance": "30.00",
    }
    assert figures_of(D("1"), {}).closing == D("1")


@pytest.mark.parametrize(
    "bad", ["", "  ", "abc", "1e3", "NaN", "1.005", "0", "-0.00", "12,50", "--1", "1" * 13, None, True, 5]
)
def test_an_adjustment_is_a_signed_non_zero_amount_of_cents(bad: object) -> None:
    with pytest.raises(amounts.InvalidAmount):
        amounts.parse_adjustment(bad, "EUR")


def test_good_adjustments() -> None:
    assert amounts.parse_adjustment(" -12.5 ", "EUR") == D("-12.50")
    assert amounts.parse_adjustment("+3", "EUR") == D("3.00")
    assert amounts.parse_adjustment("999999999999.99", "EUR") == D("999999999999.99")
    with pytest.raises(amounts.InvalidNote):
        amounts.clean_text(" \x00 ", what="note", limit=10)
    with pytest.raises(amounts.InvalidNote):
        amounts.clean_text("x" * 11, what="note", limit=10)
