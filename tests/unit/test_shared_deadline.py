"""``SharedDeadline``: one timer for a fan-out's calls, each call timing out as under its own
``asyncio.timeout`` (partners/client.py; docs/operations/performance-history.md#search-fifth-pass)."""

from __future__ import annotations

import asyncio

import pytest

from transfers.partners.client import SharedDeadline


async def test_calls_within_the_deadline_keep_their_results_and_late_ones_time_out() -> None:
    deadline = SharedDeadline(0.05)

    async def call(delay: float) -> str:
        try:
            return await deadline.bound(asyncio.sleep(delay, "answer"))
        except TimeoutError:
            return "timeout"

    try:
        results = await asyncio.gather(call(0), call(0.01), call(5), call(10))
    finally:
        deadline.close()
    assert list(results) == ["answer", "answer", "timeout", "timeout"]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_each_call_has_its_own_deadline_from_when_it_entered() -> None:
    """A call that entered later than the others is not cut short by their deadline."""
    loop = asyncio.get_running_loop()
    deadline = SharedDeadline(0.1)

    async def call(after: float) -> tuple[str, float]:
        await asyncio.sleep(after)
        entered = loop.time()
        try:
            await deadline.bound(asyncio.sleep(5))
        except TimeoutError:
            return "timeout", loop.time() - entered
        return "answer", 0.0

    try:
        (first, took_first), (second, took_second) = await asyncio.gather(call(0), call(0.05))
    finally:
        deadline.close()
    assert first == second == "timeout"
    assert 0.095 <= took_first < 0.2
    assert 0.095 <= took_second < 0.2  # not ~0.05: its deadline is its own


async def test_a_cancellation_from_elsewhere_is_not_a_timeout() -> None:
    deadline = SharedDeadline(5)
    task = asyncio.create_task(deadline.bound(asyncio.sleep(5)))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline.close()


async def test_a_cancellation_from_elsewhere_at_the_deadline_still_propagates() -> None:
    """As ``asyncio.timeout`` decides: the deadline and another cancellation together are the other's."""
    deadline = SharedDeadline(5)

    async def call() -> None:
        await deadline.bound(asyncio.sleep(5))

    task = asyncio.create_task(call())
    await asyncio.sleep(0.01)
    deadline._expire()  # the deadline passes: the task is cancelled by it...
    task.cancel()  # ...and by someone else before it runs
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline.close()
