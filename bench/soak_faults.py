"""The soak's faults (``bench/soak.py``), on a schedule scaled to the run's length.

At fixed fractions of the run: SIGKILL of an API process (restarted on its port), all of the
service's database connections cut with ``pg_terminate_backend`` (twice), SIGKILL of the worker
(restarted), the Redis stopped for 30 s, a partner hanging for a minute (both durations scaled by
minutes / 10, never under 5 and 10 s). Each fault is a window (start, end) the checks read: a 503
``UNAVAILABLE`` is expected inside one, no 5xx outside.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from bench.soak_checks import Window
from bench.soak_partners import SoakPartner
from bench.soak_world import Slot, SoakDatabase, wait_http, wait_logged, wait_redis


class Faults:
    def __init__(
        self,
        *,
        database: SoakDatabase,
        slots: dict[str, Slot],
        hanging: SoakPartner,
        started: float,
        seconds: float,
    ) -> None:
        self.database = database
        self.slots = slots
        self.hanging = hanging
        self.started = started
        self.seconds = seconds
        self.scale = seconds / 600.0
        self.windows: list[Window] = []
        self.log: list[str] = []
        self._started_at = 0.0

    def now(self) -> float:
        return time.monotonic() - self.started

    def schedule(self) -> list[tuple[float, str, Callable[[], Awaitable[str]]]]:
        return [
            (0.15, "kill -9 api-1", lambda: self._kill_api("api-1")),
            (0.23, "pg_terminate_backend (1)", self._cut_database),
            (0.30, "kill -9 worker", self._kill_worker),
            (0.38, "Redis stopped", self._stop_redis),
            (0.47, "partner hangs", self._hang_partner),
            (0.57, "pg_terminate_backend (2)", self._cut_database),
        ]

    async def run(self) -> None:
        for fraction, name, action in self.schedule():
            await asyncio.sleep(max(0.0, fraction * self.seconds - self.now()))
            start = self._started_at = self.now()
            detail = await action()
            self.windows.append(Window(name, start, self.now(), detail))
            self.log.append(f"{start:7.1f}s-{self.now():7.1f}s {name}: {detail}")
            print(f"  fault {self.log[-1]}", flush=True)

    @property
    def first_start(self) -> float:
        return self.windows[0].start if self.windows else self.seconds

    @property
    def last_end(self) -> float:
        return max((w.end for w in self.windows), default=self.seconds)

    async def _kill_api(self, name: str) -> str:
        slot = self.slots[name]
        old = slot.pid
        await slot.kill()
        slot.start()
        await wait_http(slot)
        return f"pid {old} killed, pid {slot.pid} serving again after {self.now() - self.windows_start():.1f}s"

    def windows_start(self) -> float:
        return self._started_at

    async def _kill_worker(self) -> str:
        slot = self.slots["worker"]
        old = slot.pid
        await slot.kill()
        slot.start()
        await wait_logged(slot, "worker_started")
        return f"pid {old} killed, pid {slot.pid} working again after {self.now() - self.windows_start():.1f}s"

    async def _cut_database(self) -> str:
        cut = await self.database.terminate_service_backends()
        await asyncio.sleep(2.0)  # the window covers the requests that were using those connections
        return f"{cut} connections terminated"

    async def _stop_redis(self) -> str:
        slot = self.slots["redis"]
        down = max(5.0, 30.0 * self.scale)
        await slot.stop()
        await asyncio.sleep(down)
        slot.start()
        assert slot.port is not None
        await wait_redis(slot.port)
        return f"down {down:.0f}s, back as pid {slot.pid}"

    async def _hang_partner(self) -> str:
        hung = max(10.0, 60.0 * self.scale)
        before = self.hanging.mode
        self.hanging.mode = "hang"
        await asyncio.sleep(hung)
        self.hanging.mode = before
        return f"{self.hanging.name} answered nothing for {hung:.0f}s"
