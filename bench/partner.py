"""The bench partner: the partner webhook contract on many loopback ports, from one small process.

Every "good" port answers ``POST /booking/search`` with the vehicles of ``tests/fake_partner.py``
after a fixed latency L, and ``/booking/create``, ``/booking/update`` and ``/booking/info/...``
at once. A "hang" port reads requests and never answers (the fan-out deadline must cut it off).

It is a bare asyncio protocol on uvloop, not a web framework: with 10 partners per search it
answers ten requests for each one the service serves, on the same two cores, so its own cost must
stay negligible next to the service it feeds. Signatures are not verified (the tests do that).

    python -m bench.partner --ports 9101,9102 --hang-ports 9111 --latency-ms 200
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
from typing import cast

import orjson
from tests.fake_partner import default_vehicles

_counter = itertools.count(1)


def _response(body: bytes, status: bytes = b"200 OK") -> bytes:
    return (
        b"HTTP/1.1 "
        + status
        + b"\r\ncontent-type: application/json\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


SEARCH = _response(orjson.dumps({"distance_km": 25, "vehicles": default_vehicles()}))
UPDATE = _response(b'{"status":"Success","message":"ok"}')
INFO = _response(b'{"status":"PENDING_APPROVAL"}')
NOT_FOUND = _response(b'{"status":"Error","message":"not found"}', b"404 Not Found")


def _create() -> bytes:
    return _response(b'{"reservation_no":"P-%d","status":"PENDING"}' % next(_counter))


class PartnerProtocol(asyncio.Protocol):
    def __init__(self, latency: float, hang: bool) -> None:
        self.latency = latency
        self.hang = hang
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not subclasses

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).lower()
            length = 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17 : stop if stop >= 0 else len(head)].strip())
            total = end + 4 + length
            if len(self.buffer) < total:
                return
            del self.buffer[:total]
            self._answer(head.split(b" ", 2)[1])

    def _answer(self, path: bytes) -> None:
        if self.hang:
            return
        if path.startswith(b"/booking/search"):
            asyncio.get_running_loop().call_later(self.latency, self._write, SEARCH)
        elif path.startswith(b"/booking/create"):
            self._write(_create())
        elif path.startswith(b"/booking/update"):
            self._write(UPDATE)
        elif path.startswith(b"/booking/info/"):
            self._write(INFO)
        else:
            self._write(NOT_FOUND)

    def _write(self, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(payload)


async def serve(ports: list[int], hang_ports: list[int], latency: float) -> None:
    loop = asyncio.get_running_loop()
    servers = []
    for port, hang in [*((p, False) for p in ports), *((p, True) for p in hang_ports)]:
        servers.append(
            await loop.create_server(
                lambda h=hang: PartnerProtocol(latency, h),  # type: ignore[misc]
                "127.0.0.1",
                port,
                backlog=1024,
            )
        )
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"bench partner ready on {ports} (hang: {hang_ports}), latency {latency * 1000:.0f} ms", flush=True)
    await stop.wait()
    for server in servers:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", required=True, help="comma-separated good partner ports")
    parser.add_argument("--hang-ports", default="", help="comma-separated ports that never answer")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    args = parser.parse_args()
    ports = [int(p) for p in args.ports.split(",") if p]
    hang = [int(p) for p in args.hang_ports.split(",") if p]
    try:
        import uvloop

        uvloop.run(serve(ports, hang, args.latency_ms / 1000))
    except ImportError:
        asyncio.run(serve(ports, hang, args.latency_ms / 1000))


if __name__ == "__main__":
    main()
