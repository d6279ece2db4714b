"""What a delivery attempt sends through and gets back: the ``Transport`` interface and its
``CallResult``.

The engine does not know what is on the other side. A partner with a server is an HTTP call
(``partners/client.py``), a hosted partner answers in-process (``hosted/inprocess.py``), a client
endpoint is a signed POST (``webhooks/sender.py``), a test kind is a function. Each is a
``Transport``; a kind's ``Router`` picks the one a message goes through (``kinds.py``).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, Literal, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection

from transfers.rows import frozen_value

M_contra = TypeVar("M_contra", contravariant=True)  # the message type a transport or receiver takes

Outcome = Literal["ok", "timeout", "connect_error", "http_error", "invalid", "too_large", "redirect", "blocked"]


@frozen_value  # one per partner call, ten per 10-partner search: built without object.__setattr__ (rows.py)
class CallResult:
    outcome: Outcome
    http_status: int | None
    body: object  # the answer as read (parsed JSON, a kind's own value), for the kind's ``judge``
    error: str | None
    duration_ms: float
    raw: bytes | None = field(default=None, repr=False)
    """The answer body as received (already capped), when an HTTP answer came: kept by reference so
    only a caller that stores it (the outbox's attempt row) pays for ``answer_excerpt``."""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def excerpt(self) -> str | None:
        """The stored excerpt of the answer (``answer_excerpt``), None when no HTTP answer came."""
        return None if self.raw is None or self.http_status is None else answer_excerpt(self.raw)


EXCERPT_CHARS = 500
# Control characters (C0, DEL, C1) except tab and newline: an excerpt is shown to operators, and a
# carriage return or an escape sequence from a partner must not be obeyed by a terminal.
_CONTROL = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]")


def answer_excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """The first ``limit`` characters of an answer body: UTF-8 with undecodable bytes replaced,
    control characters other than newline and tab removed. Decodes only a prefix (4 bytes per
    character at most), widening it while removed characters leave the text short."""
    size = limit * 4
    while True:
        # An incremental decoder keeps a character cut at the prefix's end back instead of
        # replacing it, so a cut never shows up as U+FFFD.
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        text = _CONTROL.sub("", decoder.decode(raw[:size], final=size >= len(raw)))
        if len(text) >= limit or size >= len(raw):
            return text[:limit]
        size *= 4


class Transport(Protocol[M_contra]):
    """One way to reach a receiver. ``send`` never raises for the receiver's failures: it answers a
    ``CallResult`` saying what happened (the engine judges it with the kind's ``judge``). ``kind``:
    the message's kind's name; ``target``: what the router found (``Receiver.target``)."""

    async def send(self, kind: str, message: M_contra, /, *, timeout: float, target: object) -> CallResult: ...


@dataclass(frozen=True)
class Receiver(Generic[M_contra]):
    """Where one message goes: the transport, what it needs (``target``: a partner's endpoint, ...),
    a name for metrics (None: not observed) and what to do once a message was delivered to it."""

    transport: Transport[M_contra]
    target: object = None
    name: str | None = None
    in_process: bool = False
    """True when no network was involved (a hosted partner): the one-statement fast paths, which
    exist for network answers, are not taken."""

    after_delivery: AfterDelivery[M_contra] | None = None
    """Run in the transaction that marks a message delivered (a hosted partner's e-mail)."""
    observe: Callable[[str, CallResult], None] | None = None
    """Told every attempt's final result with the kind's name (the partner-call metrics)."""


class AfterDelivery(Protocol[M_contra]):
    """Run in the transaction that marks a message of kind ``kind`` (its name) delivered."""

    async def __call__(self, conn: AsyncConnection, kind: str, message: M_contra, now: datetime, /) -> None: ...
