"""``transfers bookings ...``, ``transfers outbox ...`` and ``transfers worker`` as operators run them.

Bookings are made through the real API (live service, fake partners on loopback); the CLI runs in a
thread (``asyncio.to_thread``) so the event loop keeps serving the fake partners it calls. Each
invocation reads its settings from the environment, like a new process would. Partners here serve
CPH, ARN, OSL and HEL only, so no other test's search reaches them.

``worker --once`` and the SIGTERM test run over the whole session database, as a real worker would:
they may also deliver messages other tests left behind, so the assertions are about this test's rows.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select, update

from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit, bookings, outbox
from transfers.deliveries import Dispatcher

SECRET_KEY = "test-secret-key-not-for-production"
SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"
# Partners of the worker tests approve in their create answer, so those bookings do not stay waiting
# for approval (which would put them in every later reconciliation batch of the session).
DRIVER = {"name": "Sam Driver", "phone": "+4740012345", "plate": "EL 12345"}


@pytest.fixture(autouse=True)
def _collect_stopped_servers() -> Iterator[None]:
    """Torn down after ``make_partner`` (autouse fixtures are set up first): collect the stopped fake
    partners now, so asyncio's "Task was destroyed but it is pending!" about their lifespan tasks is
    written here rather than into the stderr of a later test's CliRunner (which swaps sys.stderr)."""
    yield
    gc.collect()


@pytest.fixture
def cli_env(plain_database_url: str) -> dict[str, str]:
    return {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": SECRET_KEY,
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
        "TRANSFERS_PARTNER_TIMEOUT_SECONDS": "2",
    }


