"""Every partner delivery attempt that got an HTTP answer keeps a bounded excerpt of it
(docs/rules/console.md: "partner deliveries with every attempt, the answer's status and a bounded excerpt"), on both
databases: an accepting create answer (on PostgreSQL written by the one-statement acknowledgement,
``bookings/fast_paths.py``), a refusal, and ``transfers bookings show`` printing it. Partners here
serve KRK and GVA only, so no other test's search reaches them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from tests.api.test_booking_lifecycle import search
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.helpers import booking_body
from transfers.cli.main import cli
from transfers.config import get_settings
from transfers.db.engine import Database
from transfers.db.tables import bookings, delivery_attempts, outbox

BOOKING = "/api/v1/booking-api/booking"


async def attempts_of(db: Database, reservation_no: str) -> list[dict[str, Any]]:
    async with db.read() as conn:
        rows = await conn.execute(
            select(delivery_attempts, outbox.c.kind)
            .select_from(
                delivery_attempts.join(outbox, outbox.c.id == delivery_attempts.c.outbox_id).join(
                    bookings, bookings.c.id == outbox.c.booking_id
                )
            )
            .where(bookings.c.reservation_no == reservation_no)
            .order_by(delivery_attempts.c.id)
        )
        return [dict(r._mapping) for r in rows]


async def book(http: httpx.AsyncClient, key: str, iata: str, partner: Any, *, mode: str = "ok") -> dict[str, Any]:
    partner.mode = "ok"
    found = await search(http, key, iata)
    partner.mode = mode
    created = await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    booking: dict[str, Any] = created.json()["booking"]
    return booking


@pytest.fixture
def run(plain_database_url: str) -> Any:
    env = {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": "test-secret-key-not-for-production",
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }

    def invoke(args: list[str]) -> Result:
        get_settings.cache_clear()  # each invocation is a new "process": settings come from env
        try:
            return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    async def run_cli(*args: str) -> Result:
        return await asyncio.to_thread(invoke, list(args))

    return run_cli


async def test_an_accepted_create_keeps_its_answer_cut_at_500_characters_and_the_cli_shows_it(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database, run: Any
) -> None:
    _, key = await make_client(balance="100.00")
    message = "Booked for you; " + "ñ" * 300 + "\u202e<end>" + "z" * 600  # a long, valid create answer
    partner, _, _ = await make_partner(airports=("KRK",), create_message=message)
    booking = await book(http, key, "KRK", partner)
    assert booking["status"] == "PENDING_APPROVAL"  # PostgreSQL: the one-statement acknowledgement wrote it

    (attempt,) = await attempts_of(db, booking["reservation_no"])
    body = json.dumps(
        {"reservation_no": attempt["answer_excerpt"].split('"')[3], "status": "PENDING", "message": message},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert (attempt["kind"], attempt["outcome"], attempt["http_status"]) == ("booking.create", "done:ok", 200)
    assert len(attempt["answer_excerpt"]) == 500 and attempt["answer_excerpt"] == body[:500]
    assert attempt["answer_excerpt"].startswith('{"reservation_no":"P-') and attempt["error"] is None

    shown = await run("bookings", "show", booking["reservation_no"])
    assert shown.exit_code == 0, shown.stderr
    (line,) = [line for line in shown.stdout.splitlines() if line.strip().startswith("answer #")]
    # the whole excerpt, terminal-safe: the bidi override reads as an escape, never obeyed
    assert line == "      answer #1: " + body[:500].replace("\u202e", "\\u202e")
    as_json = json.loads((await run("bookings", "show", booking["reservation_no"], "--json")).stdout)
    (create,) = [m for m in as_json["deliveries"] if m["kind"] == "booking.create"]
    assert [a["answer_excerpt"] for a in create["delivery_attempts"]] == [body[:500]]


async def test_a_refusal_keeps_its_body_cleaned_and_bounded(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database, run: Any
) -> None:
    _, key = await make_client(balance="100.00")
    refusal = b'{"status":"Error","message":"card\r\n\x1b[2Jdeclined \xff\xfe' + b"q" * 2000 + b'"}'
    partner, _, _ = await make_partner(airports=("GVA",), status_code=422, status_body=refusal)
    booking = await book(http, key, "GVA", partner, mode="status")
    assert booking["status"] == "DECLINED"  # a 4xx is the partner's permanent refusal

    (attempt,) = await attempts_of(db, booking["reservation_no"])
    assert (attempt["outcome"], attempt["http_status"]) == ("permanent:http_error", 422)
    expected = ('{"status":"Error","message":"card\n[2Jdeclined \ufffd\ufffd' + "q" * 2000)[:500]
    assert attempt["answer_excerpt"] == expected and len(expected) == 500

    as_json = json.loads((await run("bookings", "show", booking["reservation_no"], "--json")).stdout)
    (create,) = as_json["deliveries"]
    assert [(a["http_status"], a["answer_excerpt"]) for a in create["delivery_attempts"]] == [(422, expected)]


async def test_an_attempt_without_an_answer_has_no_excerpt(
    http: httpx.AsyncClient, make_client: ClientFactory, make_partner: PartnerFactory, db: Database
) -> None:
    _, key = await make_client(balance="100.00")
    partner, _, _ = await make_partner(airports=("KRK",))
    found = await search(http, key, "KRK")
    partner.mode = "hang"
    created = await http.post(BOOKING, json=booking_body(found["search_id"]), headers=bearer(key))
    assert created.status_code == 200, created.text
    (attempt,) = await attempts_of(db, created.json()["booking"]["reservation_no"])
    assert attempt["outcome"].endswith(":timeout") and attempt["http_status"] is None
    assert attempt["answer_excerpt"] is None
