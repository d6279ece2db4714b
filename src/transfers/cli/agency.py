"""``transfers clients users create``: the people of a client (a travel agency) who sign in to the
agency portal at /agency/ (docs/rules/agency-portal.md#users)."""

from __future__ import annotations

import sys

import click

from transfers.cli.common import actor, print_json, with_db


@click.group("users")
def agency_users_group() -> None:
    """Agency users: who signs in to the agency portal (/agency/); roles admin and agent."""


@agency_users_group.command("create")
@click.option("--client", "client_id", type=int, required=True, help="the client's (agency's) id")
@click.option("--email", required=True)
@click.option(
    "--role",
    type=click.Choice(["admin", "agent"]),
    default="agent",
    show_default=True,
    help="agent: books and follows bookings, reads the wallet; admin: also Developers and Users",
)
@click.option("--password-stdin", is_flag=True, help="read the password from stdin instead of generating one")
def agency_users_create(client_id: int, email: str, role: str, password_stdin: bool) -> None:
    """Create an agency user; prints {"user_id", "client_id", "email", "role", "password"} (shown once)."""
    from transfers.agency import users

    password = sys.stdin.readline().rstrip("\r\n") if password_stdin else None
    who = actor()
    made = with_db(
        lambda db, clock: users.create_user(
            db, clock, client_id=client_id, email=email, role=role, password=password, actor=who
        )
    )
    print_json(made.as_json())
