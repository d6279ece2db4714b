"""``transfers fx list|set|import|fetch|position`` (docs/rules/fx.md#operators): the exchange rates and
the platform's exposure in each currency.

Exit codes: 0 done; 2 a bad currency, rate or date (nothing written); 1 a file that is not a whole
ECB reference file, or a fetch that failed (nothing written: the rates in use stay).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import click

from transfers import money
from transfers.accounting import service as books
from transfers.cli.common import actor, fail, print_json, settings, with_db
from transfers.cli.tables import render
from transfers.fx import service
from transfers.fx.ecb import EcbFileError
from transfers.fx.fetch import FetchFailed
from transfers.fx.rates import RateError


@click.group("fx")
def fx_group() -> None:
    """Exchange rates: reference rates from EUR (sandbox table, ECB files, manual rates)."""


@fx_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="one JSON object: {rates: [{currency, rate, source, as_of}]}")
def fx_list(as_json: bool) -> None:
    """The rate in use for each currency today (UTC): the newest date, manual over ecb over sandbox."""
    cfg = settings()
    rates = with_db(lambda db, clock: service.rates_in_use(db, cfg, service.today(clock)))
    shown = [rates[c].as_dict() for c in sorted(rates)]
    if as_json:
        print_json({"rates": shown})
        return
    columns = ["currency", "rate", "source", "as_of"]
    click.echo(render(columns, [[r[c] for c in columns] for r in shown], right=["rate"], empty="(no rates)"))


@fx_group.command("set")
@click.option("--currency", required=True, help="ISO 4217 code, like GBP (EUR -> this currency)")
@click.option("--rate", required=True, help="how much of the currency 1 EUR buys, like 0.8563")
@click.option("--as-of", "as_of", default=None, help="YYYY-MM-DD, not after today [default: today, UTC]")
def fx_set(currency: str, rate: str, as_of: str | None) -> None:
    """Set a manual rate: on its date it wins over the ECB's and the sandbox's."""
    day: date | None = None
    if as_of is not None:
        try:
            day = date.fromisoformat(as_of) if len(as_of) == 10 else None
        except ValueError:
            day = None
        if day is None:
            fail(f"--as-of {as_of[:20]!r} is not a date like 2026-11-27", 2)
    cfg = settings()
    try:
        stored = with_db(lambda db, clock: service.set_rate(db, clock, cfg, currency, rate, day, actor=actor()))
    except RateError as exc:
        fail(str(exc), 2)
        return
    print_json(stored.as_dict())


@fx_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def fx_import(file: Path) -> None:
    """Load an ECB reference file (daily or history; XML, CSV or ZIP) in one transaction: its rates
    replace the ECB rates of the dates it covers."""
    data = file.read_bytes()
    cfg = settings()
    try:
        imported = with_db(lambda db, clock: service.import_file(db, clock, cfg, data, actor=actor()))
    except EcbFileError as exc:
        fail(f"{file.name}: {exc}; nothing was imported")
        return
    print_json(imported.as_dict())


@fx_group.command("fetch")
def fx_fetch() -> None:
    """Fetch the ECB daily file from TRANSFERS_FX_ECB_URL now and import it."""
    cfg = settings()
    if not cfg.fx_ecb_url:
        fail("TRANSFERS_FX_ECB_URL is not set: there is no ECB file to fetch", 2)
    try:
        imported = with_db(lambda db, clock: service.fetch(db, clock, cfg, actor=actor()))
    except (FetchFailed, EcbFileError) as exc:
        fail(f"{exc}; nothing was imported, the rates in use stay until they are stale")
        return
    print_json(imported.as_dict())


@fx_group.command("position")
@click.option("--json", "as_json", is_flag=True, help="one JSON object: {accounts: [{currency, balance}]}")
def fx_position(as_json: bool) -> None:
    """The FX accounts' balances per currency (docs/rules/fx.md#position): positive, taken in that
    currency; negative, owed in it."""
    accounts = with_db(lambda db, _clock: books.fx_position(db))
    shown = [{"currency": c, "balance": money.text(b, c)} for c, b in accounts]
    if as_json:
        print_json({"accounts": shown})
        return
    columns = ["currency", "balance"]
    click.echo(render(columns, [[a[c] for c in columns] for a in shown], right=["balance"], empty="(no FX accounts)"))
