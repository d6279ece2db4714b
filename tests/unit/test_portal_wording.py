"""The portal's counts, percentages, statuses and accept-by time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from transfers.portal.wording import accept_by, percent, status_words
from transfers.webauth.formats import counted


@pytest.mark.parametrize(
    ("count", "noun", "text"),
    [(1, "suitcase", "1 suitcase"), (0, "suitcase", "0 suitcases"), (2, "suitcase", "2 suitcases"),
     (1, "child", "1 child"), (3, "child", "3 children"), (1, "small bag", "1 small bag"), (2, "adult", "2 adults")],
)  # fmt: skip
def test_counts_take_the_right_plural(count: int, noun: str, text: str) -> None:
    assert counted(count, noun) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(Decimal("10.000"), "10 %"), (Decimal("12.500"), "12.5 %"), (Decimal("0"), "0 %"), (Decimal("7.25"), "7.25 %")],
)
def test_markup_reads_as_people_write_it(value: Decimal, text: str) -> None:
    assert percent(value) == text


def test_statuses_in_words() -> None:
    assert status_words("PENDING_APPROVAL") == "Waiting for you to accept"
    assert status_words("APPROVED") == "Accepted" and status_words("DECLINED") == "Declined"


def test_accept_by_is_the_earlier_of_the_two_limits() -> None:
    created = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)
    far = created + timedelta(days=3)
    assert accept_by(created, far, accept_hours=4, before_pickup_hours=2) == created + timedelta(hours=4)
    soon = created + timedelta(hours=5)
    assert accept_by(created, soon, accept_hours=4, before_pickup_hours=2) == soon - timedelta(hours=2)
