"""The booking state machine (docs/rules/states.md): every (from, to) pair, cancellability, refunds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import product
from zoneinfo import ZoneInfo

import pytest

from transfers.bookings.state import (
    CLIENT_CANCELLABLE,
    DRIVER_VISIBLE,
    REFUNDING,
    TERMINAL,
    TRANSITIONS,
    BookingStatus,
    TransitionRefused,
    can_transition,
    check_transition,
    is_cancelable,
)

S = BookingStatus

# Written out by hand from docs/rules/states.md, not derived from the table under test.
ALLOWED: set[tuple[BookingStatus, BookingStatus]] = {
    (S.PENDING, S.PENDING_APPROVAL),  # partner answers the create with PENDING
    (S.PENDING, S.APPROVED),  # partner answers APPROVED (create, info sync or reverse API)
    (S.PENDING, S.DECLINED),  # partner refuses the create
    (S.PENDING, S.FAILED),  # create undelivered at its deadline
    (S.PENDING, S.CANCELLED),  # partner cancels through the reverse API
    (S.PENDING_APPROVAL, S.APPROVED),
    (S.PENDING_APPROVAL, S.CANCELLED),
    (S.PENDING_APPROVAL, S.DECLINED),
    (S.APPROVED, S.CANCELLED),
    (S.APPROVED, S.COMPLETED),  # pickup + 12 h passed
    (S.APPROVED, S.REFUNDED),  # an incident refunds the whole price (docs/rules/incidents.md#resolve)
    (S.COMPLETED, S.REFUNDED),  # operator refund, or an incident's refund of the whole price
}
PAIRS = list(product(BookingStatus, BookingStatus))


def test_the_status_vocabulary_is_the_specs() -> None:
    assert [s.value for s in BookingStatus] == [
        "PENDING",
        "PENDING_APPROVAL",
        "APPROVED",
        "CANCELLED",
        "FAILED",
        "DECLINED",
        "REFUNDED",
        "COMPLETED",
        "DEFAULT",
    ]
    assert all(s.value == s.name for s in BookingStatus)
    assert set(TRANSITIONS) == set(BookingStatus)  # every status has an entry, none is forgotten


@pytest.mark.parametrize(("current", "target"), PAIRS, ids=[f"{a.value}->{b.value}" for a, b in PAIRS])
def test_every_pair_of_statuses(current: BookingStatus, target: BookingStatus) -> None:
    if (current, target) in ALLOWED:
        assert can_transition(current, target)
        check_transition(current, target)  # does not raise
        assert target in TRANSITIONS[current]
    else:
        assert not can_transition(current, target)
        assert target not in TRANSITIONS[current]
        with pytest.raises(TransitionRefused) as refused:
            check_transition(current, target)
        assert (refused.value.current, refused.value.target) == (current, target)
        assert current.value in str(refused.value) and target.value in str(refused.value)


def test_the_table_holds_exactly_the_allowed_pairs() -> None:
    assert {(a, b) for a, targets in TRANSITIONS.items() for b in targets} == ALLOWED
    assert len(ALLOWED) == 12 and len(PAIRS) == 81


def test_no_status_moves_to_itself_and_default_is_unreachable() -> None:
    for status in BookingStatus:
        assert not can_transition(status, status)
        assert not can_transition(status, S.DEFAULT)
    assert TRANSITIONS[S.DEFAULT] == frozenset()


def test_terminal_statuses() -> None:
    assert frozenset({S.CANCELLED, S.FAILED, S.DECLINED, S.REFUNDED, S.DEFAULT}) == TERMINAL
    for status in TERMINAL:
        assert not any(can_transition(status, target) for target in BookingStatus)


def test_refunding_statuses_and_at_most_one_refund() -> None:
    assert frozenset({S.CANCELLED, S.DECLINED, S.FAILED, S.REFUNDED}) == REFUNDING
    # a refunding status is only ever entered from a non-refunding one, so no booking is refunded twice
    for current, target in ALLOWED:
        if target in REFUNDING:
            assert current not in REFUNDING, (current, target)

    # and on any path through the table, at most one refunding status is entered
    def longest_refunds(status: BookingStatus) -> int:
        return max((int(t in REFUNDING) + longest_refunds(t) for t in TRANSITIONS[status]), default=0)

    assert all(longest_refunds(s) <= 1 for s in BookingStatus)


def test_client_cancellable_and_driver_visible_sets() -> None:
    assert frozenset({S.PENDING_APPROVAL, S.APPROVED}) == CLIENT_CANCELLABLE
    assert all(can_transition(s, S.CANCELLED) for s in CLIENT_CANCELLABLE)
    assert frozenset({S.APPROVED, S.COMPLETED}) == DRIVER_VISIBLE


NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
WHEN = {
    "a day ahead": NOW + timedelta(days=1),
    "a second ahead": NOW + timedelta(seconds=1),
    "a microsecond ahead": NOW + timedelta(microseconds=1),
    "exactly now": NOW,
    "a microsecond ago": NOW - timedelta(microseconds=1),
    "a day ago": NOW - timedelta(days=1),
    # the same instants written in another zone compare as instants
    "ahead, in Paris time": (NOW + timedelta(minutes=5)).astimezone(ZoneInfo("Europe/Paris")),
    "past, in Paris time": (NOW - timedelta(minutes=5)).astimezone(ZoneInfo("Europe/Paris")),
    "ahead, in Honolulu time": (NOW + timedelta(minutes=5)).astimezone(ZoneInfo("Pacific/Honolulu")),
}
AHEAD = {"a day ahead", "a second ahead", "a microsecond ahead", "ahead, in Paris time", "ahead, in Honolulu time"}
CANCELABLE_CASES = list(product(BookingStatus, WHEN))


@pytest.mark.parametrize(("status", "when"), CANCELABLE_CASES, ids=[f"{s.value}-{w}" for s, w in CANCELABLE_CASES])
def test_is_cancelable(status: BookingStatus, when: str) -> None:
    expected = status in (S.PENDING_APPROVAL, S.APPROVED) and when in AHEAD
    assert is_cancelable(status, WHEN[when], NOW) is expected


def test_the_published_status_list_is_the_enum() -> None:
    """api/schemas.py spells the statuses out for the OpenAPI document: a status added to
    ``BookingStatus`` is added there too (docs/architecture/how-to-add.md, "A booking status")."""
    from typing import get_args

    from transfers.api.schemas import BookingStatus as Published

    assert list(get_args(Published)) == [s.value for s in BookingStatus]
