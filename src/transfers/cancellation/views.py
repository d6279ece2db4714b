"""How policies read in API answers (docs/rules/cancellation.md). Pure. A booking's cancellation and
amendment are read by the resource itself (``bookings/resource.py``).

Instants a traveller plans by (``free_until``) are shown in the airport's local time with its
offset, like ``pickup_datetime``; bookkeeping instants (``cancelled_at``, amendment times) in UTC,
like ``created_at``.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from transfers.cancellation.policy import FREE_UNTIL_PICKUP, Policy, from_json
from transfers.reference.airports import local_time


def stored_policy(value: Any) -> Policy:
    """A stored policy (JSON tiers), or "free until pickup" for NULL (rows sold before policies existed)."""
    return FREE_UNTIL_PICKUP if value is None else from_json(value)


def policy_view(policy: Policy, *, pickup_at: datetime, now: datetime, iata: str) -> dict[str, Any]:
    """``{"tiers": [...], "free_until": "<ISO 8601, airport time>" | null}``."""
    free_until = policy.free_until(pickup_at, now)
    return {
        "tiers": policy.public(),
        "free_until": None if free_until is None else local_time(iata, free_until).isoformat(),
    }


def money(amount: Decimal) -> str:
    return f"{amount:.2f}"
