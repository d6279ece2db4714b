"""``transfers incidents list [--open] [--json]`` and ``transfers incidents resolve`` (docs/rules/incidents.md#resolve):
the queue, a resolution with its refund, and bad options answered with exit 1/2 and nothing written."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import httpx

from tests.conftest import ClientFactory, PartnerFactory
from tests.helpers import ledger_of, row_of
from tests.incidents.helpers import approved_booking, at, counts, report
from tests.integration.test_cli_clients import cli_env, run_cli  # noqa: F401  (the session fixture)
from transfers.clock import ShiftedClock
from transfers.db.engine import Database


async def test_the_cli_lists_the_queue_and_resolves_with_a_refund(
    http: httpx.AsyncClient,
    db: Database,
    clock: ShiftedClock,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    cli_env: dict[str, str],  # noqa: F811
) -> None:
    key, number, row = await approved_booking(http, db, make_client, make_partner)
    at(clock, row["pickup_at"], timedelta(hours=1))
    late = (await report(http, key, number, {"type": "WRONG_VEHICLE", "description": "a hatchback"})).json()

    listed = await run_cli(cli_env, "incidents", "list", "--open", "--json")
    assert listed.exit_code == 0, listed.stderr
    mine = [i for i in json.loads(listed.stdout) if i["id"] == late["id"]]
    assert mine == [late]
    table = await run_cli(cli_env, "incidents", "list", "--open")
    assert table.exit_code == 0 and late["id"] in table.stdout and "WRONG_VEHICLE" in table.stdout

    before = await counts(db, row["id"], number)
    for args, code in [
        (["--responsible", "partner", "--refund", "12.505", "--note", "x"], 1),
        (["--responsible", "partner", "--refund", "-1", "--note", "x"], 1),
        (["--responsible", "partner", "--refund", "56.06", "--note", "x"], 1),
        (["--responsible", "driver", "--refund", "1.00", "--note", "x"], 2),
        (["--responsible", "partner", "--refund", "1.00"], 2),
    ]:
        refused = await run_cli(cli_env, "incidents", "resolve", late["id"], *args)
        assert refused.exit_code == code, (args, refused.stdout, refused.stderr)
    missing = await run_cli(
        cli_env, "incidents", "resolve", "inc_nope", "--responsible", "none", "--refund", "0", "--note", "n"
    )
    assert missing.exit_code == 1
    assert await counts(db, row["id"], number) == before

    done = await run_cli(
        cli_env,
        "incidents",
        "resolve",
        late["id"],
        "--responsible",
        "partner",
        "--refund",
        "12.50",
        "--note",
        "Wrong car",
    )
    assert done.exit_code == 0, done.stderr
    resolved = json.loads(done.stdout)
    assert resolved["status"] == "RESOLVED" and resolved["resolution"]["refund"] == "12.50"
    assert resolved["resolution"]["by"].startswith("cli:")
    assert ("incident_wrong_vehicle", Decimal("12.50")) in await ledger_of(db, number)
    assert (await row_of(db, number))["status"] == "APPROVED"
    again = await run_cli(
        cli_env, "incidents", "resolve", late["id"], "--responsible", "none", "--refund", "0", "--note", "again"
    )
    assert again.exit_code == 1 and "resolved meanwhile" in again.stderr
    still = json.loads((await run_cli(cli_env, "incidents", "list", "--open", "--json")).stdout)
    assert late["id"] not in {i["id"] for i in still}
