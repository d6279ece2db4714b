"""Signing-secret rotation with an overlap (docs/rules/console.md): ``transfers partners
rotate-secret ID`` prints the new secret once; during the overlap every call to the partner (a
search, a create's own attempt, a worker's delivery) carries both signatures, checked by a
recording partner over real HTTP; afterwards only the new one."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from tests.api.test_booking_lifecycle import svc_of
from tests.conftest import ClientFactory, PartnerFactory, bearer
from tests.fake_partner import Recorded
from tests.helpers import booking_body, search_body
from tests.servers import LiveServer
from transfers.cli.main import cli
from transfers.clock import ShiftedClock
from transfers.config import Settings, get_settings
from transfers.db.engine import Database
from transfers.db.migrate import upgrade
from transfers.db.tables import admin_audit, partners
from transfers.partners import repository as partners_repo
from transfers.partners import rotation
from transfers.partners.secrets_box import SecretBox
from transfers.partners.service import PartnerNotFound, endpoint_for, ensure_sandbox_partner
from transfers.partners.signing import verify

SECRET_KEY = "test-secret-key-not-for-production"
SEARCH = "/api/v1/booking-api/search"
BOOKING = "/api/v1/booking-api/booking"


@pytest.fixture
def run(plain_database_url: str) -> Any:
    base_env = {
        "TRANSFERS_DATABASE_URL": plain_database_url,
        "TRANSFERS_SECRET_KEY": SECRET_KEY,
        "TRANSFERS_ENVIRONMENT": "sandbox",
        # the fake partners and webhook receivers listen on loopback (the SSRF guards are on by default)
        "TRANSFERS_ALLOW_PRIVATE_PARTNER_URLS": "1",
        "TRANSFERS_ALLOW_PRIVATE_WEBHOOK_URLS": "1",
        "TRANSFERS_LOG_LEVEL": "WARNING",
    }

    def invoke(*args: str, **env: str) -> Result:
        get_settings.cache_clear()
        try:
            return CliRunner().invoke(cli, list(args), env={**base_env, **env}, catch_exceptions=False)
        finally:
            get_settings.cache_clear()

    return invoke


def signatures(call: Recorded) -> list[str]:
    return call.headers["webhook-signature"].split(" ")


def verifies(secret: str, call: Recorded) -> bool:
    body = b"" if call.body is None else orjson.dumps(call.body)
    return verify(secret, call.headers, body)


async def rotate_by_cli(run: Any, partner_id: int, *extra: str) -> dict[str, Any]:
    result: Result = await asyncio.to_thread(run, "partners", "rotate-secret", str(partner_id), *extra)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    printed: dict[str, Any] = json.loads(result.stdout)
    return printed


async def test_calls_carry_both_signatures_during_the_overlap_and_the_new_one_after(
    http: httpx.AsyncClient,
    service: LiveServer,
    run: Any,
    make_client: ClientFactory,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    client_id, key = await make_client()
    partner, partner_id, _ = await make_partner(airports=("LBA",))
    old = partner.signing_secret
    before = datetime.now(UTC)
    printed = await rotate_by_cli(run, partner_id)
    assert set(printed) == {"partner_id", "signing_secret", "previous_secret_valid_until"}
    new = printed["signing_secret"]
    assert printed["partner_id"] == partner_id and new.startswith("whsec_") and new != old
    until = datetime.fromisoformat(printed["previous_secret_valid_until"])
    assert before + timedelta(hours=24) <= until <= datetime.now(UTC) + timedelta(hours=24, seconds=5)

    # The partner still verifies with the old secret: it keeps accepting every call.
    partner.signing_secret = old
    found = await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "LBA"}), headers=bearer(key)
    )
    assert found.status_code == 200 and found.json()["vehicles"], found.text
    booked = await http.post(BOOKING, json=booking_body(found.json()["search_id"]), headers=bearer(key))
    assert booked.status_code == 200 and booked.json()["booking"]["status"] == "PENDING_APPROVAL", booked.text
    reservation_no = booked.json()["booking"]["reservation_no"]
    cancelled = await http.delete(
        BOOKING, params={"reservation_no": reservation_no, "cancellation_id": 1}, headers=bearer(key)
    )
    assert cancelled.status_code == 200, cancelled.text
    await svc_of(service).dispatcher.run_once()  # the worker's delivery of the cancellation
    calls = [*partner.calls("/booking/search"), *partner.calls("/booking/create"), *partner.calls("/booking/update")]
    assert [c.path for c in calls] == ["/booking/search", "/booking/create", "/booking/update"]
    for call in calls:
        assert call.signature_ok  # verified by the partner's own check, with the old secret
        assert len(signatures(call)) == 2
        assert verifies(new, call) and verifies(old, call)
        assert signatures(call)[0] != signatures(call)[1]

    # After the overlap: only the new secret signs; a partner still on the old one refuses.
    async with db.write() as conn:
        await partners_repo.update_partner(conn, partner_id, previous_secret_until=datetime.now(UTC))
    partner.requests.clear()
    again = await http.post(
        SEARCH, json=search_body(pickup_location={"type": "AIRPORT", "iata_code": "LBA"}), headers=bearer(key)
    )
    assert again.status_code == 200, again.text
    (call,) = partner.calls("/booking/search")
    assert len(signatures(call)) == 1 and verifies(new, call) and not verifies(old, call)
    assert not call.signature_ok  # a partner still on the old secret now refuses the call
    async with db.read() as conn:
        audit = (
            await conn.execute(
                select(admin_audit).where(
                    admin_audit.c.action == "partner.rotate_secret", admin_audit.c.subject == f"partner:{partner_id}"
                )
            )
        ).all()
        stored = (await conn.execute(select(partners).where(partners.c.id == partner_id))).one()
    assert len(audit) == 1 and audit[0].actor.startswith("cli:")
    assert audit[0].details["previous_valid_until"] == printed["previous_secret_valid_until"]
    # stored encrypted, never in clear
    assert new not in stored.signing_secret_enc and old not in (stored.previous_signing_secret_enc or "")
    _ = client_id


async def test_rotating_again_keeps_only_the_secret_just_replaced(
    service: LiveServer,
    run: Any,
    make_partner: PartnerFactory,
    db: Database,
    settings: Settings,
) -> None:
    partner, partner_id, _ = await make_partner(airports=("GOH",))
    original = partner.signing_secret
    first = (await rotate_by_cli(run, partner_id))["signing_secret"]
    second = (await rotate_by_cli(run, partner_id, "--overlap-hours", "2"))["signing_secret"]
    point = await endpoint_for(db, SecretBox(SECRET_KEY), partner_id)
    assert point is not None
    assert point.signing_secret == second and point.previous_signing_secret == first
    assert point.previous_until is not None
    assert point.previous_until - datetime.now(UTC) <= timedelta(hours=2)
    assert original not in (point.signing_secret, point.previous_signing_secret)
    client = svc_of(service).partner_client
    result = await client.call(point, "POST", "/booking/search", {"probe": True}, timeout=2)
    assert result.http_status == 200
    (call,) = partner.calls("/booking/search")
    assert len(signatures(call)) == 2
    assert verifies(second, call) and verifies(first, call) and not verifies(original, call)
    # --overlap-hours 0: the replaced secret stops signing at once
    third = (await rotate_by_cli(run, partner_id, "--overlap-hours", "0"))["signing_secret"]
    point = await endpoint_for(db, SecretBox(SECRET_KEY), partner_id)
    assert point is not None and point.signing_secret == third and point.previous_signing_secret is None


async def test_two_rotations_at_once_run_one_after_the_other(
    database_url: str,
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, partner_id, _ = await make_partner(airports=("GOH",))
    box = SecretBox(SECRET_KEY)
    engines = [Database(database_url, pool_size=1, application_name=f"rotate-{i}") for i in range(2)]
    try:
        results = await asyncio.gather(
            *(
                rotation.rotate_signing_secret(
                    engine, clock, box, partner_id, overlap=timedelta(hours=1), actor="tests"
                )
                for engine in engines
            )
        )
    finally:
        await asyncio.gather(*(engine.dispose() for engine in engines))
    point = await endpoint_for(db, box, partner_id)
    assert point is not None
    made = {r.signing_secret for r in results}
    # serialised: the later rotation replaced the earlier one's secret, so both are the pair now
    assert {point.signing_secret, point.previous_signing_secret} == made
    async with db.read() as conn:
        audited = (
            await conn.execute(
                select(admin_audit.c.id).where(
                    admin_audit.c.action == "partner.rotate_secret", admin_audit.c.subject == f"partner:{partner_id}"
                )
            )
        ).all()
    assert len(audited) == 2


def test_cli_refuses_an_unknown_partner_and_a_bad_overlap(run: Any) -> None:
    unknown = run("partners", "rotate-secret", "987654321")
    assert unknown.exit_code == 1 and unknown.stderr == "error: no partner 987654321\n" and unknown.stdout == ""
    for bad in ("-1", "721", "abc", "nan"):
        refused = run("partners", "rotate-secret", "1", "--overlap-hours", bad)
        assert refused.exit_code == 2, (bad, refused.stdout)
        assert "--overlap-hours" in refused.stderr
    assert run("partners", "rotate-secret", "x").exit_code == 2


async def test_the_sandbox_partner_is_not_rotated(tmp_path: Path, clock: ShiftedClock) -> None:
    """Its secret is derived from the secret key and restored at every start (own database here:
    a sandbox partner serves every airport and must not reach the session's searches)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'sandbox.sqlite3'}"
    await asyncio.to_thread(upgrade, url)
    database = Database(url, pool_size=1)
    box = SecretBox(SECRET_KEY)
    try:
        partner_id = await ensure_sandbox_partner(database, clock, box, "http://127.0.0.1:1/sandbox-partner")
        with pytest.raises(rotation.RotationRefused):
            await rotation.rotate_signing_secret(
                database, clock, box, partner_id, overlap=timedelta(hours=1), actor="tests"
            )
        with pytest.raises(PartnerNotFound):
            await rotation.rotate_signing_secret(
                database, clock, box, partner_id + 1, overlap=timedelta(hours=1), actor="tests"
            )
        with pytest.raises(ValueError, match="negative"):
            await rotation.rotate_signing_secret(
                database, clock, box, partner_id, overlap=timedelta(hours=-1), actor="tests"
            )
        async with database.read() as conn:
            assert (
                await conn.execute(select(admin_audit.c.id).where(admin_audit.c.action == "partner.rotate_secret"))
            ).all() == []
    finally:
        await database.dispose()
