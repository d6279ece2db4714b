"""Where the engine's messages are stored: the ``Queue`` interface.

Two queues exist, each a table: ``outbox`` (partner calls, and any kind written with a booking
change; ``repository.OutboxQueue``) and ``webhook_deliveries`` (client webhooks, fanned out from
``client_events``; ``webhooks/kind.WebhookQueue``). Both are claimed the same way: a claim sets
``lease_until`` on due, pending rows whose lease is empty or expired, the candidates picked with
``FOR UPDATE SKIP LOCKED`` on PostgreSQL (SQLite's write lock otherwise); finishing and
rescheduling re-check the lease, so a message is finished once and by its holder only. A worker
killed mid-delivery leaves a lease that simply expires: the message is sent again with the same
``webhook-id`` (at least once). Why two tables and not one: docs/architecture/reliability.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection

OUTBOX = "outbox"  # the default queue (``repository.OutboxQueue``), and the queue of a kind unless it names another


class Message(Protocol):
    """What the engine reads of a claimed message."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def attempts(self) -> int: ...
    @property
    def deadline_at(self) -> datetime: ...
    @property
    def lease_until(self) -> datetime | None: ...

    def log_fields(self) -> dict[str, Any]:
        """What a log line about it carries (ids, the booking's number)."""
        ...


class Queue(Protocol):
    name: str  # failpoints: ``<name>.after_send``; logs: ``<name>_record_failed``
    log_event: str  # the log line of every attempt

    async def claim(
        self,
        conn: AsyncConnection,
        *,
        now: datetime,
        lease_until: datetime,
        limit: int,
        kinds: Sequence[str] | None,
    ) -> list[Any]: ...

    async def record_attempt(self, conn: AsyncConnection, message: Any, attempt: dict[str, Any]) -> None:
        """The attempt log (``delivery_attempts`` for the outbox)."""
        ...

    async def reschedule(
        self,
        conn: AsyncConnection,
        message: Any,
        *,
        next_attempt_at: datetime,
        error: str | None,
        attempt: dict[str, Any],
    ) -> bool:
        """Still pending, tried again at ``next_attempt_at``; False when the lease was lost."""
        ...

    async def finish(
        self,
        conn: AsyncConnection,
        message: Any,
        *,
        status: str,
        now: datetime,
        error: str | None,
        attempt: dict[str, Any],
    ) -> bool:
        """Delivered, failed or expired; False when the lease was lost."""
        ...

    async def drop(self, conn: AsyncConnection, message: Any, *, now: datetime, reason: str) -> bool:
        """Closed unsent (stale)."""
        ...

    async def expire_overdue(self, conn: AsyncConnection, *, now: datetime, limit: int) -> list[Any]:
        """Pending, unleased messages past their deadline, closed as expired and returned."""
        ...
