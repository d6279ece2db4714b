"""When to try again, until when, and how an attempt ends (docs/rules/reliability.md#outbox). Pure.

Every kind retries on a ``RetrySchedule``; the standard one (partner calls, client webhooks and
partner e-mails all use it today) is:

| attempt | wait before the next one (±20 % jitter) |
|---------|------------------------------------------|
| 1       | 10 s                                     |
| 2       | 30 s                                     |
| 3       | 2 min                                    |
| 4       | 10 min                                   |
| 5       | 30 min                                   |
| 6+      | 1 h, until the message's deadline        |

``settle`` turns an attempt's ``Verdict`` into what happens to the message: finished (delivered,
refused, or expired because the next attempt would fall past the deadline, or because the kind is
tried once) or rescheduled.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from transfers.delivery.models import DELIVERED, EXPIRED, FAILED, PENDING

BACKOFF_SECONDS = (10, 30, 120, 600, 1800)
HOURLY = 3600


class Verdict(StrEnum):
    """What one attempt came to: answered, try again, or give up."""

    DONE = "done"  # answered (a 2xx with a known answer)
    RETRY = "retry"  # timeout, connection error, 5xx, 429, an unreadable answer
    PERMANENT = "permanent"  # give up: refused (another 4xx, a body saying "status": "Error", a 410)


class Ending(StrEnum):
    """How a finished message ended, for its kind's effect."""

    ANSWERED = "answered"  # the receiver's answer was read
    REFUSED = "refused"  # a permanent refusal
    EXPIRED = "expired"  # no answer until the message's deadline (or, tried once, none at once)


@dataclass(frozen=True)
class RetrySchedule:
    """Waits after the 1st, 2nd, ... failed attempt, then ``then`` seconds each time."""

    backoff: tuple[int, ...] = BACKOFF_SECONDS
    then: int = HOURLY

    def next_attempt(self, attempts_done: int, now: datetime, *, rng: random.Random | None = None) -> datetime:
        """When to try again after ``attempts_done`` failed attempts (1-based)."""
        base = self.backoff[attempts_done - 1] if attempts_done - 1 < len(self.backoff) else self.then
        jitter = (rng or random).uniform(0.8, 1.2)
        return now + timedelta(seconds=base * jitter)


STANDARD = RetrySchedule()


def next_attempt(attempts_done: int, now: datetime, *, rng: random.Random | None = None) -> datetime:
    """The standard schedule's next attempt after ``attempts_done`` failed attempts."""
    return STANDARD.next_attempt(attempts_done, now, rng=rng)


@dataclass(frozen=True)
class Settled:
    """What an attempt does to its message: finished with ``status`` and ``ending``, or (``ending``
    None) still pending, tried again at ``retry_at``."""

    status: str
    ending: Ending | None
    retry_at: datetime | None


def settle(
    verdict: Verdict,
    *,
    attempts_done: int,
    now: datetime,
    deadline: datetime,
    schedule: RetrySchedule = STANDARD,
    once: bool = False,
) -> Settled:
    """Delivered, refused, rescheduled, or expired (the next attempt would come at or after the
    deadline; a kind tried ``once`` expires at its first failure)."""
    if verdict is Verdict.DONE:
        return Settled(DELIVERED, Ending.ANSWERED, None)
    if verdict is Verdict.PERMANENT:
        return Settled(FAILED, Ending.REFUSED, None)
    if once:
        return Settled(EXPIRED, Ending.EXPIRED, None)
    when = schedule.next_attempt(attempts_done, now)
    if when < deadline:
        return Settled(PENDING, None, when)
    return Settled(EXPIRED, Ending.EXPIRED, None)


def delivery_deadline(
    created_at: datetime, pickup_at: datetime, *, hours_after_creation: float, hours_before_pickup: float
) -> datetime:
    """docs/rules/states.md: 24 h after creation or 1 h before pickup, whichever comes first."""
    return min(created_at + timedelta(hours=hours_after_creation), pickup_at - timedelta(hours=hours_before_pickup))
