"""Partner statements and the journal (docs/rules/statements.md): a 100,000-line statement
answered as JSON (target <= 2 s) and streamed as CSV (the API process's memory growing < 50 MiB), a
month close over 1,000 partners (target <= 10 s on PostgreSQL), and what the journal costs a booking's
create and cancel.

    .venv/bin/python -m bench.statements --dsn postgresql://postgres@127.0.0.1/EMPTY_DB [--quick]

Seeding: 100,000 bookings of one partner (``bench/seed.py``) and a ``RIDE`` entry for each in the
previous month, written in SQL as the migration's backfill writes them; 999 more partners with 100
``ADJUSTMENT`` lines each in that month. The API is one ``transfers serve`` process; its resident
memory is sampled every 5 ms while the CSV streams. The close is ``accounting.service.close_ended``
in this process, as the scheduled job runs it. The create/cancel figure runs the service's own
create (the one-statement path) and a client's cancel in this process, journal as shipped, and the
same with the journal's Python-side writes switched off (the general path's), interleaved rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from bench import seed
from bench.procs import Proc, rss_mib
from transfers.accounting import repository as journal_repo
from transfers.accounting import service as books
from transfers.accounting.periods import period_of
from transfers.clients.models import NewClient
from transfers.clients.service import create_client
from transfers.clock import SystemClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.service import register_partner

SECRET = "bench-statements-secret-key-0123456789"
LINES = 100_000
PARTNERS = 1_000
LINES_PER_PARTNER = 100


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def previous_month(now: datetime) -> tuple[str, datetime]:
    first = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    inside = first - timedelta(days=10)
    return period_of(inside), inside


async def seed_data(dsn: str, lines: int, partners: int) -> tuple[str, int, int, str]:
    """(the big partner's API key, its id, the client's id, the period)."""
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    await asyncio.to_thread(upgrade, url)
    db = Database(url, pool_size=2, application_name="bench-statements")
    try:
        box = SecretBox(resolve_secret_key(Settings(database_url=dsn, secret_key=SECRET)))
        partner = await register_partner(
            db,
            SystemClock(),
            box,
            name="bench partner (never called)",
            base_url=f"http://127.0.0.1:{free_port()}",
            airports=("LHR",),
            markup_percent=Decimal(0),
            allow_private=True,
            actor="bench",
        )
        made = await create_client(
            db,
            SystemClock(),
            NewClient(
                name="bench: statements", pay_type="wallet", currency="EUR", opening_balance=Decimal("100000000")
            ),
            actor="bench",
        )
    finally:
        await db.dispose()
    await seed.seed_bookings_pg(
        dsn,
        first=1,
        count=lines,
        scale_client=made.client_id,
        other_client=made.client_id,
        partner_id=partner.partner_id,
        targets=False,
        label="bookings",
    )
    period, inside = previous_month(datetime.now(UTC))
    conn = await asyncpg.connect(dsn)
    try:
        started = time.monotonic()
        await conn.execute(
            "INSERT INTO journal_entries (kind, currency, booking_id, created_at) "
            "SELECT 'RIDE', b.currency, b.id, $2 FROM bookings b WHERE b.partner_id = $1 ORDER BY b.id",
            partner.partner_id,
            inside,
        )
        for account, owner, sign in (("platform", "0", "-"), ("partner", "b.partner_id", "")):
            await conn.execute(
                "INSERT INTO journal_lines (entry_id, account, owner_id, currency, amount, period, created_at) "
                f"SELECT e.id, '{account}', {owner}, e.currency, {sign}b.net_total, $1, e.created_at "
                "FROM journal_entries e JOIN bookings b ON b.id = e.booking_id WHERE e.kind = 'RIDE'",
                period,
            )
        columns = [
            r["column_name"]
            for r in await conn.fetch(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'partners' AND column_name <> 'id'"
            )
        ]
        chosen = ", ".join("name || ' #' || g" if c == "name" else c for c in columns)
        await conn.execute(
            f"INSERT INTO partners ({', '.join(columns)}) SELECT {chosen} FROM partners, "
            f"generate_series(2, $2) AS g WHERE partners.id = $1",
            partner.partner_id,
            partners,
        )
        await conn.execute(
            "INSERT INTO journal_entries (kind, currency, note, created_at) "
            "SELECT 'ADJUSTMENT', 'EUR', p.id::text, $2 FROM partners p, generate_series(1, $3) WHERE p.id <> $1",
            partner.partner_id,
            inside,
            LINES_PER_PARTNER,
        )
        for account, owner, amount in (("platform", "0", "-1.25"), ("partner", "e.note::bigint", "1.25")):
            await conn.execute(
                "INSERT INTO journal_lines (entry_id, account, owner_id, currency, amount, period, created_at) "
                f"SELECT e.id, '{account}', {owner}, 'EUR', {amount}, $1, e.created_at FROM journal_entries e "
                "WHERE e.kind = 'ADJUSTMENT'",
                period,
            )
        await conn.execute("ANALYZE")
        print(f"journal seeded in {time.monotonic() - started:.1f} s", flush=True)
    finally:
        await conn.close()
    return partner.api_key, partner.partner_id, made.client_id, period


class Sampler:
    """The peak resident memory of some processes, sampled every 5 ms in a thread."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.peak = self.now()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> float:
        return sum(rss_mib(pid) for pid in self.pids)

    def _run(self) -> None:
        while self.running:
            self.peak = max(self.peak, self.now())
            time.sleep(0.005)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join()


