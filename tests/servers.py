"""Real HTTP servers on loopback for the tests: the service itself and test partners.

Each runs under uvicorn as a task on the test session's event loop, bound to 127.0.0.1 on a free
port, so requests cross a real socket and a real HTTP stack exactly as in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import uvicorn


def free_port() -> int:
    """A port that was free a moment ago (for apps that must know their own URL before starting)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class _Server(uvicorn.Server):
    """uvicorn's server, minus two fixed pauses that only cost the tests time (measured: a stop took
    0.19 s; every test that serves a partner pays it at teardown):

    * its main loop looks at ``should_exit`` every 0.1 s; here ``LiveServer.stop`` also wakes it at once;
    * a forced stop (``graceful=False``: no lifespan shutdown, no waiting for connections or tasks)
      still sleeps 0.1 s after asking the open connections to close; here it only yields once, so
      idle keep-alive connections close before it returns. A graceful stop keeps uvicorn's own sequence.
    """

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.stop_requested = asyncio.Event()

    async def main_loop(self) -> None:
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop_requested.wait(), timeout=0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if not self.force_exit:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        await asyncio.sleep(0)
        for server in self.servers:
            await server.wait_closed()


class LiveServer:
    def __init__(self, app: Any, port: int = 0) -> None:
        self.app = app
        # timeout_keep_alive well above any client's idle time in a test: with uvicorn's 5 s, a
        # pooled connection idle for ~5 s could be closed by the server just as a test reused it
        # (httpx then raises ReadError; seen once in a concurrent-burst test). Production keeps 5 s.
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_config=None,
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=2,
            timeout_keep_alive=60,
        )
        self.server = _Server(config)
        self.server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._task: asyncio.Task[None] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> LiveServer:
        self._task = asyncio.create_task(self.server.serve())
        for _ in range(500):
            if self.server.started:
                break
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        else:
            raise RuntimeError("server did not start")
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    async def stop(self, *, graceful: bool = False) -> None:
        self.server.should_exit = True
        self.server.force_exit = not graceful
        self.server.stop_requested.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._task, timeout=10)
        lifespan = getattr(self.server, "lifespan", None)
        if not graceful and lifespan is not None and not lifespan.shutdown_event.is_set():
            # uvicorn's forced exit skips the app's lifespan shutdown, which closes its database pools:
            # every test app stopped that way kept up to 14 PostgreSQL connections until the session
            # ended (72 seen after tests/clientapi), and the suite ran into max_connections.
            await asyncio.wait_for(lifespan.shutdown(), timeout=10)


@contextlib.asynccontextmanager
async def serving(app: Any) -> AsyncIterator[LiveServer]:
    server = await LiveServer(app).start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.contextmanager
def kept_public_url() -> Iterator[None]:
    """The process's public base URL (``transfers/public_urls.py``) as it was before.

    Production runs one deployment per process, so ``Services.build`` sets it once. The tests serve
    several apps in one process: an app built with its own ``public_base_url`` (the e2e ``sandbox``
    fixture, the SMS modules' services) would otherwise leave its port in the URL of every booking the
    session's ``service`` answers afterwards (``ride.tracking_url``): the order-dependent failure of
    ``test_tracking_url_is_in_the_booking_resource``. The conftest wraps every test in it; a fixture of a
    wider scope that builds such an app wraps its own life in it too (a test's wrapper starts after it)."""
    from transfers import public_urls

    base = public_urls.base_url()
    try:
        yield
    finally:
        public_urls.configure(base)
