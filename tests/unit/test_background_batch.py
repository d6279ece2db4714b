"""``Background.batch``: the items queued in one pass of the event loop run together, those queued during a
run in the next run, one run at a time per kind; a failed run is logged and the later items still run."""

from __future__ import annotations

import asyncio

from transfers.background import Background


async def test_items_of_one_pass_run_together_and_items_queued_meanwhile_in_the_next_run() -> None:
    background = Background()
    runs: list[list[int]] = []
    gate = asyncio.Event()

    async def run(items: list[int]) -> None:
        runs.append(items)
        if len(runs) == 1:
            await gate.wait()  # the first run is under way while more items come

    for item in (1, 2, 2, 3):  # one pass of the loop: one run, duplicates once
        background.batch("k", item, run)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert runs == [[1, 2, 3]]
    background.batch("k", 4, run)
    background.batch("k", 5, run)
    background.batch("other", 9, run)  # another kind runs on its own
    gate.set()
    await background.drain(timeout=5)
    assert runs[0] == [1, 2, 3]
    assert sorted(runs[1:]) == [[4, 5], [9]]
    assert background.pending == 0


async def test_a_failed_run_is_logged_and_the_next_items_still_run() -> None:
    background = Background()
    seen: list[list[str]] = []

    async def run(items: list[str]) -> None:
        seen.append(items)
        if items == ["bad"]:
            raise RuntimeError("provider down")

    background.batch("k", "bad", run)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    background.batch("k", "good", run)
    await background.drain(timeout=5)
    assert seen == [["bad"], ["good"]]
    background.batch("k", "again", run)  # a new run starts after the last one ended
    await background.drain(timeout=5)
    assert seen[-1] == ["again"]
