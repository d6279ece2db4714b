"""The cancellation policy rules of docs/rules/cancellation.md, table-driven (cancellation/policy.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from transfers.cancellation.policy import (
    FREE_UNTIL_PICKUP,
    PolicyError,
    Tier,
    fee_for,
    from_json,
    parse_spec,
)

PICKUP = datetime(2027, 6, 10, 12, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
LUXURY = "48:0,24:50,0:100"


@pytest.mark.parametrize(
    ("spec", "left", "percent"),
    [
        # at exactly the tier's hours that tier applies; one second later the next one does
        (LUXURY, timedelta(hours=72), 0),
        (LUXURY, timedelta(hours=48) + SECOND, 0),
        (LUXURY, timedelta(hours=48), 0),
        (LUXURY, timedelta(hours=48) - SECOND, 50),
        (LUXURY, timedelta(hours=24) + SECOND, 50),
        (LUXURY, timedelta(hours=24), 50),
        (LUXURY, timedelta(hours=24) - SECOND, 100),
        (LUXURY, SECOND, 100),
        ("24:0,0:100", timedelta(hours=24), 0),
        ("24:0,0:100", timedelta(hours=24) - SECOND, 100),
        ("0:0", SECOND, 0),
        ("0:12.5", timedelta(days=300), Decimal("12.5")),
    ],
)
def test_fee_percent_at_each_boundary(spec: str, left: timedelta, percent: Any) -> None:
    assert parse_spec(spec).tier_at(PICKUP, PICKUP - left).fee_percent == Decimal(percent)


@pytest.mark.parametrize(
    ("total", "percent", "currency", "fee"),
    [
        ("56.05", "50", "EUR", "28.03"),  # 28.025 rounds half-up
        ("56.05", "0", "EUR", "0.00"),
        ("56.05", "100", "EUR", "56.05"),
        ("10.00", "33.33", "EUR", "3.33"),
        ("0.01", "50", "EUR", "0.01"),
        ("99999.99", "0.01", "EUR", "10.00"),
        ("10011", "50", "JPY", "5006"),  # 5005.5 rounds half-up to the yen
        ("20.465", "50", "KWD", "10.233"),  # 10.2325 to the fils
    ],
)
def test_fee_rounds_half_up_and_fee_plus_refund_is_total(total: str, percent: str, currency: str, fee: str) -> None:
    assert fee_for(Decimal(total), Decimal(percent), currency) == Decimal(fee)
    assert fee_for(Decimal(total), Decimal(percent), currency).as_tuple().exponent == -len(fee.partition(".")[2])
    quote = parse_spec(f"0:{percent}").quote(Decimal(total), PICKUP, PICKUP - timedelta(hours=1), currency)
    assert quote.fee == Decimal(fee)
    assert quote.fee + quote.refund == Decimal(total)


def test_quote_valid_until_is_the_last_instant_of_the_tier() -> None:
    policy = parse_spec(LUXURY)
    total = Decimal("100.00")
    early = policy.quote(total, PICKUP, PICKUP - timedelta(hours=60), "EUR")
    assert (early.fee, early.refund, early.valid_until) == (Decimal("0.00"), total, PICKUP - timedelta(hours=48))
    middle = policy.quote(total, PICKUP, PICKUP - timedelta(hours=30), "EUR")
    assert (middle.fee, middle.valid_until) == (Decimal("50.00"), PICKUP - timedelta(hours=24))
    last = policy.quote(total, PICKUP, PICKUP - timedelta(hours=2), "EUR")
    assert (last.fee, last.valid_until) == (total, None)


def test_free_until() -> None:
    policy = parse_spec(LUXURY)
    assert policy.free_until(PICKUP, PICKUP - timedelta(days=5)) == PICKUP - timedelta(hours=48)
    assert policy.free_until(PICKUP, PICKUP - timedelta(hours=48)) == PICKUP - timedelta(hours=48)
    assert policy.free_until(PICKUP, PICKUP - timedelta(hours=48) + SECOND) is None  # the window has passed
    assert parse_spec("24:10,0:100").free_until(PICKUP, PICKUP - timedelta(days=5)) is None  # no free tier
    assert FREE_UNTIL_PICKUP.free_until(PICKUP, PICKUP - SECOND) == PICKUP


def test_dst_change_week_counts_real_hours() -> None:
    """London moves to BST on 2027-03-28 at 01:00 UTC. A pickup at 14:00 local that day (13:00 UTC):
    24 real hours before it is 13:00 local (GMT) the day before, not 14:00."""
    london = ZoneInfo("Europe/London")
    pickup = datetime(2027, 3, 28, 14, 0, tzinfo=london)
    boundary = datetime(2027, 3, 27, 13, 0, tzinfo=UTC)
    policy = parse_spec("24:0,0:100")
    assert policy.tier_at(pickup, boundary).fee_percent == 0
    assert policy.tier_at(pickup, boundary - SECOND).fee_percent == 0
    assert policy.tier_at(pickup, boundary + SECOND).fee_percent == 100
    free = policy.free_until(pickup, boundary - timedelta(days=2))
    assert free == boundary
    assert free is not None and free.astimezone(london).isoformat() == "2027-03-27T13:00:00+00:00"
    # and in autumn (back to GMT on 2027-10-31 at 01:00 UTC): 24 h before 10:00 GMT is 11:00 BST
    autumn = datetime(2027, 10, 31, 10, 0, tzinfo=london)
    until = policy.free_until(autumn, autumn - timedelta(days=3))
    assert until is not None and until.astimezone(london).isoformat() == "2027-10-30T11:00:00+01:00"


@pytest.mark.parametrize(
    ("spec", "tiers"),
    [
        ("24:0,0:100", [(24, 0), (0, 100)]),
        ("0:100, 24:0", [(24, 0), (0, 100)]),  # any order, spaces ignored
        ("48:0,24:50,0:100", [(48, 0), (24, 50), (0, 100)]),
        ("8760:0,0:99.99", [(8760, 0), (0, Decimal("99.99"))]),
        ("0:12.50", [(0, Decimal("12.5"))]),
    ],
)
def test_parse_spec(spec: str, tiers: list[tuple[int, Any]]) -> None:
    policy = parse_spec(spec)
    assert policy.tiers == tuple(Tier(h, Decimal(p)) for h, p in tiers)
    assert parse_spec(policy.spec()) == policy


@pytest.mark.parametrize(
    "spec",
    [
        "",
        " ",
        ",",
        "24:0,",
        "24",
        "24:",
        ":50",
        "abc",
        "24:0;0:100",
        "-1:0,0:100",
        "24:-5,0:100",
        "1.5:0,0:100",
        "24:0,0:100.5",
        "0:12.345",
        "0:101",
        "8761:0,0:100",
        "24:0,24:50,0:100",  # the same hours twice
        "24:0",  # no tier at 0 hours
        "24:50,0:10",  # cheaper closer to pickup
        ",".join(f"{h}:0" for h in range(11)),  # 11 tiers
        "0:1e2",
        "0:NaN",
        "0:inf",
        "0x10:0",
    ],
)
def test_parse_spec_refuses(spec: str) -> None:
    with pytest.raises(PolicyError):
        parse_spec(spec)


@pytest.mark.parametrize(
    "value",
    [
        None,
        {},
        "24:0,0:100",
        [],
        [{"hours_before_pickup": 0}],
        [{"hours_before_pickup": 0, "fee_percent": 0, "extra": 1}],
        [{"hours_before_pickup": True, "fee_percent": 0}],
        [{"hours_before_pickup": 0, "fee_percent": False}],
        [{"hours_before_pickup": 0.5, "fee_percent": 0}],
        [{"hours_before_pickup": 24.0, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 0}],
        [{"hours_before_pickup": "24", "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 0}],
        [{"hours_before_pickup": -24, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 0}],
        [{"hours_before_pickup": 0, "fee_percent": -1}],
        [{"hours_before_pickup": 0, "fee_percent": 100.001}],
        [{"hours_before_pickup": 0, "fee_percent": 12.345}],
        [{"hours_before_pickup": 0, "fee_percent": None}],
        [{"hours_before_pickup": 0, "fee_percent": float("nan")}],
        [{"hours_before_pickup": 10**12, "fee_percent": 0}],
        [{"hours_before_pickup": h, "fee_percent": 0} for h in range(11)],
        ["24:0"],
    ],
)
def test_from_json_refuses(value: Any) -> None:
    with pytest.raises(PolicyError):
        from_json(value)


def test_from_json_accepts_numbers_and_decimal_strings_and_round_trips() -> None:
    policy = from_json(
        [{"hours_before_pickup": 0, "fee_percent": "100"}, {"hours_before_pickup": 24, "fee_percent": 12.5}]
    )
    assert policy.public() == [
        {"hours_before_pickup": 24, "fee_percent": 12.5},
        {"hours_before_pickup": 0, "fee_percent": 100},
    ]
    assert from_json(policy.public()) == policy
