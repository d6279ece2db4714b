"""``transfers statements list|close`` and ``transfers ledger check`` (docs/rules/statements.md#operators)
against the session database."""

from __future__ import annotations

import json
from datetime import timedelta

from sqlalchemy import update

from tests import ledger_world as world
from tests.conftest import ClientFactory, PartnerFactory
from tests.integration.test_cli_clients import cli_env  # noqa: F401  (the fixture)
from tests.integration.test_cli_operators import run_cli
from transfers.accounting.periods import period_of
from transfers.clock import ShiftedClock
from transfers.db.engine import Database
from transfers.db.tables import wallets


async def test_list_close_and_check(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
) -> None:
    client_id, _ = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner()
    # a ride of last month (the CLI's clock is the real one): closed by ``statements close``
    clock.advance(timedelta(days=-40))
    then = clock.now()
    ride = await world.book(db, world.values(client_id, partner_id, then, total="44.00", net="40.00"), then)
    await world.complete(db, ride, then)
    listed = await run_cli(cli_env, "statements", "list", "--partner", str(partner_id), "--json")
    assert listed.exit_code == 0, listed.output
    assert [(s["period"], s["status"], s["closing_balance"]) for s in json.loads(listed.output)] == [
        (period_of(then), "OPEN", "40.00")
    ]
    closed = await run_cli(cli_env, "statements", "close")
    assert closed.exit_code == 0 and closed.output.startswith("closed "), closed.output
    table = await run_cli(cli_env, "statements", "list", "--partner", str(partner_id))
    assert table.exit_code == 0 and "CLOSED" in table.output and "40.00" in table.output, table.output
    empty = await run_cli(cli_env, "statements", "list", "--partner", "999999")
    assert empty.exit_code == 0 and "(no statement" in empty.output
    ok = await run_cli(cli_env, "ledger", "check")
    assert ok.exit_code == 0 and ok.output.startswith("ok:"), ok.output


async def test_check_exits_1_with_the_first_difference(
    cli_env: dict[str, str],  # noqa: F811
    db: Database,
    make_client: ClientFactory,
) -> None:
    client_id, _ = await make_client(balance="7.00")
    async with db.write() as conn:
        await conn.execute(
            update(wallets).where(wallets.c.client_id == client_id).values(balance=wallets.c.balance + 1)
        )
    try:
        broken = await run_cli(cli_env, "ledger", "check")
        assert broken.exit_code == 1
        assert "balance 8.00, its account 7.00" in broken.output, broken.output
    finally:
        async with db.write() as conn:
            await conn.execute(
                update(wallets).where(wallets.c.client_id == client_id).values(balance=wallets.c.balance - 1)
            )
