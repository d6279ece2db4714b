"""Cancellation policies (docs/rules/cancellation.md). Pure: no HTTP, no SQL, no clock of its own.

A policy is a list of tiers ``{"hours_before_pickup": 24, "fee_percent": 0}``. Cancelling with
``h`` hours left to pickup costs the ``fee_percent`` of the first tier, by ``hours_before_pickup``
descending, with ``hours_before_pickup <= h``; the fee is total x percent / 100, rounded half-up
to cents, and the refund is the rest, so ``fee + refund == total`` always.

Time is compared as instants (aware datetimes, UTC inside): "24 hours before pickup" is 24 real
hours before the pickup instant, whatever the airport's offset or a DST change in between.

What makes a policy well-formed (the same rules for the operator's ``--cancellation-policy``,
a partner's search answer and a stored policy read back):

* 1 to ``MAX_TIERS`` tiers, each ``hours_before_pickup`` a whole number 0..``MAX_HOURS`` (one
  year) and each ``fee_percent`` 0..100 with at most two decimals; booleans are not numbers;
* no two tiers with the same ``hours_before_pickup``;
* a tier at 0 hours, so that every moment before pickup has a price (a policy that stops at
  "24 h: free" would leave the last day undefined);
* the fee never falls as pickup gets closer (a later cancellation never costs less): a policy
  cheaper at the last minute is almost always a typing mistake, and it would make "free until"
  meaningless.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from itertools import pairwise
from typing import Any, cast

from transfers import money
from transfers.errors import Invalid

HUNDRED = Decimal(100)
MAX_TIERS = 10
MAX_HOURS = 8760
_PERCENT_TEXT = re.compile(r"^\d{1,3}(\.\d{1,2})?$")
_HOURS_TEXT = re.compile(r"^\d{1,4}$")


class PolicyError(Invalid, ValueError):
    """A policy that is not well-formed; the message says which tier and why."""


@dataclass(frozen=True, slots=True)
class Tier:
    hours_before_pickup: int
    fee_percent: Decimal

    def public(self) -> dict[str, Any]:
        """The tier as JSON shows it: both numbers, the percent without trailing zeros (``50``, ``12.5``)."""
        percent = self.fee_percent
        shown: int | float = int(percent) if percent == percent.to_integral_value() else float(percent)
        return {"hours_before_pickup": self.hours_before_pickup, "fee_percent": shown}


@dataclass(frozen=True, slots=True)
class Quote:
    """What cancelling at one moment costs."""

    tier: Tier
    fee: Decimal
    refund: Decimal
    valid_until: datetime | None  # the last instant this tier applies; None in the last tier


_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class Policy:
    tiers: tuple[Tier, ...]  # by hours_before_pickup, descending; the last one at 0 hours
    # Derived from ``tiers`` on first use and kept: a partner's default policy is the same object search
    # after search, and each search renders it. Not part of the value: ==, hash and repr ignore them.
    _free_span: Any = field(default=_UNSET, init=False, repr=False, compare=False)
    _public_pairs: Any = field(default=_UNSET, init=False, repr=False, compare=False)

    def public(self) -> list[dict[str, Any]]:
        """Fresh dicts each time (callers own them), from the tiers' numbers worked out once."""
        pairs = self._public_pairs
        if pairs is _UNSET:
            pairs = tuple((t.hours_before_pickup, t.public()["fee_percent"]) for t in self.tiers)
            object.__setattr__(self, "_public_pairs", pairs)
        return [{"hours_before_pickup": hours, "fee_percent": percent} for hours, percent in pairs]

    def free_span(self) -> timedelta | None:
        """How long before pickup free cancellation ends (the smallest free tier's hours), None when no
        tier is free; worked out once per policy."""
        span = self._free_span
        if span is _UNSET:
            free = [t for t in self.tiers if t.fee_percent == 0]
            span = timedelta(hours=min(t.hours_before_pickup for t in free)) if free else None
            object.__setattr__(self, "_free_span", span)
        return cast("timedelta | None", span)

    def spec(self) -> str:
        """The operator's short form, ``48:0,24:50,0:100``."""
        return ",".join(f"{t.hours_before_pickup}:{t.public()['fee_percent']}" for t in self.tiers)

    def tier_at(self, pickup_at: datetime, now: datetime) -> Tier:
        """The tier in force at ``now``: the first (hours descending) with ``hours <= left``. At
        exactly ``hours`` before pickup that tier still applies; one second later the next one."""
        left = _utc(pickup_at) - _utc(now)
        for tier in self.tiers:
            if timedelta(hours=tier.hours_before_pickup) <= left:
                return tier
        return self.tiers[-1]  # past pickup: the last tier (callers refuse such cancellations anyway)

    def quote(self, total: Decimal, pickup_at: datetime, now: datetime, currency: str) -> Quote:
        tier = self.tier_at(pickup_at, now)
        fee = fee_for(total, tier.fee_percent, currency)
        index = self.tiers.index(tier)
        last = index == len(self.tiers) - 1
        valid_until = None if last else _utc(pickup_at) - timedelta(hours=tier.hours_before_pickup)
        return Quote(tier, fee, total - fee, valid_until)

    def free_until(self, pickup_at: datetime, now: datetime) -> datetime | None:
        """The last instant cancelling is free, or None when no tier is free or that moment has passed."""
        span = self.free_span()
        if span is None:
            return None
        until = _utc(pickup_at) - span
        # ``astimezone(UTC)`` of a UTC datetime is that datetime: the clock's ``now`` skips the call
        return until if until >= (now if now.tzinfo is UTC else _utc(now)) else None

    def is_free(self, pickup_at: datetime, now: datetime) -> bool:
        return self.tier_at(pickup_at, now).fee_percent == 0


