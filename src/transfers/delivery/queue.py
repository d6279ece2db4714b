"""Where the engine's messages are stored: the ``Queue`` interface, and what it reads of a message.

Three queues exist, each a table: ``outbox`` (partner calls and any kind written with a change;
``repository.OutboxQueue``), ``webhook_deliveries`` (client webhooks and driver positions;
``webhooks/kind.WebhookQueue``) and ``partner_emails`` (``hosted/mail.EmailQueue``). Each is claimed
the same way: a claim sets ``lease_until`` on due, pending rows whose lease is empty or expired, the
candidates picked with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's write lock otherwise);
finishing and rescheduling re-check the lease, so a message is finished once and by its holder only.
A worker killed mid-delivery leaves a lease that simply expires: the message is sent again with the
same ``webhook-id`` (at least once). Why separate tables: docs/architecture/deliveries.md.

Every message names its **recipient** (``Message.recipient``): who it is for, as its kind names it
(``partner:12``, ``endpoint:5``, later ``traveller:<booking id>:email``). A message need not belong
to a booking or a partner.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, TypedDict, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

OUTBOX = "outbox"  # the ``outbox`` table's queue (``repository.OutboxQueue``)


class Message(Protocol):
    """What the engine reads of a claimed message."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def recipient(self) -> str: ...
    @property
    def attempts(self) -> int: ...
    @property
    def deadline_at(self) -> datetime: ...
    @property
    def lease_until(self) -> datetime | None: ...

    def log_fields(self) -> dict[str, object]:
        """What a log line about it carries (ids, the booking's number)."""
        ...


M = TypeVar("M", bound=Message)


class Attempt(TypedDict):
    """One attempt as the engine records it (an outbox message's ``delivery_attempts`` row)."""

    attempt_no: int
    started_at: datetime
    duration_ms: float
    outcome: str  # ``<verdict>:<outcome>``, e.g. ``retry:timeout``
    http_status: int | None
    error: str | None
    answer_excerpt: str | None


class Queue(Protocol[M]):
    """A table of messages of type ``M`` as the engine claims and finishes them."""

    name: str  # failpoints: ``<name>.after_send``; logs: ``<name>_record_failed``
    log_event: str  # the log line of every attempt

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str],
        first: Sequence[str],
    ) -> list[M]:
        """Lease up to ``limit`` due messages of ``kinds``, those of ``first`` (kinds tried once)
        ahead of the others."""
        ...

    async def record_attempt(self, conn: AsyncConnection, message: M, attempt: Attempt) -> None:
        """The attempt log (``delivery_attempts`` for the outbox)."""
        ...

    async def reschedule(
        self, conn: AsyncConnection, message: M, *, next_attempt_at: datetime, error: str | None, attempt: Attempt
    ) -> bool:
        """Still pending, tried again at ``next_attempt_at``; False when the lease was lost."""
        ...

    async def finish(
        self, conn: AsyncConnection, message: M, *, status: str, now: datetime, error: str | None, attempt: Attempt
    ) -> bool:
        """Delivered, failed or expired; False when the lease was lost."""
        ...

    async def drop(self, conn: AsyncConnection, message: M, *, now: datetime, reason: str) -> bool:
        """Closed unsent (stale)."""
        ...

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[M]:
        """Pending, unleased messages past their deadline, closed as expired and returned."""
        ...
