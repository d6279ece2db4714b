"""Partner health counting (partners/health.py) and double signatures (partners/signing.py): pure."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from transfers.db.tables import LATENCY_BOUNDS_MS, SEARCH_OUTCOMES
from transfers.partners import health
from transfers.partners.client import PartnerEndpoint
from transfers.partners.health import HealthBuffer, Tally, p95_ms
from transfers.partners.signing import new_signing_secret, signature_headers, verify

T0 = datetime(2026, 11, 23, 17, 4, 59, 900_000, tzinfo=UTC)


def buckets_of(*durations: int) -> list[int]:
    tally = Tally()
    for duration in durations:
        tally.add(0, duration)
    return tally.buckets


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        ((), None),
        ((10,), 10),  # capped at the slowest call, not the bucket's bound (25)
        ((10,) * 95 + (2500,) * 5, 25),  # exactly 95 % fast: p95 is the fast bucket
        ((10,) * 94 + (2500,) * 6, 2500),  # one more slow call: p95 moves to the slow bucket, capped at max
        ((10,) * 94 + (2100,) * 6, 2100),
        ((10,) * 90 + (2100,) * 4 + (2999,) * 6, 2999),
        ((40,) * 19 + (60,), 50),  # rank 19 of 20 is in the 26..50 bucket
        ((9000,) * 3, 9000),  # beyond the last bound: the maximum
        ((25, 26, 50, 51), 51),
    ],
)
def test_p95_at_bucket_resolution(durations: tuple[int, ...], expected: int | None) -> None:
    assert p95_ms(buckets_of(*durations), max(durations, default=0)) == expected


@pytest.mark.parametrize(
    ("duration", "bucket"),
    [
        (0, 0),
        (25, 0),
        (26, 1),
        (50, 1),
        (3000, LATENCY_BOUNDS_MS.index(3000)),
        (5000, len(LATENCY_BOUNDS_MS) - 1),
        (5001, len(LATENCY_BOUNDS_MS)),
        (10**9, len(LATENCY_BOUNDS_MS)),
    ],
)
def test_bucket_bounds_are_inclusive(duration: int, bucket: int) -> None:
    counts = buckets_of(duration)
    assert counts.index(1) == bucket and sum(counts) == 1


def test_record_counts_per_partner_and_minute() -> None:
    buffer = HealthBuffer()
    buffer.record(1, "ok", 12.4, T0)
    buffer.record(1, "timeout", 3000.6, T0 + timedelta(milliseconds=50))  # 17:04:59.950: same minute
    buffer.record(1, "ok", 40, T0 + timedelta(milliseconds=200))  # 17:05:00.100: the next minute
    buffer.record(2, "invalid", -3, T0)  # a clock step backwards never makes a negative latency
    taken = buffer.take()
    assert len(buffer) == 0 and buffer.take() == {}
    minute = T0.replace(second=0, microsecond=0)
    assert set(taken) == {(1, minute), (1, minute + timedelta(minutes=1)), (2, minute)}
    first = taken[(1, minute)]
    assert first.calls == 2
    assert dict(zip(SEARCH_OUTCOMES, first.outcomes, strict=True)) == {
        "ok": 1,
        "timeout": 1,
        "connect_error": 0,
        "http_error": 0,
        "invalid": 0,
        "too_large": 0,
        "redirect": 0,
        "blocked": 0,
    }
    assert first.latency_sum_ms == 12 + 3001 and first.latency_max_ms == 3001
    assert sum(first.buckets) == 2
    assert taken[(2, minute)].latency_sum_ms == 0


def test_unknown_outcome_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        HealthBuffer().record(1, "fine", 1.0, T0)


def test_a_failed_flush_keeps_the_counts_and_merges_later_ones() -> None:
    buffer = HealthBuffer()
    buffer.record(7, "ok", 100, T0)
    written: list[dict[health.Key, Tally]] = []

    async def broken(_: dict[health.Key, Tally]) -> None:
        buffer.record(7, "http_error", 300, T0)  # counted while the flush was under way
        raise ConnectionError("database down")

    async def working(tallies: dict[health.Key, Tally]) -> None:
        written.append(tallies)

    with pytest.raises(ConnectionError):
        asyncio.run(health.flush(buffer, broken))
    assert asyncio.run(health.flush(buffer, working)) == 1
    (tally,) = written[0].values()
    assert tally.calls == 2 and tally.latency_sum_ms == 400 and tally.latency_max_ms == 300
    assert asyncio.run(health.flush(buffer, working)) == 0  # nothing new: nothing written


def test_the_buffer_stays_bounded_when_the_database_stays_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "MAX_PENDING_TALLIES", 3)
    buffer = HealthBuffer()
    lost = {(1, T0 + timedelta(minutes=m)): Tally(calls=1) for m in range(5)}
    buffer.give_back(lost)
    kept = buffer.take()
    assert sorted(kept) == sorted(lost)[-3:]  # the newest minutes are kept


def test_the_flusher_flushes_on_its_interval_and_once_more_when_stopped() -> None:
    async def scenario() -> list[int]:
        buffer = HealthBuffer()
        flushed: list[int] = []

        async def write(tallies: dict[health.Key, Tally]) -> None:
            flushed.append(sum(t.calls for t in tallies.values()))

        stopping = asyncio.Event()
        task = asyncio.create_task(health.run_flusher(buffer, write, 0.05, stopping))
        buffer.record(1, "ok", 1, T0)
        await asyncio.sleep(0.2)
        buffer.record(1, "ok", 1, T0)
        buffer.record(1, "ok", 1, T0)
        stopping.set()
        await asyncio.wait_for(task, 5)
        return flushed

    assert asyncio.run(scenario()) == [1, 2]


def test_during_an_overlap_calls_carry_both_signatures() -> None:
    new, old = new_signing_secret(), new_signing_secret()
    body = b'{"a":1}'
    headers = signature_headers(new, body, "msg_1", timestamp=1_700_000_000, also=(old,))
    signatures = headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    assert signatures[0] == signature_headers(new, body, "msg_1", timestamp=1_700_000_000)["webhook-signature"]
    for secret in (new, old):  # a partner verifying with either secret accepts the call
        assert verify(secret, headers, body, now=1_700_000_000)
    assert not verify(new_signing_secret(), headers, body, now=1_700_000_000)
    assert " " not in signature_headers(new, body, "msg_1", timestamp=1)["webhook-signature"]


def test_the_previous_secret_signs_only_until_the_overlap_ends() -> None:
    now = datetime.now(UTC)
    point = PartnerEndpoint(
        1,
        "p",
        "http://x",
        "ot",
        "whsec_new",
        previous_signing_secret="whsec_old",
        previous_until=now + timedelta(hours=1),
    )
    assert point.extra_secrets(now) == ("whsec_old",)
    assert point.extra_secrets(now + timedelta(hours=1)) == ()
    assert PartnerEndpoint(1, "p", "http://x", "ot", "whsec_new").extra_secrets(now) == ()
