"""``transfers --help`` lists the sub-commands without importing them (cli/main.py): the listing's
one-line helps are kept in a table, so the table must say what each command's own help says, and
listing them must not load the service's heavy modules (the settings' pydantic, SQLAlchemy, the
booking rules), which took over a second before the first line of help."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from transfers.cli.main import COMMANDS, cli, short_help

HEAVY = ("sqlalchemy", "pydantic", "pydantic_settings", "alembic", "fastapi", "structlog", "transfers.config")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listing_says_what_each_command_says(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and command.name == name
    for limit in (45, 200):
        assert short_help(name, limit) == command.get_short_help_str(limit), name


def test_every_command_is_listed_and_found() -> None:
    listed = CliRunner().invoke(cli, ["--help"])
    assert listed.exit_code == 0, listed.output
    for name in COMMANDS:
        assert f"\n  {name} " in listed.output, name
    partners = cli.get_command(click.Context(cli), "partners")
    clients = cli.get_command(click.Context(cli), "clients")
    assert isinstance(partners, click.Group) and {"rate-card", "users"} <= set(partners.commands)
    assert isinstance(clients, click.Group) and "users" in clients.commands


@pytest.mark.process  # a fresh interpreter, to see what `transfers --help` imports
def test_help_imports_none_of_the_heavy_modules() -> None:
    script = (
        "import sys\n"
        "from transfers.cli.main import main\n"
        "sys.argv = ['transfers', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    ran = subprocess.run(  # noqa: S603 (this interpreter, a fixed script)
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert "Commands:" in ran.stdout and "LOADED []" in ran.stdout, ran.stdout + ran.stderr
