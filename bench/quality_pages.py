"""The console's ``Quality`` page for 100 partners (docs/rules/quality.md#console), part of
``bench.quality`` (which seeds the bookings and computes the scorecards first): a 400-day history
stored as the daily job leaves it, then the page, its CSV and one count's bookings timed in-process
through the whole app. Target: the page <= 300 ms."""

from __future__ import annotations

import copy
import re
import statistics
import time
from datetime import datetime, timedelta
from typing import Any

import httpx

from transfers.app import create_app
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.logging import configure_logging
from transfers.operators import service as operators
from transfers.operators.models import Role
from transfers.quality import repository
from transfers.quality import service as quality

SECRET = "bench-quality-secret-key-0123456789abcdef"
PASSWORD = "bench password 123"
TARGET_MS = 300.0


def _url(dsn: str) -> str:
    return dsn.replace("postgresql://", "postgresql+asyncpg://", 1)


def _moved(card: dict[str, Any], day_back: int, as_of: str) -> dict[str, Any]:
    """A past day's copy of a scorecard: its rates moved a little, so the charts have a shape."""
    moved = copy.deepcopy(card)
    moved["as_of"] = as_of
    wobble = ((day_back * 7919) % 41 - 20) / 1000  # -0.020 .. +0.020
    for rate, value in moved["rates"].items():
        if value is not None:
            moved["rates"][rate] = round(min(1.0, max(0.0, value + (wobble if rate != "decline" else wobble / 4))), 4)
    return moved


async def store_history(dsn: str, result: quality.Result, *, days: int) -> None:
    """Today's scorecards as computed, and a moved copy for each of the ``days - 1`` days before."""
    db = Database(_url(dsn), pool_size=2, application_name="bench-quality")
    started = time.monotonic()
    try:
        rows = result.rows()
        for back in range(days - 1, -1, -1):
            as_of = result.as_of - timedelta(days=back)
            stamp = as_of.isoformat().replace("+00:00", "Z")
            day_rows = rows if back == 0 else [{**r, "card": _moved(r["card"], back, stamp)} for r in rows]
            async with db.write() as conn:
                await repository.replace_day(conn, as_of.date().isoformat(), as_of, day_rows, now=as_of)
        print(f"  stored {days} days x {len(rows)} scorecards in {time.monotonic() - started:.1f} s")
    finally:
        await db.dispose()


async def stored_result(dsn: str) -> quality.Result:
    """The latest scorecards a run of this bench stored (``--pages-only``)."""
    db = Database(_url(dsn), pool_size=2, application_name="bench-quality")
    try:
        async with db.read() as conn:
            latest = await repository.latest(conn)
    finally:
        await db.dispose()
    cards = [latest[pid].card for pid in sorted(latest)]
    return quality.Result(datetime.fromisoformat(cards[0]["as_of"]), cards, {})


async def _sign_in(client: httpx.AsyncClient) -> None:
    login = await client.get("/console/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
    assert token is not None
    signed = await client.post(
        "/console/login",
        data={"csrf_token": token.group(1), "email": "bench-quality@example.com", "password": PASSWORD},
    )
    assert signed.status_code == 303, signed.text


async def measure_pages(dsn: str, result: quality.Result, rounds: int) -> bool:
    db = Database(_url(dsn), pool_size=2, application_name="bench-quality")
    try:
        listed = {o.email for o in await operators.list_operators(db)}
        if "bench-quality@example.com" not in listed:
            await operators.create_operator(
                db,
                SystemClock(),
                email="bench-quality@example.com",
                role=Role.SUPPORT,
                password=PASSWORD,
                actor="bench",
            )
    finally:
        await db.dispose()
    settings = Settings(
        database_url=dsn,
        environment="sandbox",
        sandbox_partner=False,
        embedded_worker=False,
        secret_key=SECRET,
        log_level="WARNING",
    )
    configure_logging("WARNING", "console")
    app = create_app(settings, configure_logs=False)
    first = max(result.cards, key=lambda c: c["counts"]["on_time"])  # the longest list of one count
    count_link = (
        f"/console/bookings?partner={first['partner_id']}&counted=on_time&as_of={first['as_of'].replace('+', '%2B')}"
    )
    pages = {
        f"Quality page, {len(result.cards)} partners": "/console/quality",
        "its CSV": "/console/quality.csv",
        f"a count's bookings (on time: {first['counts']['on_time']:,})": count_link,
    }
    ok = True
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        await _sign_in(client)
        print(f"\n{'page':44} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>7}  bytes")
        for name, path in pages.items():
            walls, cpus = [], []
            answer = None
            for _ in range(rounds + 1):
                wall, cpu = time.perf_counter(), time.process_time()
                answer = await client.get(path)
                walls.append((time.perf_counter() - wall) * 1000)
                cpus.append((time.process_time() - cpu) * 1000)
                assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
            walls, cpus = walls[1:], cpus[1:]  # the first warms the templates' cache
            p95 = statistics.quantiles(walls, n=20)[-1] if len(walls) > 1 else walls[0]
            assert answer is not None
            print(
                f"{name:44} {statistics.median(walls):8.1f} {p95:8.1f} {max(walls):8.1f} "
                f"{statistics.median(cpus):7.1f}  {len(answer.content):,}"
            )
            if path == "/console/quality":
                ok = p95 <= TARGET_MS
                assert answer.text.count("<svg") == 3 * len(result.cards)
        print(f"the Quality page p95 {'within' if ok else 'OVER'} the {TARGET_MS:.0f} ms target")
    return ok
