"""The bench partner: the partner webhook contract on many loopback ports, from one small process.

Every "good" port answers ``POST /booking/search`` with the vehicles of ``tests/fake_partner.py``
after a fixed latency L, and ``/booking/create``, ``/booking/update`` and ``/booking/info/...``
at once. A "hang" port reads requests and never answers (the fan-out deadline must cut it off); an
"instant" port answers search at once. ``--vehicles 3`` adds a third vehicle to the answer (the
yardstick's partner, ``bench/yardstick.py``).

With ``--record-holds`` each search answer's hold (from the request read to the answer written) is
kept, and ``GET /bench/holds`` answers their count, p50 and p99 in ms and forgets them: the partners'
own lateness, which the measured latency includes.

It is a bare asyncio protocol on uvloop, not a web framework: with 10 partners per search it
answers ten requests for each one the service serves, on the same two cores, so its own cost must
stay negligible next to the service it feeds. Signatures are not verified (the tests do that).

    python -m bench.partner --ports 9101,9102 --hang-ports 9111 --latency-ms 200
    python -m bench.partner --ports 9101,9102 --instant-ports 9112 --vehicles 3 --record-holds
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import statistics
import time
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


THIRD_VEHICLE = {
    "id": "estate-1",
    "make": "Skoda",
    "model": "Superb Combi",
    "type": "ESTATE",
    "price": "55.00",
    "currency": "EUR",
    "capacity": {"passengers": 4, "suitcases": 4, "small_bags": 3},
    "extras": [],
}


def search_answer(vehicles: int) -> bytes:
    listed = [*default_vehicles(), THIRD_VEHICLE][:vehicles]
    return _response(orjson.dumps({"distance_km": 25, "vehicles": listed}))


SEARCH = search_answer(2)
UPDATE = _response(b'{"status":"Success","message":"ok"}')
INFO = _response(b'{"status":"PENDING_APPROVAL"}')
NOT_FOUND = _response(b'{"status":"Error","message":"not found"}', b"404 Not Found")


def _create() -> bytes:
    return _response(b'{"reservation_no":"P-%d","status":"PENDING"}' % next(_counter))


class Holds:
    """The search answers' holds (seconds), kept only when asked for (``--record-holds``)."""

    def __init__(self, record: bool) -> None:
        self.record = record
        self.seconds: list[float] = []

    def report(self) -> bytes:
        ms = sorted(s * 1000 for s in self.seconds)
        self.seconds.clear()
        if not ms:
            return _response(b'{"count":0}')
        p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
        return _response(orjson.dumps({"count": len(ms), "p50_ms": statistics.median(ms), "p99_ms": p99}))


class PartnerProtocol(asyncio.Protocol):
    def __init__(self, latency: float, hang: bool, *, search: bytes = SEARCH, holds: Holds | None = None) -> None:
        self.latency = latency
        self.hang = hang
        self.search = search
        self.holds = holds
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
            if self.holds is not None and self.holds.record:
                asyncio.get_running_loop().call_later(self.latency, self._write_held, time.perf_counter())
            elif self.latency:
                asyncio.get_running_loop().call_later(self.latency, self._write, self.search)
            else:
                self._write(self.search)
        elif path.startswith(b"/bench/holds") and self.holds is not None:
            self._write(self.holds.report())
        elif path.startswith(b"/booking/create"):
            self._write(_create())
        elif path.startswith(b"/booking/update"):
            self._write(UPDATE)
        elif path.startswith(b"/booking/info/"):
            self._write(INFO)
        else:
            self._write(NOT_FOUND)

    def _write_held(self, read_at: float) -> None:
        assert self.holds is not None
        self._write(self.search)
        self.holds.seconds.append(time.perf_counter() - read_at)

    def _write(self, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(payload)


async def serve(
    ports: list[int],
    hang_ports: list[int],
    latency: float,
    *,
    instant_ports: tuple[int, ...] = (),
    vehicles: int = 2,
    record_holds: bool = False,
) -> None:
    loop = asyncio.get_running_loop()
    search = search_answer(vehicles)
    holds = Holds(record_holds)
    servers = []
    kinds = [
        *((p, latency, False) for p in ports),
        *((p, 0.0, False) for p in instant_ports),
        *((p, latency, True) for p in hang_ports),
    ]
    for port, wait, hang in kinds:
        servers.append(
            await loop.create_server(
                lambda w=wait, h=hang: PartnerProtocol(w, h, search=search, holds=holds),  # type: ignore[misc]
                "127.0.0.1",
                port,
                backlog=1024,
            )
        )
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(
        f"bench partner ready on {ports} (instant: {list(instant_ports)}, hang: {hang_ports}), "
        f"latency {latency * 1000:.0f} ms, {vehicles} vehicles",
        flush=True,
    )
    await stop.wait()
    for server in servers:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ports", required=True, help="comma-separated good partner ports")
    parser.add_argument("--hang-ports", default="", help="comma-separated ports that never answer")
    parser.add_argument("--instant-ports", default="", help="comma-separated ports that answer search at once")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--vehicles", type=int, choices=(1, 2, 3), default=2, help="vehicles in a search answer")
    parser.add_argument("--record-holds", action="store_true", help="keep the holds for GET /bench/holds")
    args = parser.parse_args()
    ports = [int(p) for p in args.ports.split(",") if p]
    hang = [int(p) for p in args.hang_ports.split(",") if p]
    instant = tuple(int(p) for p in args.instant_ports.split(",") if p)
    main_task = serve(
        ports,
        hang,
        args.latency_ms / 1000,
        instant_ports=instant,
        vehicles=args.vehicles,
        record_holds=args.record_holds,
    )
    try:
        import uvloop

        uvloop.run(main_task)
    except ImportError:
        asyncio.run(main_task)


if __name__ == "__main__":
    main()
