"""A partner line across two currencies (docs/rules/fx.md#books), pure: ``journal.to_partner`` builds an entry
that balances in each currency through the FX accounts, leaves out a side that rounds to nothing, and is
the platform's plain transfer in one currency; ``NewEntry`` refuses an entry unbalanced in any one currency."""

from __future__ import annotations

from decimal import Decimal

import pytest

from transfers.accounting.journal import FX, PLATFORM, Leg, NewEntry, Unbalanced, partner, to_partner

D = Decimal


def legs(entry: NewEntry | None) -> set[tuple[str, str, Decimal]]:
    assert entry is not None
    return {(str(leg.account), entry.currency_of(leg), leg.amount) for leg in entry.legs}


def test_a_converted_ride_balances_in_each_currency() -> None:
    entry = to_partner("RIDE", 7, (D("48.00"), "GBP"), (D("56.05"), "EUR"), booking_id=1, keep_zero=True)
    assert entry is not None and entry.currency == "EUR"
    assert legs(entry) == {
        ("platform", "GBP", D("-48.00")),
        ("fx", "GBP", D("48.00")),
        ("fx", "EUR", D("-56.05")),
        ("partner:7", "EUR", D("56.05")),
    }


def test_a_recovery_runs_the_other_way_and_a_side_rounding_to_nothing_is_left_out() -> None:
    recovery = to_partner("RECOVERY", 7, (D("-9.09"), "GBP"), (D("-10.62"), "EUR"))
    assert ("partner:7", "EUR", D("-10.62")) in legs(recovery)
    assert ("platform", "GBP", D("9.09")) in legs(recovery)
    fee = to_partner("CANCELLATION_FEE", 7, (D("0.001"), "KWD"), (D("0"), "JPY"))
    assert legs(fee) == {("platform", "KWD", D("-0.001")), ("fx", "KWD", D("0.001"))}
    assert to_partner("CANCELLATION_FEE", 7, (D("0"), "KWD"), (D("0"), "JPY")) is None
    zero_ride = to_partner("RIDE", 7, (D("0"), "KWD"), (D("0"), "JPY"), keep_zero=True)
    assert ("partner:7", "JPY", D("0")) in legs(zero_ride)


def test_one_currency_is_the_platforms_transfer() -> None:
    assert legs(to_partner("RIDE", 7, (D("40.00"), "EUR"), (D("40.00"), "EUR"))) == {
        ("platform", "EUR", D("-40.00")),
        ("partner:7", "EUR", D("40.00")),
    }
    assert legs(to_partner("RECOVERY", 7, (D("-12.00"), "EUR"), (D("-12.00"), "EUR"))) == {
        ("partner:7", "EUR", D("-12.00")),
        ("platform", "EUR", D("12.00")),
    }


def test_an_entry_unbalanced_in_one_currency_is_refused() -> None:
    with pytest.raises(Unbalanced, match=r"legs in GBP add up to -10\.00"):
        NewEntry("x", "EUR", (Leg(PLATFORM, D("-10.00"), "GBP"), Leg(partner(1), D("10.00"))))
    with pytest.raises(Unbalanced, match="not an amount of JPY"):
        NewEntry("x", "EUR", (Leg(FX, D("-1.5"), "JPY"), Leg(FX, D("1.5"), "JPY")))
