"""The failed sign-in rules, pure (docs/rules/console.md): failures for one e-mail are slowed, and after
``max_failures`` within ``failure_window`` the e-mail is refused for ``lockout`` (counted from the
failure that reached the limit), whatever password comes next.

Failures are counted per e-mail typed (known or not), so an attacker learns nothing about which
e-mails exist, and a lock-out of one e-mail leaves every other person's sign-in alone."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from transfers.webauth.realm import Realm

MAX_DELAY_SECONDS = 2.0


def locked_until(realm: Realm, failures: Sequence[datetime], now: datetime) -> datetime | None:
    """When the lock-out ends (None: not locked). ``failures``: the e-mail's recent failure times
    (at least ``failure_window + lockout`` back), any order."""
    times = sorted(failures)
    n = realm.max_failures
    until: datetime | None = None
    for i in range(n - 1, len(times)):
        if times[i] - times[i - n + 1] <= realm.failure_window:
            end = times[i] + realm.lockout
            until = end if until is None or end > until else until
    return until if until is not None and until > now else None


def delay_seconds(realm: Realm, failures: Sequence[datetime], now: datetime) -> float:
    """How long to hold a failed answer: nothing for the first ``slow_after_failures`` failures in the
    window, then 0.25 s doubling per failure up to 2 s."""
    recent = sum(1 for t in failures if now - t <= realm.failure_window)
    over = recent - realm.slow_after_failures
    if over <= 0:
        return 0.0
    return float(min(MAX_DELAY_SECONDS, 0.25 * 2 ** (over - 1)))