def measure_api(url: str, key: str, period: str, pids: list[int], rounds: int) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    path = f"{url}/api/v1/reverse/statements/{period}"
    with httpx.Client(timeout=120) as http:
        http.get(f"{url}/api/v1/reverse/statements", headers=headers).raise_for_status()  # warm
        baseline = sum(rss_mib(pid) for pid in pids)
        for attempt in range(2):
            with Sampler(pids) as sampler:
                before = sampler.now()
                started = time.perf_counter()
                rows = streamed = 0
                with http.stream("GET", path, params={"format": "csv"}, headers=headers) as answer:
                    answer.raise_for_status()
                    for chunk in answer.iter_bytes():
                        streamed += len(chunk)
                        rows += chunk.count(b"\n")
                took = time.perf_counter() - started
            growth = sampler.peak - before
            print(
                f"statement as CSV (run {attempt + 1}), {rows - 1:,} lines ({streamed / 2**20:.1f} MiB) "
                f"in {took:.2f} s: API process resident {before:.0f} MiB before, peak {sampler.peak:.0f} MiB, "
                f"growth {growth:.1f} MiB "
                f"(target < 50 MiB; {'within' if growth < 50 else 'OVER'}; {baseline:.0f} MiB after start)",
                flush=True,
            )
        times, size, count = [], 0, 0
        for _ in range(rounds):
            started = time.perf_counter()
            answer = http.get(path, headers=headers)
            times.append(time.perf_counter() - started)
            answer.raise_for_status()
            size, count = len(answer.content), len(answer.json()["lines"])
        print(
            f"statement as JSON, {count:,} lines ({size / 2**20:.1f} MiB): median {statistics.median(times):.2f} s, "
            f"max {max(times):.2f} s over {rounds} requests (target <= 2 s; "
            f"{'within' if statistics.median(times) <= 2 else 'OVER'})",
            flush=True,
        )


async def measure_close(dsn: str) -> None:
    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    db = Database(url, pool_size=2, application_name="bench-statements")
    try:
        started = time.perf_counter()
        closed = await books.close_ended(db, datetime.now(UTC))
        took = time.perf_counter() - started
        print(
            f"month close: {closed:,} statements closed ({PARTNERS:,} partners, "
            f"{LINES + (PARTNERS - 1) * LINES_PER_PARTNER:,} partner lines) in {took:.2f} s "
            f"(target <= 10 s; {'within' if took <= 10 else 'OVER'})",
            flush=True,
        )
        started = time.perf_counter()
        again = await books.close_ended(db, datetime.now(UTC))
        print(f"month close again (nothing left): {again} in {time.perf_counter() - started:.2f} s", flush=True)
    finally:
        await db.dispose()


