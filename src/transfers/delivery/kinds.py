"""Delivery kinds and the registries the application fills at start-up (``transfers/deliveries.py``).

A kind is everything the engine needs to deliver one sort of message and nothing it must know
about the consumer: how to reach the receiver (``router``), what an answer means (``judge``:
answered / retry / give up), what a finished message does (``effect``, run in the transaction that
finishes it), the retry schedule and whether it is tried once and dropped when stale (``once``).
A kind is typed by the message it delivers (``DeliveryKind[M]``: an ``OutboxMessage``, a
``WebhookDelivery``, ...) and registered in the ``Registry[M]`` of the queue that stores such
messages; the engine over that queue delivers it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.delivery.policy import STANDARD, Ending, RetrySchedule, Verdict
from transfers.delivery.queue import Attempt
from transfers.delivery.transport import CallResult, Receiver

T = TypeVar("T")
M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)


@dataclass(frozen=True)
class Judged:
    """An attempt's result as its kind reads it: the verdict, the answer (the kind's model, when one
    was read: the effect narrows it), the error worth showing operators, and the result (replaced
    when the answer broke the contract, so the attempt log says ``invalid``)."""

    verdict: Verdict
    answer: object
    error: str | None
    result: CallResult


Judge = Callable[[CallResult], Judged]
"""What an attempt's result means for a kind (a partner call's binds its answer model)."""


class Router(Protocol[M_contra]):
    """The receiver of ``message``; ``hint``: what the caller already knows of it (a partner's
    endpoint, for the create's own attempt), None from the worker."""

    async def __call__(self, message: M_contra, hint: object, /) -> Receiver[M_contra]: ...


class Effect(Protocol[M_contra]):
    """What a finished message does, in the transaction that finishes it; its return value is handed
    back to whoever delivered (the create request gets the booking as the answer left it)."""

    async def __call__(
        self,
        conn: AsyncConnection,
        message: M_contra,
        ending: Ending,
        answer: object,
        error: str | None,
        now: datetime,
        /,
    ) -> object: ...


class FastFinish(Protocol[M_contra]):
    """A kind's one-statement way to record and apply an answer (PostgreSQL); None when it wrote
    nothing and the general way must run."""

    async def __call__(self, message: M_contra, attempt: Attempt, judged: Judged, now: datetime, /) -> object: ...


Retrying = Callable[[Callable[[], Awaitable[object]]], Awaitable[object]]


async def _once(work: Callable[[], Awaitable[T]]) -> T:
    return await work()


async def nothing(
    conn: AsyncConnection, message: object, ending: Ending, answer: object, error: str | None, now: datetime
) -> None:
    """The effect of a kind whose finished messages change nothing."""
    return None


@dataclass(frozen=True)
class DeliveryKind(Generic[M_contra]):
    """One sort of message ``M`` (what its queue's claim answers) and how it is delivered."""

    name: str  # what the queue's ``kind`` column stores
    router: Router[M_contra]
    judge: Judge
    effect: Effect[M_contra] = nothing
    schedule: RetrySchedule = STANDARD
    once: bool = False
    """Try once, drop when stale: never retried (a failed attempt expires the message), dropped
    unsent when claimed past its deadline, claimed ahead of other kinds' due retries, and written
    so that a newer message replaces a pending older one (``repository.enqueue_latest``)."""
    fast_finish: FastFinish[M_contra] | None = None
    retrying: Retrying = _once
    """Runs the finishing transaction, again when it meets a concurrent change (the bookings' own
    retry); raising one of ``unapplied`` means it never got through: the attempt is recorded and the
    message stays pending for a later claim."""
    unapplied: tuple[type[Exception], ...] = ()


class UnknownKind(LookupError):
    """A stored message's kind that no one registered."""


class Registry(Generic[M]):
    """The kinds of one queue this process delivers, by name. Filled once at start-up; a name is
    taken once."""

    def __init__(self, kinds: tuple[DeliveryKind[M], ...] = ()) -> None:
        self._kinds: dict[str, DeliveryKind[M]] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: DeliveryKind[M]) -> DeliveryKind[M]:
        if kind.name in self._kinds:
            raise ValueError(f"delivery kind {kind.name!r} is registered already")
        self._kinds[kind.name] = kind
        return kind

    def __getitem__(self, name: str) -> DeliveryKind[M]:
        try:
            return self._kinds[name]
        except KeyError:
            raise UnknownKind(f"unknown delivery kind {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._kinds

    def __iter__(self) -> Iterator[DeliveryKind[M]]:
        return iter(self._kinds.values())

    def names(self) -> list[str]:
        return list(self._kinds)

    def once_names(self) -> list[str]:
        """The kinds tried once (claimed first)."""
        return [k.name for k in self._kinds.values() if k.once]
