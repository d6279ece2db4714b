"""Delivery policy (docs/rules/reliability.md#outbox): what an answer means, and when to try again. Pure.

| attempt | wait before the next one (±20 % jitter) |
|---------|------------------------------------------|
| 1       | 10 s                                     |
| 2       | 30 s                                     |
| 3       | 2 min                                    |
| 4       | 10 min                                   |
| 5       | 30 min                                   |
| 6+      | 1 h, until the message's deadline        |
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from enum import StrEnum

from transfers.partners.client import CallResult

BACKOFF_SECONDS = (10, 30, 120, 600, 1800)
HOURLY = 3600


class Verdict(StrEnum):
    DONE = "done"  # 2xx with a known answer
    RETRY = "retry"  # timeout, connection error, 5xx, 429, an unreadable 2xx
    PERMANENT = "permanent"  # other 4xx, or a body saying "status": "Error"


def verdict(result: CallResult) -> Verdict:
    body = result.body
    if isinstance(body, dict) and body.get("status") == "Error" and (result.ok or result.outcome == "http_error"):
        if result.http_status is not None and (result.http_status == 429 or result.http_status >= 500):
            return Verdict.RETRY
        return Verdict.PERMANENT
    if result.ok:
        return Verdict.DONE
    if result.outcome == "http_error" and result.http_status is not None:
        if result.http_status == 429 or result.http_status >= 500:
            return Verdict.RETRY
        return Verdict.PERMANENT
    return Verdict.RETRY


def next_attempt(attempts_done: int, now: datetime, *, rng: random.Random | None = None) -> datetime:
    """When to try again after ``attempts_done`` failed attempts (1-based)."""
    base = BACKOFF_SECONDS[attempts_done - 1] if attempts_done - 1 < len(BACKOFF_SECONDS) else HOURLY
    jitter = (rng or random).uniform(0.8, 1.2)
    return now + timedelta(seconds=base * jitter)


def delivery_deadline(
    created_at: datetime, pickup_at: datetime, *, hours_after_creation: float, hours_before_pickup: float
) -> datetime:
    """docs/rules/states.md: 24 h after creation or 1 h before pickup, whichever comes first."""
    return min(created_at + timedelta(hours=hours_after_creation), pickup_at - timedelta(hours=hours_before_pickup))
