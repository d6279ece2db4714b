"""The delivery engine's policy, pure: the retry schedule, ``settle`` (answered / retry / give up
into delivered / rescheduled / refused / expired), and how each kind reads an attempt's result."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from transfers.delivery.policy import STANDARD, Ending, RetrySchedule, Verdict, settle
from transfers.delivery.transport import CallResult, Outcome
from transfers.partners import calls
from transfers.webhooks import kind as webhooks
from transfers.webhooks import positions

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("attempts", "base"), [(1, 10), (2, 30), (3, 120), (4, 600), (5, 1800), (6, 3600), (40, 3600)])
def test_the_standard_schedule_waits_with_twenty_percent_jitter(attempts: int, base: int) -> None:
    rng = random.Random(attempts)
    waits = [(STANDARD.next_attempt(attempts, NOW, rng=rng) - NOW).total_seconds() for _ in range(200)]
    assert base * 0.8 <= min(waits) and max(waits) <= base * 1.2


def test_settle_answers_what_happens_to_the_message() -> None:
    deadline = NOW + timedelta(hours=1)
    done = settle(Verdict.DONE, attempts_done=1, now=NOW, deadline=deadline)
    assert (done.status, done.ending, done.retry_at) == ("delivered", Ending.ANSWERED, None)
    refused = settle(Verdict.PERMANENT, attempts_done=1, now=NOW, deadline=deadline)
    assert (refused.status, refused.ending) == ("failed", Ending.REFUSED)
    again = settle(Verdict.RETRY, attempts_done=1, now=NOW, deadline=deadline)
    assert again.status == "pending" and again.ending is None
    assert again.retry_at is not None and NOW + timedelta(seconds=8) <= again.retry_at <= NOW + timedelta(seconds=12)
    late = settle(Verdict.RETRY, attempts_done=6, now=NOW, deadline=NOW + timedelta(minutes=30))
    assert (late.status, late.ending, late.retry_at) == ("expired", Ending.EXPIRED, None)  # the next try: past it
    once = settle(Verdict.RETRY, attempts_done=1, now=NOW, deadline=deadline, once=True)
    assert (once.status, once.ending) == ("expired", Ending.EXPIRED)  # tried once, never again


def test_a_kind_may_have_its_own_schedule() -> None:
    fast = RetrySchedule(backoff=(1,), then=2)
    settled = settle(Verdict.RETRY, attempts_done=3, now=NOW, deadline=NOW + timedelta(hours=1), schedule=fast)
    assert settled.retry_at is not None and settled.retry_at <= NOW + timedelta(seconds=2.4)


@pytest.mark.parametrize(
    ("result", "verdict"),
    [
        (CallResult("ok", 200, {"status": "Success"}, None, 1.0), Verdict.DONE),
        (CallResult("ok", 200, {"status": "Error", "message": "no such booking"}, None, 1.0), Verdict.PERMANENT),
        (CallResult("http_error", 404, None, "HTTP 404", 1.0), Verdict.PERMANENT),
        (CallResult("http_error", 429, None, "HTTP 429", 1.0), Verdict.RETRY),
        (CallResult("http_error", 503, {"status": "Error"}, "HTTP 503", 1.0), Verdict.RETRY),
        (CallResult("timeout", None, None, "no answer", 1.0), Verdict.RETRY),
        (CallResult("ok", 200, {"unexpected": True}, None, 1.0), Verdict.RETRY),  # breaks the contract
    ],
)
def test_a_partner_calls_answer_is_judged_by_its_answer_model(result: CallResult, verdict: Verdict) -> None:
    judged = calls.judge(calls.MessageKind.UPDATE, result)
    assert judged.verdict is verdict
    if verdict is Verdict.PERMANENT and result.body:
        assert judged.error == "no such booking"  # the partner's own words
    if verdict is Verdict.DONE:
        assert judged.error is None


@pytest.mark.parametrize(
    ("status", "verdict"), [(200, Verdict.DONE), (204, Verdict.DONE), (410, Verdict.PERMANENT), (500, Verdict.RETRY)]
)
def test_a_client_webhook_is_given_up_only_on_410(status: int, verdict: Verdict) -> None:
    outcome: Outcome = "ok" if status < 300 else "http_error"
    result = CallResult(outcome, status, None, None if status < 300 else f"HTTP {status}", 1.0)
    assert webhooks.judge(result).verdict is verdict


@pytest.mark.parametrize(("status", "verdict"), [(200, Verdict.DONE), (410, Verdict.RETRY), (500, Verdict.RETRY)])
def test_a_driver_position_is_answered_or_not_and_never_disables_an_endpoint(status: int, verdict: Verdict) -> None:
    """Tried once: any failure, a 410 too, just ends the push (``once`` turns a retry into expired)."""
    outcome: Outcome = "ok" if status < 300 else "http_error"
    result = CallResult(outcome, status, None, None if status < 300 else f"HTTP {status}", 1.0)
    assert positions.judge(result).verdict is verdict
    settled = settle(verdict, attempts_done=1, now=NOW, deadline=NOW + timedelta(seconds=15), once=True)
    assert settled.retry_at is None and settled.status == ("delivered" if status == 200 else "expired")
