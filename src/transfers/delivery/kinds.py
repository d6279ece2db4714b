"""Delivery kinds and the one registry the application fills at start-up (``transfers/deliveries.py``).

A kind is everything the engine needs to deliver one sort of message and nothing it must know
about the consumer: how to reach the receiver (``router``), what an answer means (``judge``:
answered / retry / give up), what a finished message does (``effect``, run in the transaction that
finishes it), the retry schedule, whether it is tried once and dropped when stale (``once``), and
the table its messages are stored in (``queue``: an engine delivers the registered kinds of its own
queue). The consumer keeps its own description in ``spec`` (a partner call's method, path and answer model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.delivery.policy import STANDARD, Ending, RetrySchedule, Verdict
from transfers.delivery.queue import OUTBOX
from transfers.delivery.transport import CallResult, Receiver

T = TypeVar("T")


@dataclass(frozen=True)
class Judged:
    """An attempt's result as its kind reads it: the verdict, the answer (the kind's model, when one
    was read), the error worth showing operators, and the result (replaced when the answer broke the
    contract, so the attempt log says ``invalid``)."""

    verdict: Verdict
    answer: Any
    error: str | None
    result: CallResult


class Router(Protocol):
    """The receiver of ``message`` (the queue's row: an ``OutboxMessage``, a webhook delivery); ``hint``:
    what the caller already knows (a partner's endpoint)."""

    async def __call__(self, message: Any, hint: Any) -> Receiver: ...


class Effect(Protocol):
    """What a finished message does, in the transaction that finishes it; its return value is handed
    back to whoever delivered (the create request gets the booking as the answer left it)."""

    async def __call__(
        self,
        conn: AsyncConnection,
        message: Any,
        ending: Ending,
        answer: Any,
        error: str | None,
        now: datetime,
    ) -> Any: ...


class FastFinish(Protocol):
    """A kind's one-statement way to record and apply an answer (PostgreSQL); None when it wrote
    nothing and the general way must run."""

    async def __call__(self, message: Any, attempt: dict[str, Any], judged: Judged, now: datetime) -> Any: ...


Retrying = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def _once(work: Callable[[], Awaitable[T]]) -> T:
    return await work()


async def _nothing(
    conn: AsyncConnection, message: Any, ending: Ending, answer: Any, error: str | None, now: datetime
) -> None:
    return None


@dataclass(frozen=True)
class DeliveryKind:
    name: str  # what ``outbox.kind`` stores
    router: Router
    judge: Callable[[DeliveryKind, CallResult], Judged]
    effect: Effect = _nothing
    schedule: RetrySchedule = STANDARD
    once: bool = False
    """Try once, drop when stale: never retried (a failed attempt expires the message), dropped
    unsent when claimed past its deadline, claimed ahead of other kinds' due retries, and written
    with ``repository.enqueue_latest`` so a newer message replaces a pending older one."""
    fast_finish: FastFinish | None = None
    retrying: Retrying = _once
    """Runs the finishing transaction, again when it meets a concurrent change (the bookings' own
    retry); raising one of ``unapplied`` means it never got through: the attempt is recorded and the
    message stays pending for a later claim."""
    unapplied: tuple[type[Exception], ...] = ()
    spec: Any = None
    queue: str = OUTBOX
    """The ``name`` of the ``Queue`` (table) its messages are stored in: the engine over that queue
    delivers it, the others ignore it."""
    aclose: Callable[[], Awaitable[None]] | None = None
    """Releases what the kind holds for its engine's life (an HTTP session): ``Engine.aclose``."""


class UnknownKind(LookupError):
    """A stored message's kind that no one registered."""


class Registry:
    """The kinds this process delivers, by name. Filled once at start-up; a name is taken once."""

    def __init__(self, kinds: tuple[DeliveryKind, ...] = ()) -> None:
        self._kinds: dict[str, DeliveryKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: DeliveryKind) -> DeliveryKind:
        if kind.name in self._kinds:
            raise ValueError(f"delivery kind {kind.name!r} is registered already")
        self._kinds[kind.name] = kind
        return kind

    def __getitem__(self, name: str) -> DeliveryKind:
        try:
            return self._kinds[name]
        except KeyError:
            raise UnknownKind(f"unknown delivery kind {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[DeliveryKind]:
        return iter(self._kinds.values())

    def names(self) -> list[str]:
        return list(self._kinds)

    def once_names(self) -> list[str]:
        """The kinds tried once (claimed first)."""
        return [k.name for k in self._kinds.values() if k.once]

    def stored_in(self, queue: str) -> Registry:
        """The kinds whose messages ``queue`` stores: what an engine over that queue delivers."""
        return Registry(tuple(k for k in self._kinds.values() if k.queue == queue))
