"""Instructions per search, in-process, for callgrind (docs/operations/performance-history.md#search-fifth-pass).

Wall-clock CPU per search moves by 20-40 % between rounds on a shared machine; instruction counts
move by ~1 %. This drives the whole ASGI app in-process (no uvicorn, no client socket; the partner
calls and the database are real), 4 searches at a time, and switches callgrind's instrumentation
on only around the measured searches. Against the servers of ``python -m bench.search --hold``
(its partner process and seeded databases), with the API process's environment:

    env $(tr '\\0' '\\n' < /proc/<API pid>/environ | grep ^TRANSFERS_) TRANSFERS_PARTNER_CACHE_SECONDS=3600 \\
        TRANSFERS_PARTNER_HEALTH_FLUSH_SECONDS=300 TRANSFERS_REQUEST_LOG_FLUSH_SECONDS=60 [PYTHONPATH=<old src>] \\
        valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=out.cg \\
        .venv/bin/python -m bench.search_callgrind <requests file> 200
    grep ^totals out.cg    # / 200 = instructions per search

The three settings keep the once-a-second work (partner directory, health and request-log flushes)
out of the window: under callgrind a search takes ~50x as long, so that work would be counted
several times more often per search than in service. ``--answers FILE`` writes the distinct
answers (``search_id`` masked) for a byte-for-byte comparison of two trees.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import uvloop

from bench.asgi import Asgi


def _instrument(on: bool) -> None:
    """Callgrind's instrumentation on or off for this process (a no-op outside valgrind)."""
    subprocess.run(
        ["callgrind_control", "-i", "on" if on else "off", str(os.getpid())], capture_output=True, check=False
    )


async def _run(requests: Path, count: int, warmup: int, answers: Path | None) -> None:
    os.environ["TRANSFERS_EMBEDDED_WORKER"] = "0"
    from transfers.app import create_app

    app = create_app()
    _, path, key, body_text = requests.read_text().splitlines()[0].split("\t")
    body = body_text.encode()
    client = Asgi(app, key, host=b"127.0.0.1")
    seen: set[bytes] = set()

    async def one() -> None:
        status, answer = await client.post(path, body)
        if status != 200:
            raise RuntimeError(f"search answered {status}: {answer[:500]!r}")
        if answers is not None:
            seen.add(re.sub(rb'"search_id":"[^"]*"', b'"search_id":"X"', answer))

    async def batches(total: int, step: Callable[[], Awaitable[None]]) -> None:
        for _ in range(total // 4):
            await asyncio.gather(*(step() for _ in range(4)))

    async with app.router.lifespan_context(app):
        await batches(warmup, one)
        _instrument(True)
        await batches(count, one)
        _instrument(False)
    if answers is not None:
        answers.write_bytes(b"\n".join(sorted(seen)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("requests", type=Path, help="a request file printed by bench.search --hold")
    parser.add_argument("count", type=int, nargs="?", default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--answers", type=Path, default=None)
    a = parser.parse_args()
    uvloop.run(_run(a.requests, a.count, a.warmup, a.answers))


if __name__ == "__main__":
    main()
