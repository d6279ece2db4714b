"""The search's answer path without a store task (``search.service._Started``) and the plain 200
``JSONBody`` made without Starlette's ``__init__`` (issue 26): same results, errors, cancellation and bytes."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from starlette.responses import Response

from transfers.api.responses import JSONBody, dumps
from transfers.search.service import _Started


class _Json(Response):
    """Starlette's own path, for comparison."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


@pytest.mark.parametrize(
    "content", [{"a": 1, "price": Decimal("45.10")}, [], {"vehicles": [{"x": "é"}] * 3}, None, "text"]
)
def test_plain_answer_is_starlettes(content: Any) -> None:
    mine, theirs = JSONBody(content), _Json(content)
    assert (mine.status_code, mine.body, mine.raw_headers, mine.background) == (
        theirs.status_code,
        theirs.body,
        theirs.raw_headers,
        theirs.background,
    )
    assert mine.headers["content-type"] == "application/json"
    assert mine.media_type == "application/json"


@pytest.mark.parametrize(
    "kwargs",
    [{"status_code": 201}, {"status_code": 204}, {"headers": {"Retry-After": "5"}}, {"media_type": "text/plain"}],
)
def test_other_answers_are_starlettes(kwargs: dict[str, Any]) -> None:
    mine, theirs = JSONBody({"a": 1}, **kwargs), _Json({"a": 1}, **kwargs)
    assert (mine.status_code, mine.body, mine.raw_headers) == (theirs.status_code, theirs.body, theirs.raw_headers)


async def test_started_runs_to_first_wait_at_once_and_finishes_when_awaited() -> None:
    steps: list[str] = []
    gate: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def work() -> int:
        steps.append("first")
        value = await gate
        steps.append("second")
        await asyncio.sleep(0)
        return value + 1

    started = _Started(work())
    assert steps == ["first"]
    asyncio.get_running_loop().call_soon(gate.set_result, 41)
    assert await started == 42
    assert steps == ["first", "second"]


async def test_started_without_a_wait() -> None:
    async def work() -> str:
        return "done"

    assert await _Started(work()) == "done"


async def test_an_error_of_the_first_step_is_raised_when_awaited() -> None:
    async def work() -> None:
        raise LookupError("store failed")

    started = _Started(work())  # nothing raised yet
    with pytest.raises(LookupError, match="store failed"):
        await started


async def test_an_error_after_a_wait_is_raised_when_awaited() -> None:
    async def work() -> None:
        await asyncio.sleep(0)
        raise LookupError("later")

    with pytest.raises(LookupError, match="later"):
        await _Started(work())


async def test_cancelling_the_awaiting_task_cancels_the_work_at_its_wait() -> None:
    seen: list[str] = []
    waiting = asyncio.Event()

    async def work() -> None:
        try:
            waiting.set()
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen.append("cancelled at its wait")
            raise

    async def search() -> None:
        started = _Started(work())
        try:
            seen.append("answer built")
        finally:
            await started

    task = asyncio.create_task(search())
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["answer built", "cancelled at its wait"]


async def test_the_work_may_catch_a_cancellation_and_answer() -> None:
    async def work() -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return "cleaned up"
        return "slept"

    async def search() -> str:
        return await _Started(work())  # type: ignore[no-any-return]

    task = asyncio.create_task(search())
    await asyncio.sleep(0)
    task.cancel()
    assert await task == "cleaned up"
