"""``transfers operators create|list|disable``: the people who sign in to the console (docs/rules/console.md)."""

from __future__ import annotations

import sys

import click

from transfers.cli.common import actor, print_json, with_db
from transfers.cli.tables import jsonable, render
from transfers.operators import service
from transfers.operators.models import Role


@click.group("operators")
def operators_group() -> None:
    """Console operators (roles: admin, support)."""


@operators_group.command("create")
@click.option("--email", required=True)
@click.option(
    "--role",
    type=click.Choice([r.value for r in Role]),
    default=Role.SUPPORT.value,
    show_default=True,
    help="support: reads, cancels, retries; admin: also money, clients, partners, operators",
)
@click.option(
    "--password-stdin", is_flag=True, help="read the password from the first line of stdin instead of generating one"
)
def operators_create(email: str, role: str, password_stdin: bool) -> None:
    """Create an operator; prints {"operator_id", "email", "role", "password"} (the password shown once)."""
    password = None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    who = actor()
    created = with_db(
        lambda db, clock: service.create_operator(db, clock, email=email, role=Role(role), password=password, actor=who)
    )
    print_json(created.as_json())


@operators_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="one JSON array instead of a table")
def operators_list(as_json: bool) -> None:
    """Every operator (never a password or its hash)."""
    rows = with_db(lambda db, _clock: service.list_operators(db))
    if as_json:
        print_json(jsonable([r.as_dict() for r in rows]))
        return
    click.echo(
        render(
            ["id", "email", "role", "status", "created", "disabled"],
            [[r.id, r.email, r.role, r.status, r.created_at, r.disabled_at] for r in rows],
            right={"id"},
        )
    )


@operators_group.command("disable")
@click.argument("operator_id", type=int)
def operators_disable(operator_id: int) -> None:
    """Disable an operator: it cannot sign in again, and every session it has ends at once."""
    who = actor()
    ended = with_db(lambda db, clock: service.disable_operator(db, clock, operator_id, actor=who))
    print_json({"operator_id": operator_id, "status": "disabled", "sessions_ended": ended})
