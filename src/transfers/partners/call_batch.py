"""A search's fan-out as one batch of partner calls under one deadline (docs/operations/performance.md).

``CallBatch`` is ``PartnerClient``'s companion for calls made together: it uses the client's public
steps (``prepare``, ``transport``, ``send``, ``judge_answer``, ``judge_failure``), so a call in a batch
ends exactly as ``PartnerClient.call`` would end it, and only the waiting differs. It lives apart from the client
because the client is the one path every other partner call takes (create, info, updates, outbox).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from transfers.delivery.transport import CallResult
from transfers.partners.client import PartnerClient, PartnerEndpoint, PreparedCall, SharedDeadline, elapsed_ms
from transfers.partners.http11 import Exchange, PartnerTransportError, UnusableRequest
from transfers.partners.signing import webhook_ids
from transfers.partners.ssrf import BlockedDestination

IDS_AT_ONCE = 16  # webhook ids drawn per ``os.urandom`` (``signing.webhook_ids``): a 10-partner search draws once


class _BatchCall:
    """One call of a ``CallBatch``: its exchange in flight, or its task, then what came of it. What
    the exchange brought is copied at its end: the connection may serve another call before the
    batch's caller wakes."""

    __slots__ = ("answer", "batch", "ended", "error", "exchange", "prepared", "result", "started", "task")

    def __init__(self, batch: CallBatch, prepared: PreparedCall) -> None:
        self.batch = batch
        self.prepared = prepared
        self.started = 0.0
        self.ended = 0.0
        self.exchange: Exchange | None = None
        self.task: asyncio.Task[CallResult] | None = None
        self.answer: tuple[int, bytes] | None = None
        self.error: BaseException | None = None
        self.result: CallResult | None = None

    def over(self, exchange: Exchange) -> None:
        """The exchange's listener: called by the connection when the answer is whole or failed."""
        self.answer, self.error, self.ended = exchange.answer, exchange.error, exchange.ended
        self.exchange = None
        self.batch.one_done()

    def task_over(self, task: asyncio.Task[CallResult]) -> None:
        if not task.cancelled() and task.exception() is None:
            self.result = task.result()
        self.batch.one_done()


class CallBatch:
    """Calls made together under one deadline (a search's fan-out), without a task, a
    timer or an awaited semaphore per call. A call to a partner with an idle kept-alive connection
    is written at once (``Http11Client.start``) and ends when its connection says so, its duration
    measured then; only a call that needs a new connection (connect, SSRF-guarded resolve) runs in a
    task, under a ``SharedDeadline``. ``results`` waits once for all of them, under one timer: at
    the deadline the unfinished exchanges are abandoned (their connections closed, never reused)
    and judged ``timeout`` as a call under ``asyncio.timeout(timeout)`` is. Each call's deadline is
    ``timeout`` after the batch was made: the calls are started in the same turn of the loop, whose
    clock (``loop.time``) is what deadlines are set on. Cancelled (the search's client went away),
    it abandons its exchanges and cancels its tasks before the cancellation goes on.

    Results are ``PartnerClient.call``'s (the same outcomes, texts and logs); metrics are the
    caller's (``observe_partner_call``), once it has judged the answer."""

    def __init__(self, client: PartnerClient, timeout: float) -> None:
        self._client = client
        self._timeout = timeout
        self._http = client.transport()
        self._loop = asyncio.get_running_loop()
        self._when = self._loop.time() + timeout
        self._calls: list[_BatchCall] = []
        self._left = 0
        self._waiter: asyncio.Future[None] | None = None
        self._deadline: SharedDeadline | None = None
        self._ids: list[str] = []  # webhook ids drawn and not yet used
        self.timer: asyncio.TimerHandle | None = None  # the one deadline timer, while ``results`` waits

    def call(self, partner: PartnerEndpoint, path: str, payload: dict[str, Any], body: bytes) -> None:
        """Start ``POST path`` with ``body`` (``payload`` serialised)."""
        if not self._ids:
            self._ids = webhook_ids(IDS_AT_ONCE)
        client = self._client
        prepared = client.prepare(
            partner, "POST", path, body, has_payload=payload is not None, webhook_id=self._ids.pop()
        )
        call = _BatchCall(self, prepared)
        self._calls.append(call)
        # The headers written out in one format (a line break in one: the dict, which the transport refuses)
        lines = prepared.head_lines()
        call.started = time.perf_counter()
        try:
            client.refuse_beside_trusted(prepared.url)
            call.exchange = self._http.start(
                "POST", prepared.url, lines if lines is not None else prepared.headers(), body, call.over
            )
        except (PartnerTransportError, UnusableRequest, BlockedDestination, OSError) as exc:
            duration = elapsed_ms(call.started, time.perf_counter())
            call.result = client.judge_failure(prepared, exc, self._timeout, duration)
            return
        if call.exchange is None:  # a new connection is needed: connect (and resolve) in a task
            if self._deadline is None:
                self._deadline = SharedDeadline(self._timeout)
            # the same signature, not signed again
            call.task = self._loop.create_task(client.send(prepared, timeout=self._timeout, deadline=self._deadline))
            call.task.add_done_callback(call.task_over)
        self._left += 1

    def one_done(self) -> None:
        """A call is over; the last one wakes ``results``."""
        self._left -= 1
        waiter = self._waiter
        if self._left == 0 and waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _expire(self) -> None:
        """The deadline: the exchanges still in flight are abandoned and will be judged ``timeout``."""
        ended = time.perf_counter()
        for call in self._calls:
            if call.exchange is not None:
                self._http.abandon(call.exchange)
                call.exchange = None
                call.error = TimeoutError()
                call.ended = ended
                self.one_done()

    async def results(self) -> list[CallResult]:
        """Every call's result, in the order of the calls, once the last is over or the deadline passed."""
        try:
            if self._left:
                self._waiter = self._loop.create_future()
                if any(call.exchange is not None for call in self._calls):
                    self.timer = self._loop.call_at(self._when, self._expire)
                await self._waiter
        except BaseException:
            await self._abort()
            raise
        finally:
            if self.timer is not None:
                self.timer.cancel()
            if self._deadline is not None:
                self._deadline.close()
        return [self._result_of(call) for call in self._calls]

    async def _abort(self) -> None:
        tasks: list[asyncio.Task[CallResult]] = []
        for call in self._calls:
            if call.exchange is not None:
                self._http.abandon(call.exchange)
                call.exchange = None
            if call.task is not None and not call.task.done():
                call.task.cancel()
                tasks.append(call.task)
        if tasks:
            await asyncio.wait(tasks)  # they close their connections and free their slots

    def _result_of(self, call: _BatchCall) -> CallResult:
        if call.result is not None:
            return call.result
        if call.task is not None:
            return call.task.result()  # a task that ended otherwise raises what it raised, as before
        duration = elapsed_ms(call.started, call.ended)
        if call.answer is not None:
            status, raw = call.answer
            return self._client.judge_answer(call.prepared, status, raw, duration)
        error = call.error or PartnerTransportError("exchange ended without an answer")
        return self._client.judge_failure(call.prepared, error, self._timeout, duration)
