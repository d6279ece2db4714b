"""The sign-in throttles, pure (docs/rules/console.md, docs/operations/security.md#sign-in).

* **Per client address**: at most ``Realm.attempts_per_address`` (10, ``TRANSFERS_SIGNIN_ATTEMPTS_PER_MINUTE``)
  sign-in attempts a minute from one address,
  every signed-in area together; more are refused before any password is hashed, so a burst of
  anonymous sign-ins cannot spend the machine's CPU on argon2 (each check costs tens of milliseconds of
  a core and 64 MiB). An IPv6 address counts by its /64, the block one subscriber usually holds.
* **Per e-mail and address**: failures for one e-mail from one address are slowed, and after
  ``max_failures`` within ``failure_window`` that e-mail is refused *from that address* for ``lockout``
  (counted from the failure that reached the limit), whatever password comes next. Counted per
  address, so nobody can lock a person out from elsewhere.

Failures are counted per e-mail typed (known or not), so an attacker learns nothing about which
e-mails exist, and a lock-out of one e-mail leaves every other person's sign-in alone."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from transfers.webauth.realm import Realm

MAX_DELAY_SECONDS = 2.0
ADDRESS_WINDOW = timedelta(minutes=1)
UNKNOWN_ADDRESS = "unknown"
MAX_ADDRESS_CHARS = 64


def address_key(host: str | None) -> str:
    """What the per-address throttle counts by: the IPv4 address, an IPv6 address's /64 (an IPv4-mapped
    IPv6 address as its IPv4), anything else cut to 64 characters (``unknown`` for none)."""
    if not host:
        return UNKNOWN_ADDRESS
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:MAX_ADDRESS_CHARS]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def address_retry_after(attempts: Sequence[datetime], now: datetime, limit: int) -> int | None:
    """Seconds until one more attempt from the address is admitted (None: now), at ``limit`` a minute.
    ``attempts``: the address's admitted attempts within ``ADDRESS_WINDOW`` before ``now``, any order."""
    times = sorted(t for t in attempts if now - t < ADDRESS_WINDOW)
    if len(times) < limit:
        return None
    frees_at = times[len(times) - limit] + ADDRESS_WINDOW
    # At most the window: an attempt stamped a moment after ``now`` (a parallel one that took its turn
    # first, another process's clock) never asks for more than a minute.
    return max(1, min(math.ceil((frees_at - now).total_seconds()), int(ADDRESS_WINDOW.total_seconds())))


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
