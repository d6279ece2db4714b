"""The search's time arithmetic with fewer conversions (one pickup-window rule, ``now`` made UTC once) gives
what the plain computation gave: the pickup's local time and refusals across DST changes (spring-forward
gaps, autumn overlaps, Lord Howe's 30-minute shift, Kathmandu's +05:45), the lead-time and days-ahead
window to the microsecond, and the cancellation views' free-until instants and their text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from transfers.cancellation.policy import FREE_UNTIL_PICKUP, Policy, Tier, _utc, parse_spec
from transfers.cancellation.views import policy_view
from transfers.errors import Invalid
from transfers.reference.airports import Airport, find_airport, local_time
from transfers.search.rules import SearchLimits, _pickup_at

AIRPORTS = ("LHR", "JFK", "LDH", "KTM", "SYD")
LIMITS = SearchLimits(min_lead=timedelta(hours=2), max_ahead=timedelta(days=30), max_travelers=16)


def _plain_pickup_at(value: str, airport: Airport | None, now: datetime, limits: SearchLimits) -> datetime:
    """``_pickup_at``'s conversions as they were before the eighth pass (its format checks aside)."""
    parsed = datetime.fromisoformat(value)
    zone = airport.tz if airport is not None else now.tzinfo
    if parsed.tzinfo is None:
        local = parsed.replace(tzinfo=zone)
        if local.astimezone(now.tzinfo).astimezone(zone).replace(tzinfo=None) != parsed:
            raise Invalid("gap")
    else:
        local = parsed.astimezone(zone)
    if not now + limits.min_lead <= local <= now + limits.max_ahead:
        raise Invalid("window")
    return local


def _transitions(zone: ZoneInfo, year: int) -> list[datetime]:
    """The UTC instants (to the quarter hour) at which ``zone``'s offset changes during ``year``."""
    found, moment = [], datetime(year, 1, 1, tzinfo=UTC)
    before = moment.astimezone(zone).utcoffset()
    while moment.year == year:
        moment += timedelta(minutes=15)
        offset = moment.astimezone(zone).utcoffset()
        if offset != before:
            found.append(moment)
            before = offset
    return found


def _airport(code: str) -> Airport:
    airport = find_airport(code)
    assert airport is not None
    return airport


def _around(code: str) -> list[datetime]:
    """UTC instants near each of the airport's 2026 DST changes (or a few ordinary days without any)."""
    zone = _airport(code).tz
    centres = _transitions(zone, 2026) or [datetime(2026, m, 15, 12, tzinfo=UTC) for m in (1, 6, 11)]
    assert code != "KTM" or not _transitions(zone, 2026)
    assert code == "KTM" or len(centres) == 2
    return [centre + timedelta(minutes=step) for centre in centres for step in range(-240, 241, 15)]


def _outcome(rule: Any, *args: Any) -> tuple[str, Any]:
    try:
        result = rule(*args)
    except Invalid:
        return ("invalid", None)
    return ("ok", (result, result.tzinfo, result.fold, result.isoformat()))


@pytest.mark.parametrize("code", AIRPORTS)
def test_pickup_at_matches_the_plain_rule_across_dst(code: str) -> None:
    airport = _airport(code)
    checked = refused = 0
    for centre in _around(code):
        local = centre.astimezone(airport.tz)
        walls = {local.replace(tzinfo=None) + timedelta(minutes=m) for m in (-45, -30, -15, 0, 15, 30, 45)}
        texts = [w.isoformat(timespec="minutes") for w in walls] + [w.isoformat() + ".5" for w in walls]
        texts += [centre.isoformat(), centre.astimezone(timezone(timedelta(hours=-4))).isoformat()]
        texts.append(centre.strftime("%Y-%m-%dT%H:%M:%SZ"))
        # the window's edges: now such that the pickup is exactly at, just inside or just outside them
        for now in (
            centre - LIMITS.min_lead,
            centre - LIMITS.min_lead + timedelta(microseconds=1),
            centre - LIMITS.min_lead - timedelta(seconds=1),
            centre - LIMITS.max_ahead,
            centre - LIMITS.max_ahead - timedelta(microseconds=1),
            centre - timedelta(days=3),
        ):
            for text in texts:
                fast = _outcome(_pickup_at, text, airport, now, LIMITS)
                plain = _outcome(_plain_pickup_at, text, airport, now, LIMITS)
                assert fast == plain, (code, text, now)
                checked += 1
                refused += fast[0] == "invalid"
    assert checked > 1000 and 0 < refused < checked


