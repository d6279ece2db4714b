"""The partner calls' HTTP/1.1 transport: kept-alive connections per partner, httptools' C parser.

Why not aiohttp: a partner exchange through ``aiohttp.ClientSession.request`` cost
~0.07 ms of CPU on this machine (URL and header objects, the request and response classes, a
writer task, trace and cookie hooks), the same exchange on a bare asyncio protocol with httptools'
parser ~0.015 ms; a 10-partner search makes ten of them and a 50-partner one fifty. What partner
calls need is small and fixed: one request at a time per connection, a body known in advance, an
answer read whole up to a cap (``Content-Length``, chunked, or until close; gzip/deflate
decompressed under the same cap), no redirects followed, no cookies, no proxies.

What the caller sees on failure: ``PartnerConnectFailed`` (nothing was sent: refused,
unreachable, DNS, TLS handshake), ``PartnerDisconnected`` (closed mid-answer, or not HTTP),
``PartnerReset`` (reset while sending or reading), ``AnswerTooLarge`` (over the cap),
``BlockedDestination`` from the SSRF guard, or ``UnusableRequest`` for a URL or header it will not
send. Each ``PartnerTransportError`` carries the ``name`` it is reported under, the names operators
knew from the httpx and aiohttp transports before it (``client.transport_error_name``). The deadline is the caller's
(``asyncio.timeout``, or a fan-out's ``client.SharedDeadline``): a cancelled exchange closes its
connection, which is never reused.

``Http11Client.start`` is the task-free way in (a search's fan-out, ``call_batch.CallBatch``): when an
idle kept-alive connection to the partner exists, the request is written at once and the exchange
is the connection itself, which tells its ``listener`` when it is over (``Exchange``); nothing is
awaited and no task is made. Otherwise ``start`` returns ``None`` and the caller uses ``request``
(connect, SSRF-guarded resolve), in a task. ``abandon`` ends an exchange nobody waits for any more
(a deadline, a cancelled search): its connection is closed, never reused.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from yarl import URL

from transfers.partners.http11_connection import AnswerTooLarge as AnswerTooLarge
from transfers.partners.http11_connection import Connection as _Connection
from transfers.partners.http11_connection import Exchange as Exchange
from transfers.partners.http11_connection import PartnerConnectFailed as PartnerConnectFailed
from transfers.partners.http11_connection import PartnerDisconnected as PartnerDisconnected
from transfers.partners.http11_connection import PartnerReset as PartnerReset
from transfers.partners.http11_connection import PartnerTransportError as PartnerTransportError
from transfers.partners.http11_connection import UnusableRequest as UnusableRequest
from transfers.partners.ssrf import Resolver, checked_addresses


@dataclass(frozen=True, slots=True)
class Target:
    """A partner URL as the transport uses it, parsed once per URL (``target``)."""

    tls: bool
    host: str  # as resolved and connected to (IDNA-encoded, IPv6 without brackets)
    port: int
    head: str  # "<path?query> HTTP/1.1\r\nHost: <host[:port]>\r\n"
    key: tuple[bool, str, int]


@lru_cache(maxsize=4096)
def target(url: str) -> Target:
    """``UnusableRequest`` for what cannot be called (not http(s), no host)."""
    try:
        parsed = URL(url)
        host, port = parsed.raw_host, parsed.port
    except ValueError as exc:
        raise UnusableRequest(f"not a URL: {exc}") from None
    if parsed.scheme not in ("http", "https") or not host or port is None:
        raise UnusableRequest(f"not an http(s) URL: {url!r}")
    tls = parsed.scheme == "https"
    head = f"{parsed.raw_path_qs or '/'} HTTP/1.1\r\nHost: {parsed.host_port_subcomponent}\r\n"
    if head.count("\r") != 2 or head.count("\n") != 2:
        raise UnusableRequest("line break in the URL")
    return Target(tls, host, port, head, (tls, host, port))


def header_lines(headers: dict[str, str]) -> str:
    """``Name: value\\r\\n`` per header, in the dict's order; ``UnusableRequest`` for a value with a
    line break (never sent)."""
    values = "".join(headers.values())
    if "\n" in values or "\r" in values:
        raise UnusableRequest("line break in a header value")
    return "".join([f"{name}: {value}\r\n" for name, value in headers.items()])


class _Slots:
    """At most ``n`` exchanges at once per partner; unlike ``asyncio.Semaphore`` it can also be
    taken without awaiting (``try_take``), for ``Http11Client.start``."""

    __slots__ = ("free", "waiters")

    def __init__(self, n: int) -> None:
        self.free = n
        self.waiters: deque[asyncio.Future[None]] = deque()

    def try_take(self) -> bool:
        if self.free > 0 and not self.waiters:
            self.free -= 1
            return True
        return False

    async def take(self) -> None:
        if self.try_take():
            return
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot, but cancelled before it could use it: pass it on
            elif waiter in self.waiters:
                self.waiters.remove(waiter)
            raise

    def release(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot goes to the waiter as it is: ``free`` unchanged
                return
        self.free += 1


def _settle(waiter: asyncio.Future[tuple[int, bytes]], connection: _Connection) -> None:
    if waiter.done():
        return
    if connection.answer is not None:
        waiter.set_result(connection.answer)
    else:
        waiter.set_exception(connection.error or PartnerDisconnected("exchange ended without an answer"))


class Http11Client:
    """Kept-alive connections per partner (scheme, host, port), at most ``per_host`` at once."""

    def __init__(
        self,
        *,
        max_response_bytes: int,
        user_agent: str,
        keepalive_seconds: float,
        per_host: int,
        guarded: bool,
        resolver: Resolver,
        trusted: frozenset[tuple[bool, str, int]] = frozenset(),
    ) -> None:
        self._max = max_response_bytes
        self._defaults = f"User-Agent: {user_agent}\r\nAccept-Encoding: gzip, deflate\r\n"
        self._keepalive = keepalive_seconds
        self._per_host = per_host
        self._guarded = guarded
        self._resolver = resolver
        # Origins connected to without the guard: the built-in sandbox partner, which this service mounts
        # under its own URL (``PartnerClient``'s ``trusted_url``), is trusted by that identity.
        self._trusted = trusted
        self._idle: dict[tuple[bool, str, int], list[_Connection]] = {}
        self._slots: dict[tuple[bool, str, int], _Slots] = {}
        self._open: set[_Connection] = set()
        self._tls: ssl.SSLContext | None = None
        self._loop = asyncio.get_running_loop()  # made inside the loop it serves (client.PartnerClient.transport)

    def _encode(self, method: str, where: Target, headers: dict[str, str] | str, body: bytes) -> bytes:
        """The request's bytes; ``headers`` as a dict, or as ``header_lines`` of one (already checked)."""
        lines = headers if isinstance(headers, str) else header_lines(headers)
        if body or method in ("POST", "PUT", "PATCH"):
            head = f"{method} {where.head}{self._defaults}{lines}Content-Length: {len(body)}\r\n\r\n"
        else:
            head = f"{method} {where.head}{self._defaults}{lines}\r\n"
        return head.encode() + body if body else head.encode()

    def _slots_of(self, key: tuple[bool, str, int]) -> _Slots:
        slots = self._slots.get(key)
        if slots is None:
            slots = self._slots[key] = _Slots(self._per_host)
        return slots

    def start(
        self,
        method: str,
        url: str,
        headers: dict[str, str] | str,
        body: bytes,
        listener: Callable[[Exchange], None],
    ) -> Exchange | None:
        """The exchange started at once on an idle kept-alive connection (the request written before
        this returns; ``listener`` told when it is over, never before this returns), or ``None``
        when it needs a new connection or a free slot: then ``request``, in a task. ``headers``: a
        dict, or its ``header_lines`` already written (and checked) by the caller."""
        where = target(url)
        idle = self._idle.get(where.key)
        if not idle:
            return None
        slots = self._slots_of(where.key)
        if not slots.try_take():
            return None
        connection = self._take(where.key)
        if connection is None:
            slots.release()
            return None
        try:
            connection.begin(self._encode(method, where, headers, body), listener)
        except BaseException:
            # Nothing written (a header with a line break): the connection goes back as it was.
            idle.append(connection)
            slots.release()
            raise
        return connection

    def abandon(self, exchange: Exchange) -> None:
        """Nobody waits for this exchange any more (its deadline passed, its search was cancelled):
        its connection is closed, never reused, and its slot freed. Nothing if it is already over."""
        if exchange.listener is None:
            return
        exchange.listener = None
        exchange.abort()
        self._open.discard(exchange)
        exchange.slots.release()

    def _release(self, connection: _Connection) -> None:
        """An exchange is over (``_Connection._end``): its slot freed, its connection kept or closed."""
        connection.slots.release()
        if connection.reusable and not connection.closed:
            connection.idle_since = self._loop.time()
            self._idle.setdefault(connection.key, []).append(connection)
        else:
            connection.close()
            self._open.discard(connection)

    async def request(self, method: str, url: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        where = target(url)
        request = self._encode(method, where, headers, body)
        slots = self._slots_of(where.key)
        await slots.take()
        try:
            connection = self._take(where.key) or await self._connect(where)
            waiter: asyncio.Future[tuple[int, bytes]] = self._loop.create_future()
            connection.begin(request, lambda ended: _settle(waiter, ended))
        except BaseException:
            slots.release()
            raise
        try:
            return await waiter
        except BaseException:
            self.abandon(connection)  # cancelled (a deadline): closed, never reused; nothing if it failed
            raise

    def _take(self, key: tuple[bool, str, int]) -> _Connection | None:
        idle = self._idle.get(key)
        if not idle:
            return None
        oldest = self._loop.time() - self._keepalive
        while idle:
            connection = idle.pop()
            if not connection.closed and connection.idle_since >= oldest:
                return connection
            connection.close()
            self._open.discard(connection)
        return None

    async def _connect(self, where: Target) -> _Connection:
        loop = asyncio.get_running_loop()
        tls = self._context() if where.tls else None
        if self._guarded and where.key not in self._trusted:
            # Resolve, check every address, connect to a checked one (partners/ssrf.py): never to the name.
            try:
                hosts = [str(a) for a in await checked_addresses(where.host, where.port, self._resolver)]
            except OSError as exc:  # ssrf.UnresolvableHost: a partner down in DNS
                raise PartnerConnectFailed(str(exc)) from exc
        else:
            hosts = [where.host]
        failure: OSError | None = None
        for host in hosts:
            try:
                _, connection = await loop.create_connection(
                    lambda: _Connection(self._max, self, where.key, self._slots_of(where.key)),
                    host,
                    where.port,
                    ssl=tls,
                    server_hostname=where.host if tls is not None else None,
                )
            except OSError as exc:  # refused, unreachable, DNS, TLS handshake (ssl.SSLError)
                failure = exc
                continue
            self._open.add(connection)
            return connection
        raise PartnerConnectFailed(str(failure) if failure else "no address") from failure

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    def close(self) -> None:
        """Close every connection (idle or in use)."""
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._idle.clear()
