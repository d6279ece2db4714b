"""What partner health (src/transfers/partners/health.py) costs a search, and what a flush costs.

    .venv/bin/python -m bench.partner_health [DATABASE_URL]

Prints: the time ``HealthBuffer.record`` adds per partner call (on the search's path), and the time
of one flush (one transaction, one upsert statement per 500 rows) for a typical interval (10
partners in one minute) and a large one (1 000 partner-minutes), off the request path. Default
database: a throwaway SQLite file; pass ``postgresql://...`` of an empty database to measure there
(its schema is migrated first).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.partners import health_repository
from transfers.partners.health import HealthBuffer
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import register_partner

CALLS = 200_000


def record_cost_ns() -> float:
    buffer = HealthBuffer()
    now = datetime.now(UTC)
    outcomes = ("ok", "ok", "ok", "timeout", "http_error")
    started = time.perf_counter_ns()
    for i in range(CALLS):
        buffer.record(i % 10, outcomes[i % 5], 180.0 + (i % 97), now)
    return (time.perf_counter_ns() - started) / CALLS


async def flush_cost_ms(url: str, partners: int, minutes: int, rounds: int = 20) -> float:
    db = Database(url, pool_size=2, application_name="bench-health")
    try:
        box = SecretBox("bench-health")
        ids = [
            (
                await register_partner(
                    db,
                    SystemClock(),
                    box,
                    name=f"bench {i}",
                    base_url="http://127.0.0.1:9",
                    airports=("GOH",),
                    markup_percent=Decimal(0),
                    allow_private=True,
                    actor="bench",
                )
            ).partner_id
            for i in range(partners)
        ]
        base = datetime.now(UTC).replace(second=0, microsecond=0)
        took = []
        for _ in range(rounds):
            buffer = HealthBuffer()
            for minute in range(minutes):
                for pid in ids:
                    for n in range(5):
                        buffer.record(pid, "ok", 150 + n, base - timedelta(minutes=minute))
            tallies = buffer.take()
            started = time.perf_counter()
            await health_repository.add_tallies(db, tallies)
            took.append((time.perf_counter() - started) * 1000)
        took.sort()
        return took[len(took) // 2]
    finally:
        await db.dispose()


def main() -> None:
    given = sys.argv[1] if len(sys.argv) > 1 else ""
    with tempfile.TemporaryDirectory() as tmp:
        url = Settings(database_url=given or f"sqlite:///{Path(tmp) / 'bench.sqlite3'}").resolved_database_url
        upgrade(url)
        print(f"record(): {record_cost_ns():.0f} ns per partner call ({CALLS} calls, 10 partners)")
        for partners, minutes in ((10, 1), (100, 10)):
            cost = asyncio.run(flush_cost_ms(url, partners, minutes))
            print(
                f"flush of {partners * minutes} partner-minutes: {cost:.1f} ms (median of 20, "
                f"{'PostgreSQL' if 'postgresql' in url else 'SQLite'})"
            )


if __name__ == "__main__":
    main()