@pytest.fixture
def run(cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    # `transfers worker` configures structlog for its process; in this shared test process that would
    # point every later log line at a CliRunner buffer. The subprocess test covers the real thing.
    monkeypatch.setattr("transfers.cli.worker.configure_logging", lambda *_a, **_k: None)

    def invoke(args: list[str]) -> Result:
        get_settings.cache_clear()  # each invocation is a new "process": settings come from env
        try:
            return CliRunner().invoke(cli, args, env=cli_env, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    async def run_cli(*args: str) -> Result:
        return await asyncio.to_thread(invoke, list(args))

    return run_cli


# CliRunner swaps the process-wide sys.stdout/sys.stderr while a command runs, and this process's
# event loop keeps running meanwhile: its log lines (structlog's console format) and asyncio's
# complaints about other tests' leftovers can land in a command's output. The helpers look past them.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \[")


def out_lines(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if not _LOG_LINE.match(line)]


def ok_json(result: Result) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    (last, *_) = [line for line in reversed(out_lines(result)) if line.startswith(("{", "["))]
    return json.loads(last)


def refusal(result: Result) -> str:
    """The one ``error: ...`` line of a command that exited 1."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    return line


def dispatcher_of(service: LiveServer) -> Dispatcher:
    found: Dispatcher = service.app.state.services.dispatcher
    return found


async def book(
    http: httpx.AsyncClient, key: str, iata: str, partner: Any = None, *, mode: str = "ok", status_code: int = 500
) -> dict[str, Any]:
    """Search (partner answering normally), then book while the partner is in ``mode``."""
    if partner is not None:
        partner.mode = "ok"
    found = await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": iata}), headers=bearer(key)
    )
    assert found.status_code == 200, found.text
    if partner is not None:
        partner.mode, partner.status_code = mode, status_code
    created = await http.post(BOOKING, json=booking_body(found.json()["search_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    return booking


async def cancel(http: httpx.AsyncClient, key: str, reservation_no: str) -> None:
    answer = await http.delete(
        BOOKING,
        params={"reservation_no": reservation_no, "cancellation_id": 1, "note": "plans changed"},
        headers=bearer(key),
    )
    assert answer.json()["status"] == "Success", answer.text


async def messages_of(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(outbox)
            .join(bookings, bookings.c.id == outbox.c.booking_id)
            .where(bookings.c.reservation_no == reservation_no)
            .order_by(outbox.c.id)
        )
        return [dict(r._mapping) for r in rows]


async def make_due(db: Database, outbox_id: int) -> None:
    """Bring a message's next attempt forward (instead of waiting out the backoff), ahead of anything
    else due in the session database."""
    async with db.write() as conn:
        await conn.execute(
            update(outbox).where(outbox.c.id == outbox_id).values(next_attempt_at=datetime.now(UTC) - timedelta(days=1))
        )


async def test_bookings_show_and_list(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, service: LiveServer, run: Any
) -> None:
    client_id, key = await make_client(balance="100.00")
    _, partner_id, _ = await make_partner(airports=("CPH",), name="Copenhagen Cabs")
    booking = await book(http, key, "CPH")
    reservation_no = booking["reservation_no"]
    assert booking["status"] == "PENDING_APPROVAL"
    await cancel(http, key, reservation_no)

    shown = await run("bookings", "show", reservation_no)
    assert shown.exit_code == 0, shown.stderr
    text = "\n".join(out_lines(shown))
    assert f"booking {reservation_no}" in text
    assert "CANCELLED" in text and "Copenhagen Cabs" in text and "Ada Lovelace" in text
    assert "total 40.00 EUR, net 40.00 EUR" in text
    # docs/rules/cancellation.md: the policy it was sold with and what its cancellation cost
    assert "free until pickup" in text or "0:0" in text
    assert "by client at" in text and "fee 0.00, refund 40.00" in text
    # transitions: actor, from → to, reason
    assert "(new) → PENDING" in text
    assert "PENDING → PENDING_APPROVAL" in text and "partner acknowledged" in text
    assert f"client:{client_id}" in text and "PENDING_APPROVAL → CANCELLED" in text
    # ledger lines
    ledger_lines = [line.split() for line in text.splitlines() if "debit_booking" in line or "credit_refund" in line]
    assert [line[3:5] for line in ledger_lines] == [["debit_booking", "-40.00"], ["credit_refund", "40.00"]]
    # deliveries: the create (delivered on the first attempt, 200) and the cancellation notice (pending)
    assert "booking.create" in text and "delivered" in text
    assert "booking.update" in text and "pending" in text and "(no attempts yet)" in text
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if line.split()[:2] == ["ATTEMPT_NO", "STARTED_AT"]]
    assert len(headers) == 2
    first_attempt = lines[headers[0] + 1].split()
    assert first_attempt[0] == "1" and "done:ok" in first_attempt and "200" in first_attempt

    as_json = ok_json(await run("bookings", "show", reservation_no.lower(), "--json"))
    assert set(as_json) == {"booking", "ledger", "transitions", "deliveries"}
    assert as_json["booking"]["reservation_no"] == reservation_no
    assert as_json["booking"]["status"] == "CANCELLED"
    assert as_json["booking"]["total"] == "40.00" and as_json["booking"]["currency"] == "EUR"
    assert as_json["booking"]["partner_id"] == partner_id and as_json["booking"]["partner_name"] == "Copenhagen Cabs"
    assert [(e["kind"], e["amount"]) for e in as_json["ledger"]] == [
        ("debit_booking", "-40.00"),
        ("credit_refund", "40.00"),
    ]
    assert [(t["from_status"], t["to_status"]) for t in as_json["transitions"]] == [
        (None, "PENDING"),
        ("PENDING", "PENDING_APPROVAL"),
        ("PENDING_APPROVAL", "CANCELLED"),
    ]
    create, notice = as_json["deliveries"]
    assert (create["kind"], create["status"], create["attempts"]) == ("booking.create", "delivered", 1)
    assert [(a["attempt_no"], a["http_status"]) for a in create["delivery_attempts"]] == [(1, 200)]
    assert datetime.fromisoformat(create["delivery_attempts"][0]["started_at"]).tzinfo is not None
    assert (notice["kind"], notice["status"], notice["delivery_attempts"]) == ("booking.update", "pending", [])
    assert notice["payload"]["status"] == "CANCELLED"

    missing = await run("bookings", "show", "TB-NOSUCHTHING")
    assert refusal(missing) == "error: no booking 'TB-NOSUCHTHING'" and out_lines(missing) == []

    listed = await run("bookings", "list", "--client", str(client_id))
    assert listed.exit_code == 0, listed.stderr
    header, *rows = out_lines(listed)
    assert header.split()[:3] == ["RESERVATION_NO", "STATUS", "CLIENT"]
    assert len(rows) == 1 and rows[0].split()[:2] == [reservation_no, "CANCELLED"]
    filtered = ok_json(await run("bookings", "list", "--client", str(client_id), "--status", "approved", "--json"))
    assert filtered == []
    cancelled = ok_json(await run("bookings", "list", "--client", str(client_id), "--status", "CANCELLED", "--json"))
    assert [r["reservation_no"] for r in cancelled] == [reservation_no]
    await dispatcher_of(service).run_once()  # deliver the cancellation notice while the partner still serves


async def test_outbox_list_failed_and_retry(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    service: LiveServer,
    db: Database,
    run: Any,
) -> None:
    _, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("ARN",), name="Stockholm Transfers")

    # A create the partner refuses (400): booking DECLINED and refunded, message failed.
    declined = await book(http, key, "ARN", partner, mode="status", status_code=400)
    assert declined["status"] == "DECLINED"
    (refused_create,) = await messages_of(db, declined["reservation_no"])
    assert refused_create["status"] == "failed"

    failed = ok_json(await run("outbox", "list", "--failed", "--json", "--limit", "1000"))
    row = next(r for r in failed if r["id"] == refused_create["id"])
    assert (row["kind"], row["reservation_no"], row["status"], row["attempts"]) == (
        "booking.create",
        declined["reservation_no"],
        "failed",
        1,
    )
    assert row["partner_name"] == "Stockholm Transfers"
    assert all(r["status"] in ("failed", "expired") for r in failed)
    table = await run("outbox", "list", "--failed", "--limit", "1000")
    assert table.exit_code == 0
    header, *lines = out_lines(table)
    assert header.split() == [
        "ID",
        "KIND",
        "RESERVATION_NO",
        "PARTNER",
        "STATUS",
        "ATTEMPTS",
        "NEXT_ATTEMPT",
        "DEADLINE",
        "LAST_ERROR",
    ]
    (line,) = [ln for ln in lines if declined["reservation_no"] in ln]
    assert line.split()[:2] == [str(refused_create["id"]), "booking.create"] and " failed " in line

    # Re-sending that create would not revive the DECLINED booking: refused.
    refused = refusal(await run("outbox", "retry", str(refused_create["id"])))
    assert f"outbox message {refused_create['id']} creates booking {declined['reservation_no']}" in refused
    assert "DECLINED" in refused

    # A cancellation notice the partner refuses (400), then retried once the partner is fixed.
    booking = await book(http, key, "ARN", partner)
    assert booking["status"] == "PENDING_APPROVAL"
    await cancel(http, key, booking["reservation_no"])
    partner.mode, partner.status_code = "status", 400
    _, notice = await messages_of(db, booking["reservation_no"])
    await make_due(db, notice["id"])
    await dispatcher_of(service).run_once()
    _, notice = await messages_of(db, booking["reservation_no"])
    assert (notice["kind"], notice["status"], notice["attempts"]) == ("booking.update", "failed", 1)

    partner.mode = "ok"
    before = datetime.now(UTC)
    retried = ok_json(await run("outbox", "retry", str(notice["id"])))
    assert retried["outbox_id"] == notice["id"] and retried["status"] == "pending"
    assert retried["previous_status"] == "failed" and retried["webhook_id"] == notice["webhook_id"]
    _, again = await messages_of(db, booking["reservation_no"])
    assert again["status"] == "pending" and again["webhook_id"] == notice["webhook_id"]
    assert again["attempts"] == 1 and again["lease_until"] is None and again["finished_at"] is None
    assert before - timedelta(seconds=1) <= again["next_attempt_at"] <= datetime.now(UTC)
    assert abs(again["deadline_at"] - (again["next_attempt_at"] + timedelta(hours=24))) < timedelta(seconds=1)
    pending = ok_json(await run("outbox", "list", "--pending", "--json", "--limit", "1000"))
    assert notice["id"] in {r["id"] for r in pending}
    assert all(r["status"] == "pending" for r in pending)
    async with db.read() as conn:
        audit = (
            (await conn.execute(select(admin_audit).where(admin_audit.c.subject == f"outbox:{notice['id']}")))
            .mappings()
            .all()
        )
    assert [(a["action"], a["details"]["previous_status"]) for a in audit] == [("outbox.retry", "failed")]
    assert audit[0]["actor"].startswith("cli:")

    await dispatcher_of(service).run_once()
    _, done = await messages_of(db, booking["reservation_no"])
    assert (done["status"], done["attempts"]) == ("delivered", 2)
    updates = partner.calls("/booking/update")
    assert len(updates) == 2 and updates[0].headers["webhook-id"] == updates[1].headers["webhook-id"]
    shown = ok_json(await run("bookings", "show", booking["reservation_no"], "--json"))
    attempts = shown["deliveries"][1]["delivery_attempts"]
    assert [(a["attempt_no"], a["http_status"], a["outcome"]) for a in attempts] == [
        (1, 400, "permanent:http_error"),
        (2, 200, "done:ok"),
    ]

    delivered = refusal(await run("outbox", "retry", str(done["id"])))
    assert f"outbox message {done['id']} was delivered" in delivered
    assert refusal(await run("outbox", "retry", "987654321")) == "error: no outbox message 987654321"
    async with db.read() as conn:
        audited = (
            (await conn.execute(select(admin_audit.c.subject).where(admin_audit.c.action == "outbox.retry")))
            .scalars()
            .all()
        )
    assert f"outbox:{refused_create['id']}" not in audited and "outbox:987654321" not in audited


async def test_worker_once_delivers_a_pending_create(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database, run: Any
) -> None:
    client_id, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("OSL",), create_status="APPROVED", driver=DRIVER)
    booking = await book(http, key, "OSL", partner, mode="status", status_code=503)
    assert booking["status"] == "PENDING"
    (message,) = await messages_of(db, booking["reservation_no"])
    assert message["status"] == "pending" and message["attempts"] == 1
    partner.mode = "ok"
    await make_due(db, message["id"])

    summary = ok_json(await run("worker", "--once"))
    assert summary["attempted"] >= 1
    assert set(summary) == {
        "attempted",
        "expired",
        "completed",
        "reconciled",
        "health_pruned",
        "auto_declined",
        "emailed",
        "webhooks_attempted",
        "sessions_pruned",
        "events_pruned",
        "requests_pruned",
        "flights_checked",
        "statements_closed",
        "positions_pruned",
        "fx_files_fetched",
        "partners_scored",
        "messages_planned",
        "reminders_read",
        "messages_sent",
        "messages_pruned",
    }

    read = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    assert read.json()["status"] == "APPROVED" and read.json()["driver"]["name"] == DRIVER["name"]
    (message,) = await messages_of(db, booking["reservation_no"])
    assert (message["status"], message["attempts"]) == ("delivered", 2)
    first, second = partner.calls("/booking/create")
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == message["webhook_id"]
    assert second.signature_ok and second.body["reservation_no"] == booking["reservation_no"]
    async with db.read() as conn:
        status = (await conn.execute(select(bookings.c.status).where(bookings.c.client_id == client_id))).scalar_one()
    assert status == "APPROVED"


async def test_worker_finishes_the_delivery_in_flight_on_sigterm(
    http: httpx.AsyncClient,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    cli_env: dict[str, str],
    tmp_path: Path,
) -> None:
    _, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("HEL",), create_status="APPROVED", driver=DRIVER)
    booking = await book(http, key, "HEL", partner, mode="status", status_code=503)
    assert booking["status"] == "PENDING"
    (message,) = await messages_of(db, booking["reservation_no"])
    partner.mode, partner.delay = "slow", 1.5  # answers (ok) after 1.5 s, within the 2 s partner timeout
    await make_due(db, message["id"])

    env = {**os.environ, **cli_env, "TRANSFERS_LOG_LEVEL": "INFO", "TRANSFERS_OUTBOX_POLL_SECONDS": "0.2"}
    # Files, not pipes: nobody reads a pipe while we wait, and a chatty worker must never block on it.
    log_file, err_file = tmp_path / "worker.out", tmp_path / "worker.err"
    with log_file.open("wb") as out_fd, err_file.open("wb") as err_fd:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "from transfers.cli.main import main; main()",
            "worker",
            env=env,
            stdout=out_fd,
            stderr=err_fd,
        )
    try:
        deadline = time.monotonic() + 60  # a cold interpreter start on a busy CI machine
        while len(partner.calls("/booking/create")) < 2:
            assert time.monotonic() < deadline, "the worker never called the partner"
            assert proc.returncode is None, err_file.read_text()
            await asyncio.sleep(0.05)
        in_flight = partner.calls("/booking/create")[1]
        assert in_flight.finished == 0.0  # the partner is still answering
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), timeout=30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err_file.read_text()
    assert in_flight.finished > 0.0
    events = [json.loads(line)["event"] for line in log_file.read_text().splitlines() if line.startswith("{")]
    assert "worker_stopping" in events and events[-1] == "worker_stopped"
    (message,) = await messages_of(db, booking["reservation_no"])
    assert (message["status"], message["attempts"]) == ("delivered", 2)
    read = await http.get(BOOKING, params={"reservation_no": booking["reservation_no"]}, headers=bearer(key))
    assert read.json()["status"] == "APPROVED"
    assert Decimal(read.json()["price"]["total"]) == Decimal("40.00")


def test_tables_align_clip_and_escape_what_others_wrote() -> None:
    from transfers.cli.tables import cell, clip, render, render_pairs, width

    table = render(["id", "error"], [[7, "refused\n\x1b[2Jboom"], [12, None]], right={"id"}, max_width={"error": 12})
    assert table.splitlines() == ["ID  ERROR", " 7  refused\\x0a…", "12  -"]
    assert "\x1b" not in table and "\n" not in table.splitlines()[1]
    assert cell("\u202eevil") == "\\u202eevil"  # a bidi override cannot reorder the operator's screen
    assert render(["id"], []).splitlines() == ["ID", "(none)"]
    assert width("東京") == 4 and clip("東京駅前", 5) == "東京…"
    assert render_pairs([("status", "APPROVED"), ("driver", None)]) == "status  APPROVED\ndriver  -"
    assert cell(datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2030-01-02 03:04:05Z"
    assert cell(Decimal("-40.00")) == "-40.00"
