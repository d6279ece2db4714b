"""One kept-alive HTTP/1.1 connection to a partner, parsed by httptools, and the transport's errors.

Split from ``partners/http11.py`` (the pool, ``Http11Client``), which is the module callers use:
it re-exports the errors. What a connection does and why is told there.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

import httptools

from transfers.errors import Invalid, Unavailable

if TYPE_CHECKING:
    from transfers.partners.http11 import Http11Client
    from transfers.partners.http11 import _Slots as Slots


class PartnerTransportError(Unavailable):
    """A failed exchange; ``name`` is what it is reported as (``client.transport_error_name``)."""

    name = "RemoteProtocolError"


class PartnerConnectFailed(PartnerTransportError):
    name = "ConnectError"


class PartnerDisconnected(PartnerTransportError):
    name = "RemoteProtocolError"


class PartnerReset(PartnerTransportError):
    name = "ReadError"


class AnswerTooLarge(Unavailable):
    """The answer passed the cap (declared, read, or decompressed)."""


class UnusableRequest(Invalid):
    """A URL that is not http(s) with a host, or a header value with a line break: never sent."""


class Connection(asyncio.Protocol):
    """One kept-alive connection; one exchange at a time (``begin``). When the exchange is over (an
    answer, or a failure) ``ended`` is its time (``time.perf_counter``), ``answer`` or ``error`` its
    outcome, and the ``listener`` given to ``begin`` is told, once."""

    def __init__(self, limit: int, pool: Http11Client, key: tuple[bool, str, int], slots: Slots) -> None:
        self.limit = limit
        self.pool = pool
        self.key = key
        self.slots = slots  # its partner's (``Http11Client._slots_of(key)``), freed when an exchange ends
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.listener: Callable[[Connection], None] | None = None  # set while an exchange is in flight
        self.answer: tuple[int, bytes] | None = None
        self.error: BaseException | None = None
        self.ended = 0.0
        self.closed = False
        self.idle_since = 0.0
        self._reset_answer()

    def _reset_answer(self) -> None:
        self.status = 0
        self.chunks: list[bytes] = []
        self.size = 0
        self.length: int | None = None
        self.encoding = b""
        self.decoder: zlib._Decompress | None = None
        self.headers_done = False
        self.done = False
        self.reusable = False

    # -- the exchange --

    def begin(self, request: bytes, listener: Callable[[Connection], None]) -> None:
        """Write ``request``; ``listener(self)`` is called once the exchange is over."""
        if self.transport is None or self.closed:
            raise PartnerDisconnected("connection closed")
        self._reset_answer()
        self.answer = None
        self.error = None
        self.listener = listener
        self.transport.write(request)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def _fail(self, exc: BaseException) -> None:
        if self.listener is not None:
            self.error = exc
            self.abort()
            self._end()
        else:
            self.abort()

    def _end(self) -> None:
        """The exchange is over: the connection goes back to its pool (or is closed), then the
        listener is told. Runs inside the parser's callbacks: nothing here may raise."""
        listener, self.listener = self.listener, None
        self.ended = time.perf_counter()
        self.pool._release(self)
        if listener is not None:
            listener(self)

    # -- asyncio.Protocol --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's transports are not subclasses

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.listener is None:
            return
        if self.headers_done and self.length is None and not self.parser.should_keep_alive():
            # An answer without a length ends with the connection (HTTP/1.0 style): it is complete.
            self.reusable = False
            self._complete()
            return
        if exc is not None:
            self._fail(PartnerReset(str(exc) or type(exc).__name__))
        else:
            self._fail(PartnerDisconnected("server closed the connection before the answer's end"))

    def data_received(self, data: bytes) -> None:
        if self.listener is None:
            self.abort()  # bytes nobody asked for: the connection is not in a known state
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(PartnerDisconnected("protocol upgrade"))
        except httptools.HttpParserCallbackError as exc:
            cause = exc.__context__
            known = isinstance(cause, AnswerTooLarge | PartnerTransportError)
            self._fail(cause if known and cause is not None else PartnerDisconnected(str(exc)))
        except httptools.HttpParserError as exc:
            self._fail(PartnerDisconnected(str(exc)))

    # -- httptools callbacks --

    def on_message_begin(self) -> None:
        if self.listener is None:
            # A second answer in the bytes of the first one's (nobody asked for it): the connection,
            # already back in its pool, is not in a known state; closed, it is never taken again.
            self.abort()

    def on_header(self, name: bytes, value: bytes) -> None:
        lower = name.lower()
        if lower == b"content-length":
            try:
                self.length = int(value)
            except ValueError:
                self.length = None
        elif lower == b"content-encoding":
            self.encoding = value.strip().lower()

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = True
        if self.length is not None and self.length > self.limit:
            raise AnswerTooLarge()  # never read; the connection is closed, not reused
        if self.encoding == b"gzip":
            self.decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.encoding == b"deflate":
            self.decoder = zlib.decompressobj(zlib.MAX_WBITS)

    def on_body(self, body: bytes) -> None:
        if self.decoder is not None:
            try:
                body = self.decoder.decompress(body, self.limit - self.size + 1)
            except zlib.error as exc:
                raise PartnerDisconnected(f"bad {self.encoding.decode()} body: {exc}") from None
            if self.decoder.unconsumed_tail:
                raise AnswerTooLarge()  # more output than the cap allows is waiting
        self.size += len(body)
        if self.size > self.limit:
            raise AnswerTooLarge()
        if body:
            self.chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:  # an interim answer (100 Continue, 103 Early Hints): the real one follows
            self._reset_answer()
            return
        if self.decoder is not None:
            rest = self.decoder.flush()
            self.size += len(rest)
            if self.size > self.limit:
                raise AnswerTooLarge()
            if rest:
                self.chunks.append(rest)
        self.reusable = self.parser.should_keep_alive()
        self._complete()

    def _complete(self) -> None:
        self.done = True
        if self.listener is not None:
            chunks = self.chunks
            self.answer = (self.status, chunks[0] if len(chunks) == 1 else b"".join(chunks))
            self._end()


Exchange = Connection
"""An exchange in flight started by ``Http11Client.start``: its ``answer`` or ``error``, and
``ended``, once its listener has been told."""