def _utc(moment: datetime) -> datetime:
    """Aware datetimes sharing a ZoneInfo subtract as wall clocks (23 or 25 "hours" across a DST
    change): every sum and difference here is taken in UTC, so hours are real hours."""
    if moment.tzinfo is None:
        raise ValueError("cancellation times must be timezone-aware")
    return moment.astimezone(UTC)


FREE_UNTIL_PICKUP = Policy((Tier(0, Decimal(0)),))


def fee_for(total: Decimal, percent: Decimal, currency: str) -> Decimal:
    """total x percent / 100, rounded half-up to the currency's decimals (docs/rules/cancellation.md)."""
    return money.round_half_up(total * percent / HUNDRED, currency)


def _hours(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(f"{where}: hours_before_pickup must be a whole number of hours")
    if not 0 <= value <= MAX_HOURS:
        raise PolicyError(f"{where}: hours_before_pickup must be between 0 and {MAX_HOURS}")
    return value


def _percent(value: Any, where: str) -> Decimal:
    """0..100 with at most two decimals, from a JSON number or a decimal string."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise PolicyError(f"{where}: fee_percent must be a number")
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise PolicyError(f"{where}: fee_percent must be a finite number")
        text = format(Decimal(repr(value)), "f")
    else:
        text = format(value, "f") if isinstance(value, Decimal) else str(value).strip()
    if text.startswith("-"):
        raise PolicyError(f"{where}: fee_percent must be between 0 and 100")
    if "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    if not _PERCENT_TEXT.match(text):
        raise PolicyError(f"{where}: fee_percent must be between 0 and 100 with at most two decimals")
    try:
        percent = Decimal(text)
    except InvalidOperation:
        raise PolicyError(f"{where}: fee_percent is not a number") from None
    if percent > HUNDRED:
        raise PolicyError(f"{where}: fee_percent must be between 0 and 100")
    return percent


def build(tiers: Sequence[tuple[int, Decimal]]) -> Policy:
    """A policy from already typed tiers, checked as a whole (see the module docstring)."""
    if not tiers:
        raise PolicyError("a cancellation policy needs at least one tier")
    if len(tiers) > MAX_TIERS:
        raise PolicyError(f"a cancellation policy has at most {MAX_TIERS} tiers")
    ordered = sorted((Tier(h, p) for h, p in tiers), key=lambda t: t.hours_before_pickup, reverse=True)
    hours = [t.hours_before_pickup for t in ordered]
    if len(set(hours)) != len(hours):
        raise PolicyError("two tiers have the same hours_before_pickup")
    if hours[-1] != 0:
        raise PolicyError("a cancellation policy needs a tier at 0 hours (what cancelling just before pickup costs)")
    for earlier, later in pairwise(ordered):
        if later.fee_percent < earlier.fee_percent:
            raise PolicyError(
                f"the fee may not fall as pickup gets closer ({earlier.hours_before_pickup} h: "
                f"{earlier.public()['fee_percent']}%, {later.hours_before_pickup} h: "
                f"{later.public()['fee_percent']}%)"
            )
    return Policy(tuple(ordered))


def from_json(value: Any) -> Policy:
    """A policy from its JSON form, a list of ``{"hours_before_pickup", "fee_percent"}`` objects
    (a partner's search answer, a stored policy). Other keys in a tier are refused: a tier that
    says more than we understand is not one to charge a client by."""
    if not isinstance(value, list):
        raise PolicyError("a cancellation policy is a list of tiers")
    if len(value) > MAX_TIERS:
        raise PolicyError(f"a cancellation policy has at most {MAX_TIERS} tiers")
    tiers = []
    for index, item in enumerate(value):
        where = f"tier {index + 1}"
        if not isinstance(item, dict) or set(item) != {"hours_before_pickup", "fee_percent"}:
            raise PolicyError(f'{where}: a tier is exactly {{"hours_before_pickup": int, "fee_percent": number}}')
        tiers.append((_hours(item["hours_before_pickup"], where), _percent(item["fee_percent"], where)))
    return build(tiers)


def parse_spec(text: str) -> Policy:
    """The operator's short form: ``HOURS:PERCENT`` pairs separated by commas, e.g.
    ``48:0,24:50,0:100`` (any order; spaces around the parts are ignored)."""
    parts = [part.strip() for part in text.split(",")]
    if not text.strip() or any(not part for part in parts):
        raise PolicyError("write the policy as HOURS:PERCENT pairs separated by commas, e.g. 24:0,0:100")
    if len(parts) > MAX_TIERS:
        raise PolicyError(f"a cancellation policy has at most {MAX_TIERS} tiers")
    tiers = []
    for index, part in enumerate(parts):
        where = f"tier {index + 1} ({part!r})"
        hours_text, sep, percent_text = part.partition(":")
        if not sep:
            raise PolicyError(f"{where}: expected HOURS:PERCENT, e.g. 24:50")
        hours_text = hours_text.strip()
        if not _HOURS_TEXT.match(hours_text):
            raise PolicyError(f"{where}: hours must be a whole number between 0 and {MAX_HOURS}")
        tiers.append((_hours(int(hours_text), where), _percent(percent_text.strip(), where)))
    return build(tiers)
