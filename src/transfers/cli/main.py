"""The ``transfers`` command: one sub-command group per noun.

The sub-commands are imported when one of them is run (or asked for its own ``--help``), not to
list them: ``transfers --help`` names them from the table below without importing the service
(settings, SQLAlchemy, the booking rules), so it answers at once instead of after a second and more
of imports. ``tests/unit/test_cli_lazy.py`` keeps the table's one-line help true to each command's
own and checks that listing them imports none of them."""

from __future__ import annotations

from importlib import import_module

import click

from transfers.cli.errors import OperatorGroup, prepare_commands

# name -> (module, attribute, the command's help as it starts: the listing's one line)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "bookings": ("transfers.cli.bookings", "bookings_group", "Bookings of every client, as operators see them."),
    "clients": ("transfers.cli.clients", "clients_group", "Client accounts (travel professionals)."),
    "db": ("transfers.cli.db", "db_group", "Database schema management."),
    "doctor": (
        "transfers.cli.doctor",
        "doctor",
        "Check the settings, the database (reachable, migrations, time zone, max_connections, clock), "
        "Redis, the secret key and every enabled partner (TCP, TLS, a signed search; hosted partners: a "
        "valid rate card and an active user); exit 0 only when nothing failed.",
    ),
    "flights": ("transfers.cli.flights", "flights_group", "The flight watch of airport pickups."),
    "fx": (
        "transfers.cli.fx",
        "fx_group",
        "Exchange rates: reference rates from EUR (sandbox table, ECB files, manual rates).",
    ),
    "incidents": (
        "transfers.cli.incidents",
        "incidents_group",
        "Incidents: what went wrong on rides, and who pays for it.",
    ),
    "keys": ("transfers.cli.clients", "keys_group", "API keys."),
    "ledger": ("transfers.cli.statements", "ledger_group", "The double-entry journal."),
    "messages": (
        "transfers.cli.messages",
        "messages_group",
        "Messages to travellers: what was sent, when, and how it went.",
    ),
    "operators": ("transfers.cli.operators", "operators_group", "Console operators (roles: admin, support)."),
    "outbox": (
        "transfers.cli.outbox",
        "outbox_group",
        "Partner deliveries (booking.create, booking.update, booking.amend) and client webhook deliveries.",
    ),
    "partners": (
        "transfers.cli.partners",
        "partners_group",
        "Partners (transport companies) the service asks for vehicles.",
    ),
    "sandbox-partner": (
        "transfers.cli.sandbox",
        "sandbox_partner",
        "Serve the reference sandbox partner (approves bookings through the reverse API).",
    ),
    "serve": ("transfers.cli.serve", "serve", "Serve the booking API, the reverse API and the reference data."),
    "statements": (
        "transfers.cli.statements",
        "statements_group",
        "Partners' monthly statements: what the service owes each partner.",
    ),
    "wallet": ("transfers.cli.clients", "wallet_group", "Wallets."),
    "worker": (
        "transfers.cli.worker",
        "worker",
        "Deliver outbox messages to partners and run the scheduled jobs, without serving the API.",
    ),
}


def short_help(name: str, limit: int) -> str:
    """The listing's line for ``name``, shortened as click shortens a command's own help."""
    return click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit)


def _attach(name: str, command: click.Command) -> None:
    """The sub-groups that live in another module than their parent's."""
    if name == "partners" and isinstance(command, click.Group) and "rate-card" not in command.commands:
        from transfers.cli.hosted import rate_card_group, users_group

        command.add_command(rate_card_group)  # docs/rules/hosted-partners.md
        command.add_command(users_group)  # docs/rules/hosted-partners.md
        from transfers.cli.quality import score_command

        command.add_command(score_command)  # docs/rules/quality.md
    if name == "clients" and isinstance(command, click.Group) and "users" not in command.commands:
        from transfers.cli.agency import agency_users_group

        command.add_command(agency_users_group)  # transfers clients users create
    if name == "clients" and isinstance(command, click.Group) and "messages" not in command.commands:
        from transfers.cli.messages import clients_messages

        command.add_command(clients_messages)  # docs/rules/messages.md#settings


class TransfersGroup(OperatorGroup):
    """The root group, its sub-commands imported when used (``COMMANDS``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            command: click.Command = getattr(import_module(module), attribute)
            _attach(cmd_name, command)
            prepare_commands(command)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, short_help(name, limit)) for name in names if name in COMMANDS]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=TransfersGroup)
@click.version_option(package_name="transfers")
def cli() -> None:
    """Operate the transfers booking service (settings: TRANSFERS_* environment variables).

    Exit codes: 0 done, 1 refused or failed, 2 bad usage or settings, 69 PostgreSQL or Redis unusable,
    or serve's port in use.
    """
    from transfers import features

    features.register()  # every command's bookings tell the feature packages (transfers/features.py)


prepare_commands(cli)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
