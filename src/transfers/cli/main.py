"""The ``transfers`` command: one sub-command group per noun."""

from __future__ import annotations

import click

from transfers import features
from transfers.cli.agency import agency_users_group
from transfers.cli.bookings import bookings_group
from transfers.cli.clients import clients_group, keys_group, wallet_group
from transfers.cli.db import db_group
from transfers.cli.doctor import doctor
from transfers.cli.errors import OperatorGroup, prepare_commands
from transfers.cli.flights import flights_group
from transfers.cli.fx import fx_group
from transfers.cli.hosted import rate_card_group, users_group
from transfers.cli.incidents import incidents_group
from transfers.cli.operators import operators_group
from transfers.cli.outbox import outbox_group
from transfers.cli.partners import partners_group
from transfers.cli.sandbox import sandbox_partner
from transfers.cli.serve import serve
from transfers.cli.statements import ledger_group, statements_group
from transfers.cli.worker import worker


@click.group(cls=OperatorGroup)
@click.version_option(package_name="transfers")
def cli() -> None:
    """Operate the transfers booking service (settings: TRANSFERS_* environment variables).

    Exit codes: 0 done, 1 refused or failed, 2 bad usage or settings, 69 PostgreSQL or Redis unusable,
    or serve's port in use.
    """
    features.register()  # every command's bookings tell the feature packages (transfers/features.py)


cli.add_command(serve)
cli.add_command(db_group)
cli.add_command(clients_group)
cli.add_command(keys_group)
cli.add_command(wallet_group)
cli.add_command(partners_group)
cli.add_command(sandbox_partner)
cli.add_command(worker)
cli.add_command(bookings_group)
cli.add_command(outbox_group)
cli.add_command(doctor)
partners_group.add_command(rate_card_group)  # docs/rules/hosted-partners.md
partners_group.add_command(users_group)  # docs/rules/hosted-partners.md
clients_group.add_command(agency_users_group)  # transfers clients users create
cli.add_command(operators_group)  # docs/rules/console.md
cli.add_command(incidents_group)  # docs/rules/incidents.md#resolve
cli.add_command(flights_group)  # docs/rules/flights.md
cli.add_command(statements_group)  # docs/rules/statements.md
cli.add_command(ledger_group)  # docs/rules/statements.md
cli.add_command(fx_group)  # docs/rules/fx.md
prepare_commands(cli)


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
