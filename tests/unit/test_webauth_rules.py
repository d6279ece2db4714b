"""The failed sign-in rules (docs/rules/console.md) and password hashing, as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from transfers.operators.models import CAPABILITIES, Capability, Operator, OperatorStatus, Role
from transfers.webauth.passwords import hash_password, password_problem, verify_password
from transfers.webauth.realm import Realm
from transfers.webauth.throttle import address_key, address_retry_after, delay_seconds, locked_until

REALM = Realm(name="console", cookie_name="c", path="/console", login_path="/console/login", secure_cookie=True)
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def minutes_ago(*values: float) -> list[datetime]:
    return [NOW - timedelta(minutes=v) for v in values]


def test_five_failures_within_15_minutes_lock_for_15_minutes_from_the_fifth() -> None:
    assert locked_until(REALM, minutes_ago(4, 3, 2, 1), NOW) is None
    assert locked_until(REALM, minutes_ago(5, 4, 3, 2, 1), NOW) == NOW - timedelta(minutes=1) + timedelta(minutes=15)
    # spread over more than 15 minutes: no lock
    assert locked_until(REALM, minutes_ago(20, 14, 10, 5, 1), NOW) is None
    # the fifth failure was 16 minutes ago: the lock has ended
    assert locked_until(REALM, minutes_ago(20, 19, 18, 17, 16), NOW) is None
    # the order the rows come in does not matter
    assert locked_until(REALM, minutes_ago(1, 3, 5, 2, 4), NOW) is not None


def test_failures_are_slowed_after_the_first() -> None:
    assert delay_seconds(REALM, minutes_ago(0), NOW) == 0
    assert delay_seconds(REALM, minutes_ago(1, 0), NOW) == 0.25
    assert delay_seconds(REALM, minutes_ago(2, 1, 0), NOW) == 0.5
    assert delay_seconds(REALM, minutes_ago(*range(10)), NOW) == 2.0
    assert delay_seconds(REALM, minutes_ago(40, 30, 20, 0), NOW) == 0  # old failures do not count


def test_passwords_are_argon2id_and_verified_in_constant_shape() -> None:
    hashed = hash_password("correct horse battery")
    # Production's cost, RFC 9106's second set (the tests outside tests/unit hash cheaply: tests/conftest.py)
    assert hashed.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert verify_password(hashed, "correct horse battery")
    assert not verify_password(hashed, "correct horse batterY")
    assert not verify_password(None, "anything")
    assert not verify_password("not a hash", "anything")
    assert not verify_password(hashed, "x" * 5000)
    assert password_problem("short") is not None
    assert password_problem("long enough password") is None


def test_support_reads_cancels_and_retries_but_never_moves_money() -> None:
    support = Operator(1, "s@example.com", Role.SUPPORT, OperatorStatus.ACTIVE)
    admin = Operator(2, "a@example.com", Role.ADMIN, OperatorStatus.ACTIVE)
    assert support.may(Capability.CANCEL_BOOKING) and support.may(Capability.RETRY_DELIVERY)
    for capability in (
        Capability.MOVE_MONEY,
        Capability.MANAGE_CLIENTS,
        Capability.MANAGE_PARTNERS,
        Capability.MANAGE_OPERATORS,
    ):
        assert not support.may(capability) and admin.may(capability)
    assert CAPABILITIES[Role.ADMIN] == frozenset(Capability)
    disabled = Operator(3, "d@example.com", Role.ADMIN, OperatorStatus.DISABLED)
    assert not any(disabled.may(c) for c in Capability)


def test_the_address_a_sign_in_counts_by() -> None:
    assert address_key("203.0.113.9") == "203.0.113.9"
    assert address_key("::ffff:203.0.113.9") == "203.0.113.9"  # IPv4 through an IPv6 socket
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key(None) == address_key("") == "unknown"
    assert address_key("testclient") == "testclient" and len(address_key("x" * 500)) == 64


def test_an_address_waits_until_the_oldest_of_its_minute_leaves_it() -> None:
    seconds = [NOW - timedelta(seconds=s) for s in (59, 50, 40, 30, 20, 10, 5, 4, 3, 2)]
    assert address_retry_after(seconds[1:], NOW, 10) is None  # nine in the minute: the tenth is admitted
    assert address_retry_after(seconds, NOW, 10) == 1  # the oldest leaves in a second
    assert address_retry_after([*seconds, NOW - timedelta(seconds=61)], NOW, 10) == 1  # older ones do not count
    assert address_retry_after(seconds[5:], NOW, 5) == 50
    ahead = [NOW + timedelta(seconds=1)] * 10  # stamped a moment after this attempt's "now"
    assert address_retry_after(ahead, NOW, 10) == 60
