"""uvicorn's httptools protocol, with a response's head and its first body write sent as one.

uvicorn writes the status line and headers on ``http.response.start`` and the body on
``http.response.body``: two ``send`` system calls per answer, and on loopback each one also pays
the receiver's TCP processing (bench/README.md, "Search fan-out alone": 5 % of the API process's
samples were these writes). Here each connection's cycles write through ``_HeadHeld``, which keeps
a response head back until the next write of the same connection and sends both in one write. A
head is never held past the event loop's current pass: if nothing follows it at once (a streamed
answer's first chunk still being made, a HEAD request's answer, the connection closing) it goes out
alone on the next pass, as uvicorn would have sent it. The bytes on the wire are unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_HEAD = b"HTTP/1.1 "
_CONTINUE = b"HTTP/1.1 100 "  # the interim answer must go out before the client sends its body


class _HeadHeld:
    """The cycle's view of the connection's transport: ``write`` may hold one response head."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + data)
        elif data.startswith(_HEAD) and not data.startswith(_CONTINUE):
            self._held = data
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:  # is_closing, get_extra_info, ...: the transport's own
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` whose request cycles write through one ``_HeadHeld`` per connection."""

    _held_view: _HeadHeld | None = None

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        cycle = self.cycle
        # The cycle's task has not run yet (it starts on the loop's next pass), so nothing has been
        # written through it; an upgrade request makes no cycle and keeps the plain transport.
        if cycle is not None and cycle.transport is self.transport:
            view = self._held_view
            if view is None:
                view = self._held_view = _HeadHeld(self.transport, self.loop)
            cycle.transport = view  # type: ignore[assignment]
