"""``transfers doctor`` as an operator runs it: against a healthy sandbox (the service serving its
built-in partner, plus a test partner) every check passes; a partner that accepts connections and
never answers fails the run, named; Redis on a closed port fails its row."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.process.conftest import FreshDatabase, Partners, Processes
from tests.process.operator import operator_env, transfers
from tests.servers import free_port

pytestmark = pytest.mark.slow


@contextlib.asynccontextmanager
async def hanging_server() -> AsyncIterator[str]:
    """Accepts connections, reads what is sent, never answers."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(ConnectionError, OSError):
            while await reader.read(65536):
                pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        for writer in held:
            writer.close()
        server.close()


def _rows(stdout: str) -> dict[str, dict[str, Any]]:
    report = json.loads(stdout)
    return {row["check"]: row for row in report["checks"]}


async def test_doctor_passes_against_a_healthy_sandbox(
    fresh_db: FreshDatabase, procs: Processes, partners: Partners, tmp_path: Path
) -> None:
    await partners.add(fresh_db, airports=("LHR",), name="Healthy Cars")
    env = operator_env(fresh_db.url, sandbox_partner="1", partner_timeout_seconds="2")
    await procs.serve("serve", env)  # registers the built-in sandbox partner at its own URL
    ran = await transfers("doctor", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.show()
    rows = _rows(ran.stdout)
    assert {rows[name]["result"] for name in ("settings", "database", "migrations", "secret key")} == {"PASS"}
    partner_rows = {name: row for name, row in rows.items() if name.startswith("partner ")}
    assert len(partner_rows) == 2, rows
    assert all(row["result"] == "PASS" and "search at" in row["detail"] for row in partner_rows.values()), rows
    assert any(name.endswith("Healthy Cars") for name in partner_rows)
    assert rows["redis"]["result"] == "SKIP"
    # docs/rules/fx.md#doctor: the sandbox table, dated today, is the rates in use
    assert rows["fx rates"]["result"] == "PASS", rows["fx rates"]
    assert rows["fx rates"]["detail"].startswith("sandbox: 9 rates, newest ")
    assert "oldest 0 day(s) old (max 4)" in rows["fx rates"]["detail"]
    if fresh_db.is_postgres:
        assert {rows[name]["result"] for name in ("max_connections", "clock")} == {"PASS"}
        assert rows["database time zone"]["result"] in ("PASS", "WARN")
    table = await transfers("doctor", env=env, cwd=tmp_path)
    assert table.returncode == 0 and table.stdout.rstrip().endswith("PASS"), table.show()
    assert "CHECK" in table.stdout and "Healthy Cars" in table.stdout


async def test_doctor_fails_naming_the_partner_that_hangs(
    fresh_db: FreshDatabase, partners: Partners, tmp_path: Path
) -> None:
    await partners.add(fresh_db, airports=("CDG",), name="Answering Cars")
    async with hanging_server() as url:
        await Partners.register(fresh_db, base_url=url, airports=("CDG",), name="Hanging Cars")
        env = operator_env(fresh_db.url, partner_timeout_seconds="1")
        ran = await transfers("doctor", "--json", env=env, cwd=tmp_path)
        table = await transfers("doctor", env=env, cwd=tmp_path)
    assert ran.returncode == 1, ran.show()
    rows = _rows(ran.stdout)
    (hanging,) = [row for name, row in rows.items() if name.endswith("Hanging Cars")]
    assert hanging["result"] == "FAIL" and "no answer within" in hanging["detail"], hanging
    (answering,) = [row for name, row in rows.items() if name.endswith("Answering Cars")]
    assert answering["result"] == "PASS", answering
    assert table.returncode == 1 and "Traceback" not in table.stdout + table.stderr, table.show()
    failed = [line for line in table.stdout.splitlines() if "FAIL" in line and "Hanging Cars" in line]
    assert failed, table.show()
    assert table.stdout.rstrip().endswith("checks failed")


async def test_doctor_fails_on_redis_and_a_database_it_cannot_reach(fresh_db: FreshDatabase, tmp_path: Path) -> None:
    redis_port = free_port()
    env = operator_env(fresh_db.url, redis_url=f"redis://:secret-pw@127.0.0.1:{redis_port}/0")
    rows = _rows((await transfers("doctor", "--json", env=env, cwd=tmp_path)).stdout)
    assert rows["redis"]["result"] == "FAIL" and f"127.0.0.1:{redis_port}" in rows["redis"]["detail"]
    assert "secret-pw" not in json.dumps(rows)
    down = operator_env(f"postgresql://postgres:secret-pw@127.0.0.1:{free_port()}/transfers")
    ran = await transfers("doctor", "--json", env=down, cwd=tmp_path)
    assert ran.returncode == 1 and "secret-pw" not in ran.stdout + ran.stderr, ran.show()
    rows = _rows(ran.stdout)
    assert rows["database"]["result"] == "FAIL" and "connection refused" in rows["database"]["detail"]
    bad = operator_env(fresh_db.url, partner_timeout_seconds="abc")
    rows = _rows((await transfers("doctor", "--json", env=bad, cwd=tmp_path)).stdout)
    assert rows["settings"]["result"] == "FAIL" and "TRANSFERS_PARTNER_TIMEOUT_SECONDS" in rows["settings"]["detail"]


async def test_doctor_judges_a_hosted_partner_by_its_rate_card_and_users(
    fresh_db: FreshDatabase, tmp_path: Path
) -> None:
    """A hosted partner made as the README says has no server; doctor must not
    probe its empty base URL. It fails while the partner has no card and no user (saying what to run),
    and passes once both exist."""
    env = operator_env(fresh_db.url)
    made = await transfers(
        "partners", "create", "--name", "Nuuk Taxi ApS", "--hosted", "--airports", "GOH", env=env, cwd=tmp_path
    )
    assert made.returncode == 0, made.show()
    partner_id = json.loads(made.stdout)["partner_id"]
    ran = await transfers("doctor", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 1, ran.show()
    row = _rows(ran.stdout)[f"partner {partner_id} Nuuk Taxi ApS"]
    assert row["result"] == "FAIL", row
    assert "no rate card" in row["detail"] and "no active portal user" in row["detail"], row
    assert "TCP" not in row["detail"] and ":80" not in row["detail"], row
    example = Path(__file__).parents[2] / "examples" / "rate-card.json"
    card = await transfers(
        "partners", "rate-card", "set", str(partner_id), "--file", str(example), env=env, cwd=tmp_path
    )
    assert card.returncode == 0, card.show()
    user = await transfers(
        "partners", "users", "create", "--partner", str(partner_id), "--email", "desk@nuuk.example",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert user.returncode == 0, user.show()
    ran = await transfers("doctor", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.show()
    row = _rows(ran.stdout)[f"partner {partner_id} Nuuk Taxi ApS"]
    assert row["result"] == "PASS" and "rate card valid (2 vehicle(s)), 1 active user(s)" in row["detail"], row
    assert "partners" not in _rows(ran.stdout)  # no "no enabled partner" warning: the hosted one counts


async def test_a_misspelled_setting_is_a_warning_at_start_and_in_doctor(
    fresh_db: FreshDatabase, tmp_path: Path
) -> None:
    """A misspelt variable (TRANSFERS_DATABSE_URL) was silently ignored; now every command warns at start
    (and runs on) and doctor has a WARN row, both naming TRANSFERS_DATABASE_URL."""
    env = {**operator_env(fresh_db.url), "TRANSFERS_DATABSE_URL": "postgresql://typo@127.0.0.1/typo"}
    listed = await transfers("partners", "list", env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.show()
    assert listed.stderr.splitlines() == [
        "warning: TRANSFERS_DATABSE_URL is not a setting of this release and is ignored; "
        "did you mean TRANSFERS_DATABASE_URL?"
    ], listed.show()
    ran = await transfers("doctor", "--json", env=env, cwd=tmp_path)
    row = _rows(ran.stdout)["variables"]
    assert row["result"] == "WARN" and "did you mean TRANSFERS_DATABASE_URL?" in row["detail"], row
    assert ran.returncode == 0, ran.show()  # a warning does not fail the run
    # Several unknown variables: one table line each, each with its own suggestion (joined in one
    # cell, the table cut the line and the suggestions with it).
    env["TRANSFERS_PARTNER_TIMEOUT_SECOND"] = "3"
    table = await transfers("doctor", env=env, cwd=tmp_path)
    lines = [line for line in table.stdout.splitlines() if line.startswith("variables")]
    assert len(lines) == 2, table.show()
    assert lines[0].endswith("did you mean TRANSFERS_DATABASE_URL?"), table.show()
    assert lines[1].endswith("did you mean TRANSFERS_PARTNER_TIMEOUT_SECONDS?"), table.show()
    clean = _rows((await transfers("doctor", "--json", env=operator_env(fresh_db.url), cwd=tmp_path)).stdout)
    assert clean["variables"]["result"] == "PASS"
