"""A real SMTP server on loopback for the tests and benches (aiosmtpd), told how to answer: take every
message (kept in ``messages``), refuse the recipient or the data with a code, or hang after the data
(until ``release`` or ``hang_seconds``, a bounded wait)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from email import message_from_bytes
from email.message import Message
from email.policy import default
from typing import Any

from aiosmtpd.controller import Controller


class Inbox:
    """The server's handler: what it got and how it answers (change ``rcpt_answer``, ``data_answer``
    or ``hang`` between sends)."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []
        self.rcpt_answer: str | None = None  # e.g. "550 5.1.1 no such user"; None: accepted
        self.data_answer = "250 OK"
        self.hang = False
        self.hang_seconds = 10.0
        self.data_seen = 0  # DATA commands that reached the handler (a hung one included)
        self._release: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if self.rcpt_answer:
            return self.rcpt_answer
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.data_seen += 1
        if self.hang:
            self._loop = asyncio.get_running_loop()
            self._release = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), self.hang_seconds)
            return "451 too late"
        if self.data_answer.startswith("250"):
            self.messages.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content, policy=default)))
        return self.data_answer

    def release(self) -> None:
        """End a hang now (from any thread)."""
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def smtp_server(port: int | None = None) -> Iterator[tuple[Inbox, int]]:
    """A running server (its own thread and loop) and its port (``port``, else a free one); stopped on exit."""
    inbox = Inbox()
    port = port or free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        inbox.release()
        controller.stop()