async def measure_create_cancel(dsn: str, client_id: int, partner_id: int, rounds: int, per_round: int) -> None:
    """Create (the one-statement path) + a client's cancel, with the journal as shipped and with its
    Python-side writes off (``journal_repo.post`` and the journal effect as no-ops: what the general
    path paid before), interleaved; ms per create+cancel."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests import ledger_world as world

    url = dsn.replace("postgresql://", "postgresql+asyncpg://", 1)
    db = Database(url, pool_size=4, application_name="bench-statements")
    real_post = journal_repo.post

    async def no_post(*_: Any, **__: Any) -> int:
        return 0

    def no_rows(*_: Any, **__: Any) -> list[Any]:
        return []

    async def one_round(journal: bool) -> float:
        journal_repo.post = real_post if journal else no_post
        started = time.perf_counter()
        for _ in range(per_round):
            now = datetime.now(UTC)
            row = world.values(client_id, partner_id, now, total="25.00", net="20.00", policy=world.FEE_20)
            booking_id = await world.book(db, row, now)
            await world.move(db, booking_id, world.S.PENDING_APPROVAL, now)
            await world.cancel(db, booking_id, now)
        return (time.perf_counter() - started) / per_round * 1000

    try:
        from transfers.bookings import effects

        effects_list = effects.EFFECTS
        results: dict[bool, list[float]] = {True: [], False: []}
        await one_round(True)  # warm
        for n in range(rounds):
            for journal in (True, False) if n % 2 == 0 else (False, True):
                if not journal:  # the journal effect off (its rows: none, on either path)
                    effects.EFFECTS = tuple(
                        dataclasses.replace(e, rows=no_rows) if e.name == "journal" else e for e in effects_list
                    )
                results[journal].append(await one_round(journal))
                effects.EFFECTS = effects_list
        on, off = statistics.median(results[True]), statistics.median(results[False])
        pairs = ", ".join(f"{a:.2f}/{b:.2f}" for a, b in zip(results[True], results[False], strict=True))
        print(
            f"create + approve-wait + client cancel, in process: {on:.2f} ms with the journal, {off:.2f} ms with its "
            f"Python-side writes off ({on / off - 1:+.1%}; per round on/off {pairs}; "
            f"load average {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    finally:
        journal_repo.post = real_post
        await db.dispose()


def main_sync(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-statements-"))
    pidfile = Path(args.pidfile) if args.pidfile else work / "pids"
    print(f"load average at the start: {os.getloadavg()[0]:.1f} (the machine is shared)", flush=True)
    key, partner_id, client_id, period = asyncio.run(seed_data(args.dsn, args.lines, PARTNERS))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("TRANSFERS_")},
        "TRANSFERS_DATABASE_URL": args.dsn,
        "TRANSFERS_SECRET_KEY": SECRET,
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_SANDBOX_PARTNER": "0",
        "TRANSFERS_RATE_LIMIT_PER_MINUTE": "1000000000",
        "TRANSFERS_RATE_LIMIT_BURST": "1000000000",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(Path.cwd()),
    }
    port = free_port()
    proc = Proc(
        "statements-api",
        [str(Path(sys.executable).parent / "transfers"), "serve", "--no-worker", "--port", str(port)],
        env=env,
        cwd=work,
        log=work / "api.log",
        pidfile=pidfile,
    ).start()
    try:
        url = f"http://127.0.0.1:{port}"
        proc.wait_http(f"{url}/readyz")
        measure_api(url, key, period, proc.api_pids(), args.rounds)
    finally:
        proc.stop()
    asyncio.run(measure_close(args.dsn))
    asyncio.run(measure_create_cancel(args.dsn, client_id, partner_id, args.rounds, args.per_round))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}", flush=True)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dsn", required=True, help="postgresql://... of an empty database")
    parser.add_argument("--pidfile", default="", help="append the PIDs of started processes here (run.sh stops them)")
    parser.add_argument("--lines", type=int, default=LINES)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args, _ = parser.parse_known_args()  # run.sh passes the suite's options to every bench
    if args.quick:
        args.rounds, args.per_round = 2, 30
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main_sync(args))


if __name__ == "__main__":
    main()
