"""``transfers flights check RESERVATION_NO`` (docs/rules/flights.md#watching): one booking's flight checked now."""

from __future__ import annotations

import click

from transfers.cli.common import print_json, settings, with_db
from transfers.clock import SystemClock
from transfers.db.engine import Database
from transfers.flights import watch as flight_watch
from transfers.flights.providers import build_provider


@click.group("flights")
def flights_group() -> None:
    """The flight watch of airport pickups."""


@flights_group.command("check")
@click.argument("reservation_no")
def flights_check(reservation_no: str) -> None:
    """Check the booking's flight with the configured provider now (every booking on that flight and date
    follows the answer) and print its ``flight`` as JSON (null when the pickup is not an airport)."""

    async def work(db: Database, clock: SystemClock) -> object:
        provider = build_provider(settings(), clock)
        try:
            return await flight_watch.check_now(db, provider, clock, reservation_no)
        finally:
            await provider.aclose()

    print_json(with_db(work))
