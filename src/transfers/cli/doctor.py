"""``transfers doctor``: every dependency of this deployment checked, as a table or JSON."""

from __future__ import annotations

import asyncio

import click
import structlog

from transfers.cli.common import print_json
from transfers.cli.tables import render
from transfers.ops.doctor import checked_at, run_doctor


@click.command("doctor")
@click.option(
    "--processes",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="API processes plus workers that will share the database (sizes the max_connections check)",
)
@click.option("--json", "as_json", is_flag=True, help="one JSON object instead of a table")
def doctor(processes: int, as_json: bool) -> None:
    """Check the settings, the database (reachable, migrations, time zone, max_connections, clock),
    Redis, the secret key and every enabled partner (TCP, TLS, a signed search; hosted partners: a
    valid rate card and an active user); exit 0 only when
    nothing failed."""
    # The partner client logs refused calls as warnings; the table says it all.
    with structlog.testing.capture_logs():
        report = asyncio.run(run_doctor(processes=processes))
    if as_json:
        print_json(report.as_dict())
    else:
        click.echo(f"transfers doctor, {checked_at()}")
        click.echo(
            render(
                ["check", "result", "detail"],
                [[r.check, r.result, r.detail] for r in report.rows],
                max_width={"detail": 160},
            )
        )
        failed = sum(r.result == "FAIL" for r in report.rows)
        click.echo("PASS" if report.passed else f"FAIL: {failed} of {len(report.rows)} checks failed")
    raise SystemExit(0 if report.passed else 1)
