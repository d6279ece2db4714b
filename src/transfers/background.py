"""Work a request starts and does not wait for (a new booking's first flight check,
docs/rules/flights.md#watching): each is an asyncio task of this process, kept until it ends so it is
not collected half-way, its failure logged, and waited for (bounded) when the process stops. Nothing
here may be the only way the work gets done: the worker's scheduled jobs do it anyway a little later
(a process that stops before its task ran loses nothing but the promptness)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Hashable
from typing import Any, TypeVar

import structlog

log = structlog.get_logger("transfers.background")
_Item = TypeVar("_Item", bound=Hashable)


class Background:
    """The process's fire-and-forget tasks."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self._batches: dict[str, list[Any]] = {}

    def spawn(self, work: Coroutine[Any, Any, None], *, name: str) -> None:
        """Run ``work`` beside the caller, which goes on at once."""
        task = asyncio.get_running_loop().create_task(self._logged(work, name), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def batch(self, kind: str, item: _Item, run: Callable[[list[_Item]], Coroutine[Any, Any, None]]) -> None:
        """Queue ``item`` for ``run``, which takes every item queued in the same pass of the event loop
        together, and while a run is going on, every item queued meanwhile at its end: one task per
        ``kind`` at a time. Why: work that costs a transaction or two whatever its size (a flight check's
        claim and its write) is paid once per batch, not once per request; under load the batches grow,
        and one request alone still starts its run at once. A run's failure is logged; later items run."""
        queued = self._batches.get(kind)
        if queued is not None:
            queued.append(item)
            return
        self._batches[kind] = [item]
        self.spawn(self._run_batches(kind, run), name=f"batch-{kind}")

    async def _run_batches(self, kind: str, run: Callable[[list[_Item]], Coroutine[Any, Any, None]]) -> None:
        try:
            while True:
                await asyncio.sleep(0)  # the items queued by the rest of this pass of the loop join this run
                items = self._batches[kind]
                if not items:
                    return
                self._batches[kind] = []
                await self._logged(run(list(dict.fromkeys(items))), f"batch-{kind}")
        finally:
            del self._batches[kind]

    @staticmethod
    async def _logged(work: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await work
        except Exception as exc:  # the scheduled jobs do the same work later: logged, never raised
            log.warning("background_task_failed", task=name, error=f"{type(exc).__name__}: {exc}"[:300])

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for the tasks started so far (at most ``timeout`` seconds; the rest are cancelled)."""
        tasks = set(self._tasks)
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=timeout)
        for task in late:
            task.cancel()
        for task in late:
            with contextlib.suppress(asyncio.CancelledError):
                await task
