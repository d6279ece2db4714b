"""``transfers statements list|close`` and ``transfers ledger check`` (docs/rules/statements.md#operators)."""

from __future__ import annotations

import click

from transfers.accounting import service as books
from transfers.cli.common import print_json, with_db
from transfers.cli.tables import render


@click.group("statements")
def statements_group() -> None:
    """Partners' monthly statements: what the service owes each partner."""


@statements_group.command("list")
@click.option("--partner", "partner_id", type=int, required=True, help="the partner's id")
@click.option("--json", "as_json", is_flag=True, help="one JSON object per statement, as the reverse API shows it")
def statements_list(partner_id: int, as_json: bool) -> None:
    """The partner's statements, newest first (the open month included)."""
    found = with_db(lambda db, _clock: books.statements(db, partner_id))
    if as_json:
        print_json([s.as_api() for s in found])
        return
    columns = ["period", "currency", "status", "opening_balance", "earned", "recovered", "paid", "closing_balance"]
    rows = [[s.as_api()[c] for c in columns] for s in found]
    click.echo(render(columns, rows, right=columns[3:], empty="(no statement: the partner has no lines yet)"))


@statements_group.command("close")
def statements_close() -> None:
    """Close every partner month that has ended (the scheduled job does the same); prints how many."""
    closed = with_db(lambda db, clock: books.close_ended(db, clock.now()))
    click.echo(f"closed {closed} statement(s)")


@click.group("ledger")
def ledger_group() -> None:
    """The double-entry journal."""


@ledger_group.command("check")
def ledger_check() -> None:
    """Every entry balances in each of its currencies, every wallet equals its account, every statement
    equals the partner's account: exit 0, or 1 with the first difference."""
    found = with_db(lambda db, _clock: books.ledger_check(db))
    if found is not None:
        click.echo(f"error: {found}", err=True)
        raise SystemExit(1)
    click.echo(
        "ok: every entry balances in each of its currencies, every wallet equals its account, "
        "every statement its partner's account"
    )