@pytest.mark.parametrize(("zone", "wall", "gap"), [
    ("Europe/London", "2026-03-29T01:30", True),
    ("Europe/London", "2026-10-25T01:30", False),
    ("America/New_York", "2026-03-08T02:15", True),
    ("America/New_York", "2026-11-01T01:45", False),
    ("Australia/Lord_Howe", "2026-10-04T02:15", True),
    ("Australia/Lord_Howe", "2026-04-05T01:45", False),
])  # fmt: skip
def test_gaps_refused_and_overlaps_read_as_the_first_occurrence(zone: str, wall: str, gap: bool) -> None:
    airport = next(_airport(c) for c in AIRPORTS if str(_airport(c).tz) == zone)
    when = datetime.fromisoformat(wall).replace(tzinfo=airport.tz)
    now = when.astimezone(UTC) - timedelta(days=1)
    if gap:
        with pytest.raises(Invalid):
            _pickup_at(wall, airport, now, LIMITS)
        return
    got = _pickup_at(wall, airport, now, LIMITS)
    assert got.fold == 0 and got.utcoffset() == when.replace(fold=0).utcoffset() != when.replace(fold=1).utcoffset()


def test_a_now_outside_utc_gives_the_plain_rule_s_answers() -> None:
    airport = _airport("LHR")
    for now in (
        datetime(2026, 10, 24, 12, tzinfo=ZoneInfo("Europe/Paris")),
        datetime(2026, 10, 24, 7, tzinfo=timezone(timedelta(hours=-5))),
    ):
        for text in ("2026-10-25T01:30", "2026-10-25T01:30+00:00", "2026-10-24T13:59", "2026-10-24T14:00"):
            assert _outcome(_pickup_at, text, airport, now, LIMITS) == _outcome(
                _plain_pickup_at, text, airport, now, LIMITS
            )


def test_without_an_airport_the_time_is_read_in_now_s_zone() -> None:
    """A search without an airport is refused later (1323); until then its time is read as the plain rule
    reads it, in ``now``'s zone."""
    for now in (
        datetime(2026, 10, 24, 12, tzinfo=UTC),
        datetime(2026, 10, 24, 12, tzinfo=timezone(timedelta(hours=3))),
    ):
        for text in ("2026-10-25T01:30", "2026-10-25T01:30+00:00", "2026-10-24T13:59", "2026-10-24T15:00"):
            assert _outcome(_pickup_at, text, None, now, LIMITS) == _outcome(_plain_pickup_at, text, None, now, LIMITS)


POLICIES = [
    FREE_UNTIL_PICKUP,
    parse_spec("48:0,24:50,0:100"),
    parse_spec("24:50,0:100"),
    parse_spec("72:0,25:0,1:40,0:100"),
    parse_spec("8760:0,0:12.5"),
]


def _plain_view(policy: Policy, pickup_at: datetime, now: datetime, iata: str) -> dict[str, Any]:
    free = [t for t in policy.tiers if t.fee_percent == 0]
    until = None
    if free:
        until = _utc(pickup_at) - timedelta(hours=min(t.hours_before_pickup for t in free))
        until = until if until >= _utc(now) else None
    return {
        "tiers": [t.public() for t in policy.tiers],
        "free_until": None if until is None else local_time(iata, until).isoformat(),
    }


@pytest.mark.parametrize("code", AIRPORTS)
def test_policy_view_matches_the_plain_computation(code: str) -> None:
    zone = _airport(code).tz
    shown = 0
    for centre in _around(code):
        pickup = centre.astimezone(zone)
        for policy in POLICIES:
            span = policy.free_span()
            for now in (centre - timedelta(days=1), centre, centre + timedelta(seconds=1)) + (
                () if span is None else (centre - span, centre - span + timedelta(microseconds=1))
            ):
                for when in (now, now.astimezone(zone), now.astimezone(timezone(timedelta(hours=5, minutes=45)))):
                    fast = policy_view(policy, pickup_at=pickup, now=when, iata=code)
                    assert fast == _plain_view(policy, pickup, when, code)
                    assert fast["tiers"] is not policy_view(policy, pickup_at=pickup, now=when, iata=code)["tiers"]
                    shown += fast["free_until"] is not None
    assert shown > 100


def test_policy_derived_values_are_not_part_of_its_value() -> None:
    fresh = parse_spec("48:0,24:50,0:100")
    used = parse_spec("48:0,24:50,0:100")
    assert used.free_span() == timedelta(hours=48) and used.public()[1] == {
        "hours_before_pickup": 24,
        "fee_percent": 50,
    }
    assert fresh == used and hash(fresh) == hash(used) and repr(fresh) == repr(used)
    assert repr(used) == (
        "Policy(tiers=(Tier(hours_before_pickup=48, fee_percent=Decimal('0')), "
        "Tier(hours_before_pickup=24, fee_percent=Decimal('50')), "
        "Tier(hours_before_pickup=0, fee_percent=Decimal('100'))))"
    )
    assert Policy((Tier(0, Decimal(100)),)).free_span() is None


def test_free_until_keeps_its_refusal_of_naive_times() -> None:
    naive = datetime(2026, 11, 29, 10)
    with pytest.raises(ValueError, match="timezone-aware"):
        FREE_UNTIL_PICKUP.free_until(naive, datetime(2026, 11, 26, tzinfo=UTC))
    with pytest.raises(ValueError, match="timezone-aware"):
        FREE_UNTIL_PICKUP.free_until(datetime(2026, 11, 29, tzinfo=UTC), naive)
    assert parse_spec("24:50,0:100").free_until(naive, naive) is None  # as before: no free tier, nothing compared
