"""A search's fan-out as one batch of partner calls under one deadline (issue 26; docs/operations/performance.md).

``CallBatch`` is ``PartnerClient``'s companion for calls made together: it uses the client's own
steps (its transport, headers, judgement and failure texts), so a call in a batch ends exactly as
``PartnerClient.call`` would end it, and only the waiting differs. It lives apart from the client
because the client is the one path every other partner call takes (create, info, updates, outbox).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from transfers.delivery.transport import CallResult
from transfers.partners.client import PartnerClient, PartnerEndpoint, SharedDeadline, _ms
from transfers.partners.http11 import Exchange, PartnerTransportError, UnusableRequest
from transfers.partners.signing import webhook_ids

IDS_AT_ONCE = 16  # webhook ids drawn per ``os.urandom`` (``signing.webhook_ids``): a 10-partner search draws once


class _BatchCall:
    """One call of a ``CallBatch``: its exchange in flight, or its task, then what came of it. What
    the exchange brought is copied at its end: the connection may serve another call before the
    batch's caller wakes."""

    __slots__ = ("answer", "batch", "ended", "error", "exchange", "partner", "path", "result", "started", "task")

    def __init__(self, batch: CallBatch, partner: PartnerEndpoint, path: str) -> None:
        self.batch = batch
        self.partner = partner
        self.path = path
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
        self.batch._one_done()

    def task_over(self, task: asyncio.Task[CallResult]) -> None:
        if not task.cancelled() and task.exception() is None:
            self.result = task.result()
        self.batch._one_done()


class CallBatch:
    """Calls made together under one deadline (a search's fan-out, issue 26), without a task, a
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
        self._http = client._http()
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
        call = _BatchCall(self, partner, path)
        self._calls.append(call)
        url = partner.base_url.rstrip("/") + path
        if not self._ids:
            self._ids = webhook_ids(IDS_AT_ONCE)
        client, has_payload = self._client, payload is not None
        signature = client._signature(partner, body, self._ids.pop())
        # The headers written out in one format (a line break in one: the dict, which the transport refuses)
        lines = client._header_lines(partner, has_payload, signature)
        call.started = time.perf_counter()
        try:
            call.exchange = self._http.start(
                "POST",
                url,
                lines if lines is not None else client._headers_of(partner, has_payload, signature),
                body,
                call.over,
            )
        except (PartnerTransportError, UnusableRequest, OSError) as exc:
            call.result = client._failed(exc, self._timeout, _ms(call.started, time.perf_counter()), partner, path)
            return
        if call.exchange is None:  # a new connection is needed: connect (and resolve) in a task
            if self._deadline is None:
                self._deadline = SharedDeadline(self._timeout)
            headers = client._headers_of(partner, has_payload, signature)  # the same signature, not signed again
            call.task = self._loop.create_task(
                self._client._call(
                    partner,
                    "POST",
                    path,
                    payload,
                    timeout=self._timeout,
                    webhook_id=None,
                    body=body,
                    deadline=self._deadline,
                    headers=headers,
                )
            )
            call.task.add_done_callback(call.task_over)
        self._left += 1

    def _one_done(self) -> None:
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
                self._one_done()

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
        client, partner, path = self._client, call.partner, call.path
        duration = _ms(call.started, call.ended)
        if call.answer is not None:
            status, raw = call.answer
            return client._judge(status, raw, duration, partner, path)
        error = call.error or PartnerTransportError("exchange ended without an answer")
        return client._failed(error, self._timeout, duration, partner, path)
