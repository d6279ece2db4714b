"""What one hosted partner (docs/rules/hosted-partners.md) adds to a search among 10 server partners, in CPU.

    .venv/bin/python -m bench.hosted [--dsn postgresql://...] [--searches 200] [--rounds 4] [--quick]

The search use case runs in this process against 10 server partners served by ``bench/partner.py``
in a subprocess (so their CPU is not counted here) and, in alternate rounds, one hosted partner
more with the example rate card (``examples/rate-card.json``, whose vehicles have a daily capacity:
the hosted answer reads the day's counters, the real case). The figure is this process's CPU time
per search (``time.process_time``) with the hosted partner minus without it, each the median of
its rounds (rounds interleaved, so both see the same machine load). Target: under 2 ms. It also
prints the hosted answer alone (``search.hosted.ask_hosted``: pricing + the counter read).
Default database: a throwaway SQLite file; ``make bench`` passes a throwaway PostgreSQL one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from transfers import features
from transfers.clients import service as client_service
from transfers.clients.models import ClientPrincipal, NewClient
from transfers.config import Settings
from transfers.db.migrate import upgrade
from transfers.hosted import service as hosted_service
from transfers.partners import repository as partners_repo
from transfers.partners.directory import PartnerDirectory
from transfers.partners.service import register_partner
from transfers.ratecards.pricing import Trip
from transfers.reference.airports import find_airport
from transfers.search.hosted import ask_hosted
from transfers.search.service import search
from transfers.services import Services

ROOT = Path(__file__).resolve().parents[1]
CARD = json.loads((ROOT / "examples" / "rate-card.json").read_text())
SERVER_PARTNERS = 10
TARGET_MS = 2.0


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def body() -> dict[str, Any]:
    pickup = (datetime.now(UTC) + timedelta(days=20)).strftime("%Y-%m-%d 14:30")
    return {
        "pickup_datetime": pickup,
        "pickup_location": {"type": "AIRPORT", "iata_code": "LHR"},
        "dropoff_location": {"type": "POINT", "lat": 51.5074, "lng": -0.1278, "name": "Trafalgar Square"},
        "travelers": {"adult": 2, "children": 0, "infant": 0},
    }


async def cpu_per_search_ms(svc: Services, principal: ClientPrincipal, searches: int) -> float:
    started = time.process_time()
    for _ in range(searches):
        await search(svc, principal, body())
    return (time.process_time() - started) * 1000 / searches


async def run(url: str, searches: int, rounds: int) -> dict[str, float]:
    ports = free_ports(SERVER_PARTNERS)
    partner = subprocess.Popen(
        [sys.executable, "-m", "bench.partner", "--ports", ",".join(map(str, ports)), "--latency-ms", "5"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    settings = Settings(
        allow_private_partner_urls=True,  # fake partners on loopback
        allow_private_webhook_urls=True,  # receivers on loopback (the guards are on by default)
        database_url=url,
        environment="sandbox",
        sandbox_partner=False,
        embedded_worker=False,
        secret_key="bench-hosted",
        log_level="ERROR",
        partner_cache_seconds=3600,
        partner_timeout_seconds=3,
    )
    svc = Services.build(settings, application_name="bench-hosted")
    features.register()  # the feature packages' handlers, as create_app and the CLI register them
    try:
        await asyncio.sleep(1.0)  # the partner process binds its ports
        for i, port in enumerate(ports):
            await register_partner(
                svc.db,
                svc.clock,
                svc.box,
                name=f"Server partner {i}",
                base_url=f"http://127.0.0.1:{port}",
                airports=("LHR",),
                markup_percent=Decimal(5),
                allow_private=True,
                actor="bench",
            )
        hosted = await hosted_service.register_hosted_partner(
            svc.db,
            svc.clock,
            svc.box,
            name="Hosted partner",
            airports=("LHR",),
            markup_percent=Decimal(5),
            actor="bench",
        )
        await hosted_service.set_rate_card(svc.db, svc.clock, hosted.partner_id, CARD, actor="bench")
        created = await client_service.create_client(
            svc.db,
            svc.clock,
            NewClient(
                name="Bench agency",
                pay_type="wallet",
                currency="EUR",
                opening_balance=Decimal(1000),
                can_create=True,
                can_cancel=True,
            ),
            actor="bench",
        )
        principal = await svc.auth.client(f"Bearer {created.api_key}")

        async def with_hosted(enabled: bool) -> None:
            async with svc.db.write() as conn:
                await partners_repo.set_status(conn, hosted.partner_id, "enabled" if enabled else "disabled")
            svc.partners = PartnerDirectory(svc.db, svc.box, 3600)  # a new snapshot now, then cached

        without: list[float] = []
        with_: list[float] = []
        for enabled in (False, True):  # warm-up: connections, caches, first snapshot
            await with_hosted(enabled)
            await cpu_per_search_ms(svc, principal, 20)
        for _ in range(rounds):
            for enabled, figures in ((False, without), (True, with_)):
                await with_hosted(enabled)
                found = await search(svc, principal, body())
                companies = {v["company"] for v in found["vehicles"]}
                assert ("Hosted partner" in companies) is enabled and len(companies) == SERVER_PARTNERS + enabled
                figures.append(await cpu_per_search_ms(svc, principal, searches))
        snapshot = await svc.partners.snapshot()
        airport = find_airport("LHR")
        assert airport is not None
        trip = Trip("LHR", airport.tz, datetime.now(UTC) + timedelta(days=20), 11, datetime.now(UTC))
        alone_started = time.process_time()
        for _ in range(searches):
            await ask_hosted(
                svc.db, snapshot.hosted_serving("LHR"), trip, timeout=3, vehicle_types=snapshot.vehicle_types
            )
        alone = (time.process_time() - alone_started) * 1000 / searches
    finally:
        partner.terminate()
        partner.wait(timeout=10)
        await svc.partner_client.aclose()
        await svc.db.dispose()
    base, more = statistics.median(without), statistics.median(with_)
    return {"without_ms": base, "with_ms": more, "added_ms": more - base, "hosted_alone_ms": alone}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", default="", help="postgresql://... of an empty database (default: SQLite file)")
    parser.add_argument("--searches", type=int, default=200, help="searches per round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="50 searches, 2 rounds")
    options, _ = parser.parse_known_args()  # make bench passes the suite's options too
    searches, rounds = (50, 2) if options.quick else (options.searches, options.rounds)
    with tempfile.TemporaryDirectory(prefix="bench-hosted-") as tmp:
        url = options.dsn or f"sqlite:///{tmp}/bench.sqlite3"
        resolved = Settings(database_url=url).resolved_database_url
        upgrade(resolved)
        figures = asyncio.run(run(url, searches, rounds))
    database = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    verdict = "met" if figures["added_ms"] < TARGET_MS else "MISSED"
    print(
        f"\nHosted partner in the search fan-out ({database}; {SERVER_PARTNERS} server partners, "
        f"{rounds} x {searches} searches per side, CPU of the API process per search)"
    )
    print("| search | CPU per search |")
    print("|---|---:|")
    print(f"| 10 server partners | {figures['without_ms']:.2f} ms |")
    print(f"| 10 server partners + 1 hosted | {figures['with_ms']:.2f} ms |")
    print(
        f"| **added by the hosted partner** | **{figures['added_ms']:.2f} ms** (target < {TARGET_MS:g} ms: {verdict}) |"
    )
    print(f"| the hosted answer alone (pricing + capacity read) | {figures['hosted_alone_ms']:.2f} ms |")


if __name__ == "__main__":
    main()
