"""Soak: a day of traffic under faults, then every promise checked (docs/operations/reliability.md).

    make soak                                   # 10 minutes
    make soak SOAK_ARGS="--minutes 2"           # what CI runs
    .venv/bin/python -m bench.soak --minutes 2 --rate 6 [--pg-url postgresql://postgres@127.0.0.1:5432/postgres]

Starts, on loopback only: a throwaway PostgreSQL database on the server of ``--pg-url``, a Redis of
its own (``redis-server --port <free> --save ''``), two API processes (``transfers serve
--no-worker``) and one ``transfers worker``, test partners served in this process (three fast, one
slow, one failing now and then, plus a hosted partner with a rate card; quoting in EUR, GBP and JPY),
a client-webhook receiver that fails now and then, and the SMTP and Twilio-shaped servers travellers'
messages go to (``bench/soak_messages.py``). Sends the workload of ``bench/soak_ops.py`` at ``--rate``
operations a second for ``--minutes``, with the faults of ``bench/soak_faults.py`` on a schedule;
then lets the deliveries finish (bounded), stops every process by PID, checks the invariants of
``bench/soak_checks.py``, prints the table and drops the database. Exit 0 only when every invariant
holds. Bounded: the run's length, a cap on requests (``--max-requests``), every wait timed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, or_, select, update
from tests.servers import LiveServer

from bench import soak_checks as checks
from bench import soak_fx, soak_messages, soak_report
from bench.soak_faults import Faults
from bench.soak_load import API, Http
from bench.soak_ops import Workload
from bench.soak_partners import FlakyReceiver, SoakPartner, seed
from bench.soak_world import (
    TRANSFERS_BIN,
    Slot,
    SoakDatabase,
    free_port,
    service_env,
    wait_http,
    wait_logged,
    wait_redis,
)
from transfers.db.engine import Database
from transfers.db.tables import client_events, outbox, partner_emails, webhook_deliveries

DRAIN_SECONDS = 240.0


def default_pg_url() -> str:
    host = os.environ.get("PGHOST", "127.0.0.1")
    port = os.environ.get("PGPORT", "5432")
    user = os.environ.get("PGUSER", "postgres")
    return f"postgresql://{user}@{host}:{port}/postgres"


async def make_due(db: Database) -> dict[str, int]:
    """What an operator's "retry now" does: pending messages no process holds are due now, so the
    drain does not wait out a backoff; and how many are still pending."""
    now = datetime.now(UTC)
    async with db.write() as conn:
        for table in (outbox, webhook_deliveries, partner_emails):
            await conn.execute(
                update(table)
                .where(table.c.status == "pending", table.c.next_attempt_at > now)
                .where(or_(table.c.lease_until.is_(None), table.c.lease_until < now))
                .values(next_attempt_at=now)
            )
    async with db.read() as conn:
        return {
            "outbox": (await conn.execute(select(func.count()).where(outbox.c.status == "pending"))).scalar_one(),
            "webhooks": (
                await conn.execute(
                    select(func.count()).where(
                        webhook_deliveries.c.status == "pending", webhook_deliveries.c.kind == "client.webhook"
                    )
                )
            ).scalar_one(),
            "events": (
                await conn.execute(select(func.count()).where(client_events.c.fanned_out_at.is_(None)))
            ).scalar_one(),
        }


async def drain(db: Database, workload: Workload) -> tuple[str, datetime]:
    started = time.monotonic()
    if workload.rides or workload.approvals:
        _, pending = await asyncio.wait([*workload.rides, *workload.approvals], timeout=DRAIN_SECONDS / 2)
        for task in pending:  # bounded: a ride or an approval still going is the soak's failure
            task.cancel()
            workload.errors.append(f"still running after {DRAIN_SECONDS / 2:.0f}s of drain: {task.get_coro()}")
    left: dict[str, int] = {}
    while time.monotonic() - started < DRAIN_SECONDS:
        left = await make_due(db)
        left["traveller messages"] = await soak_messages.make_due(db, datetime.now(UTC))
        if not any(left.values()):
            return f"drained in {time.monotonic() - started:.0f}s", datetime.now(UTC)
        await asyncio.sleep(1.0)
    return f"NOT drained after {DRAIN_SECONDS:.0f}s: {left}", datetime.now(UTC)


@dataclass
class Depth:
    """The outbox's depth over the run: the most pending messages seen at once, and the oldest one's age."""

    most: int = 0
    oldest_seconds: float = 0.0
    samples: int = 0


async def sample(slots: list[Slot], db: Database, depth: Depth, started: float, every: float) -> None:
    """Every ``every`` s: each process's RSS, and the outbox's pending messages (a failed read, in a
    fault, is skipped: the soak's own connections are never cut, but the database may be slow)."""
    while True:
        t = time.monotonic() - started
        for slot in slots:
            slot.sample_rss(t)
        with contextlib.suppress(Exception):
            async with db.read() as conn:
                pending, oldest = (
                    await conn.execute(
                        select(func.count(), func.min(outbox.c.created_at)).where(outbox.c.status == "pending")
                    )
                ).one()
            depth.samples += 1
            depth.most = max(depth.most, int(pending))
            if oldest is not None:
                depth.oldest_seconds = max(depth.oldest_seconds, (datetime.now(UTC) - oldest).total_seconds())
        await asyncio.sleep(every)


async def ledger_check(env: dict[str, str], workdir: Path) -> checks.Check:
    proc = await asyncio.create_subprocess_exec(
        str(TRANSFERS_BIN),
        "ledger",
        "check",
        env=env,
        cwd=workdir,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(proc.communicate(), timeout=120)
    text = output.decode(errors="replace").strip()
    return checks.Check(
        "`transfers ledger check` exits 0", proc.returncode == 0, f"exit {proc.returncode}", text.splitlines()[-10:]
    )


async def soak(options: argparse.Namespace, workdir: Path) -> int:
    seconds = options.minutes * 60
    database = SoakDatabase(options.pg_url)
    slots: dict[str, Slot] = {}
    servers: list[LiveServer] = []
    outboxes: soak_messages.Outboxes | None = None
    print(f"soak: {options.minutes:g} min at {options.rate:g} operations/s; database {database.name}; logs {workdir}")
    try:
        db = await database.create()
        print(f"  PostgreSQL connections in use before the soak's processes: {await database.server_connections()}")
        receiver = FlakyReceiver(fail_rate=0.1)
        hook = await LiveServer(receiver.app()).start()
        servers.append(hook)
        receiver.url = hook.url
        partners, agencies, partner_servers = await seed(db, options.clients)
        servers += partner_servers
        outboxes = await soak_messages.start()
        redis_port = free_port()
        slots["redis"] = Slot(
            "redis",
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            dict(os.environ),
            redis_port,
            workdir,
        )
        slots["redis"].start()
        await wait_redis(redis_port)
        env = service_env(database.url, redis_port, options.pool_size, outboxes.env())
        for name in ("api-1", "api-2"):
            port = free_port()
            argv = [str(TRANSFERS_BIN), "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker"]
            slots[name] = Slot(name, argv, env, port, workdir)
        slots["worker"] = Slot("worker", [str(TRANSFERS_BIN), "worker"], env, None, workdir)
        slots["api-1"].start()
        await wait_http(slots["api-1"])  # the first one applies migrations (none here: already at head)
        slots["api-2"].start()
        slots["worker"].start()
        await wait_http(slots["api-2"])
        await wait_logged(slots["worker"], "worker_started")

        started, started_wall = time.monotonic(), datetime.now(UTC)
        http = Http([slots["api-1"].url, slots["api-2"].url], started, options.max_requests)
        keys = [agency.api_key for agency in agencies]
        for key in keys:
            made = await http.call(
                "setup",
                "POST",
                f"{API}/webhook-endpoints",
                key=key,
                json={"url": receiver.url + "/hook", "events": ["*"], "description": "soak receiver"},
            )
            assert made is not None and made.status_code == 201, made and made.text
        hanging = partners["Fast C"].partner
        assert isinstance(hanging, SoakPartner)
        faults = Faults(database=database, slots=slots, hanging=hanging, started=started, seconds=seconds)
        workload = Workload(http, partners, agencies, seed=options.seed, incidents_until=started + seconds + 30)
        watched = [slots["api-1"], slots["api-2"], slots["worker"]]
        depth = Depth()
        sampler = asyncio.create_task(sample(watched, db, depth, started, max(2.0, seconds / 60)))
        print(f"  processes up; load for {seconds:.0f}s", flush=True)
        await asyncio.gather(workload.run(seconds, options.rate), faults.run())
        load_end = time.monotonic() - started
        drained, drained_at = await drain(db, workload)
        sampler.cancel()
        print(f"  load stopped at {load_end:.0f}s; {drained}", flush=True)
        exits = {name: await slots[name].stop() for name in ("api-1", "api-2", "worker")}
        await http.aclose()

        results, data = await checks.answered_bookings(db, workload.booked, [a.client_id for a in agencies])
        found = [
            results,
            await checks.refunds(db, workload.booked, data, partners["Fast B"].partner_id),
            await checks.wallets(db),
            await ledger_check(env, workdir),
            await soak_fx.check(db, env, workdir),
            checks.partner_creates(partners, data),
            checks.partner_cancels(partners, data),
        ]
        deliveries = checks.client_deliveries(receiver, data)
        deliveries.evidence += await checks.client_event_rows(db)
        deliveries.ok = not deliveries.evidence
        found += [
            deliveries,
            checks.drained(data),
            *await soak_messages.check(db, outboxes, workload.booked, agencies, data, drained_at),
            checks.server_errors(http.attempts, faults.windows),
            checks.memory(watched, seconds / 2, load_end),
            checks.error_logs(watched, started_wall, faults.windows),
            checks.Check(
                "every process stops with exit 0 (SIGTERM)",
                all(code == 0 for code in exits.values()),
                ", ".join(f"{n} {c}" for n, c in exits.items()),
                [f"{n}: exit {c}\n{slots[n].tail()}" for n, c in exits.items() if c != 0],
            ),
            checks.Check(
                "the soak's own client ran clean, bounded",
                not workload.errors and not http.exhausted and "NOT" not in drained,
                f"{sum(workload.ops.values())} operations {dict(sorted(workload.ops.items()))}, "
                f"{workload.skipped} skipped (too many in flight); {drained}",
                workload.errors + ([f"request cap {options.max_requests} reached"] if http.exhausted else []),
            ),
        ]
        notes = [
            f"Delayed flights: {soak_report.delayed_flights(workload.booked, data)}",
            f"Redis: the API processes noticed it gone {soak_report.redis_outages(watched[:2])} time(s) "
            "(their rate limiters ran on their own buckets meanwhile)",
            f"Outbox during the load: at most {depth.most} messages pending at once, the oldest "
            f"{depth.oldest_seconds:.0f}s old ({depth.samples} samples)",
        ]
        report(options, faults, http, found, notes, load_end)
        return 0 if all(c.ok for c in found) else 1
    finally:
        for slot in slots.values():
            with contextlib.suppress(Exception):
                await slot.stop(timeout=20)
        for server in servers:
            with contextlib.suppress(Exception):
                await server.stop()
        if outboxes is not None:
            await outboxes.stop()
        await database.drop()


def report(
    options: argparse.Namespace,
    faults: Faults,
    http: Http,
    found: list[checks.Check],
    notes: list[str],
    load_end: float,
) -> None:
    load = os.getloadavg()
    print(
        f"\n## Soak: {options.minutes:g} min at {options.rate:g} operations/s (load {load_end:.0f}s; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, the machine's load average at the end {load[0]:.1f} / {load[1]:.1f} "
        f"over 1 / 5 min, {os.cpu_count()} CPUs)\n"
    )
    print("Faults:")
    for line in faults.log:
        print(f"- {line}")
    print()
    print("\n".join(soak_report.table(found)))
    print()
    faulty = f"before ({faults.first_start:.0f}s), during and after ({faults.last_end:.0f}s) the faults"
    print(f"Latency by operation, {faulty}:\n")
    print("\n".join(soak_report.latencies(http.attempts, faults.first_start, faults.last_end)))
    print()
    for note in notes:
        print(f"- {note}")
    failed = soak_report.evidence(found)
    if failed:
        print("\n" + "\n".join(failed))
    print(f"\nsoak: {'PASSED' if not failed else 'FAILED'} ({sum(c.ok for c in found)}/{len(found)} invariants hold)")


def main(argv: list[str] | None = None) -> int:
    # The in-process partners are stopped without a lifespan shutdown: uvicorn's note of that is noise here.
    logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the load (default 10)")
    parser.add_argument("--rate", type=float, default=6.0, help="operations a second (default 6)")
    parser.add_argument("--pg-url", default=default_pg_url(), help="a database on the PostgreSQL server to use")
    parser.add_argument("--pool-size", type=int, default=2, help="TRANSFERS_DATABASE_POOL_SIZE of each process")
    parser.add_argument("--clients", type=int, default=3, help="agencies (each with a webhook endpoint)")
    parser.add_argument("--seed", type=int, default=1, help="the workload's random seed")
    parser.add_argument("--max-requests", type=int, default=0, help="cap on HTTP requests (default: 12 x rate x s)")
    parser.add_argument("--keep-logs", action="store_true", help="keep the processes' logs (their path is printed)")
    options = parser.parse_args(argv)
    if options.minutes <= 0 or options.rate <= 0:
        parser.error("--minutes and --rate must be positive")
    options.max_requests = options.max_requests or int(12 * options.rate * options.minutes * 60) + 500
    workdir = Path(tempfile.mkdtemp(prefix="soak-"))
    code = 1
    try:
        code = asyncio.run(soak(options, workdir))
        return code
    finally:
        if options.keep_logs or code != 0:
            print(f"soak: the processes' logs are in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
