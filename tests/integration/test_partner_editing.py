"""The operator use cases behind the console's partner page (partners/editing.py) on both databases:
edit base URL / airports / markup (audited with each change, nothing written when nothing changed),
and the conformance check run against the partner's own server with its stored credentials."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from tests.conftest import PartnerFactory
from tests.servers import LiveServer, free_port
from transfers.clock import ShiftedClock
from transfers.config import Settings
from transfers.db.engine import Database
from transfers.db.tables import admin_audit
from transfers.partners import editing, fields
from transfers.partners import repository as partners_repo
from transfers.partners.client import PartnerClient
from transfers.partners.conformance import Deadlines
from transfers.partners.models import InvalidPartnerUrl
from transfers.partners.secrets_box import SecretBox, resolve_secret_key
from transfers.partners.service import PartnerNotFound, endpoint_for, register_partner, set_partner_status
from transfers.sandbox_partner import SandboxPartnerConfig, create_sandbox_partner_app


async def audit_of(db: Database, partner_id: int, action: str) -> list[Any]:
    async with db.read() as conn:
        return list(
            (
                await conn.execute(
                    select(admin_audit)
                    .where(admin_audit.c.action == action, admin_audit.c.subject == f"partner:{partner_id}")
                    .order_by(admin_audit.c.id)
                )
            ).all()
        )


async def test_update_settings_writes_and_audits_only_what_changed(
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, partner_id, _ = await make_partner(airports=("GOH",), markup="5")
    async with db.read() as conn:
        before = await partners_repo.get_with_secrets(conn, partner_id)
    assert before is not None
    same = editing.PartnerSettings(before.record.base_url, ("GOH",), Decimal("5"))
    assert await editing.update_settings(db, clock, partner_id, same, allow_private=True, actor="operator:a@x") == {}
    assert await audit_of(db, partner_id, "partner.update") == []
    wanted = editing.PartnerSettings(
        "https://cars.example.com/api/", fields.service_area("goh, ber"), fields.markup("7.25")
    )
    changes = await editing.update_settings(db, clock, partner_id, wanted, allow_private=True, actor="operator:a@x")
    assert changes == {
        "base_url": [before.record.base_url, "https://cars.example.com/api"],
        "airports": [["GOH"], ["BER", "GOH"]],
        "markup_percent": ["5.000", "7.25"],
    }
    (row,) = await audit_of(db, partner_id, "partner.update")
    assert row.actor == "operator:a@x" and row.details == changes
    async with db.read() as conn:
        after = await partners_repo.get_with_secrets(conn, partner_id)
    assert after is not None
    assert (after.record.base_url, after.record.airports, after.record.markup_percent) == (
        "https://cars.example.com/api",
        ("BER", "GOH"),
        Decimal("7.25"),
    )
    assert after.secret_enc == before.secret_enc and after.token_enc == before.token_enc


async def test_update_settings_refusals_write_nothing(
    make_partner: PartnerFactory,
    db: Database,
    clock: ShiftedClock,
) -> None:
    _, partner_id, _ = await make_partner(airports=("GOH",))
    private = editing.PartnerSettings("http://127.0.0.1:8100", ("GOH",), Decimal("0"))
    with pytest.raises(InvalidPartnerUrl):
        await editing.update_settings(db, clock, partner_id, private, allow_private=False, actor="tests")
    with pytest.raises(PartnerNotFound):
        await editing.update_settings(db, clock, 987_654_321, private, allow_private=True, actor="tests")
    assert await audit_of(db, partner_id, "partner.update") == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "at least one IATA code"),
        ("LHR,*", "do not combine"),
        ("LHR,XXX", "unknown IATA airport code(s): XXX"),
        ("LHR;CDG", "unknown"),
        ("ＬＨＲ", "unknown"),
    ],
)
def test_service_area_rules(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        fields.service_area(text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("-1", "between 0 and 100"),
        ("100.001", "between 0 and 100"),
        ("1.0001", "three decimals"),
        ("ten", "not a number"),
        ("NaN", "between 0 and 100"),
        ("Infinity", "between 0 and 100"),
    ],
)
def test_markup_rules(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        fields.markup(text)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "1..200"),
        ("   ", "1..200"),
        ("x" * 201, "1..200"),
        ("Cars\x00Ltd", "control"),
        ("Cars\nLtd", "control"),
    ],
)
def test_partner_name_rules(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        fields.partner_name(text)


async def test_conformance_check_runs_against_the_partners_own_server_and_is_audited(
    db: Database,
    clock: ShiftedClock,
    settings: Settings,
) -> None:
    """The reference sandbox partner, configured with the credentials the service issued, passes
    every check; the run is audited with its verdict."""
    box = SecretBox(resolve_secret_key(settings))
    port = free_port()
    registered = await register_partner(
        db,
        clock,
        box,
        name="Checked Cars",
        base_url=f"http://127.0.0.1:{port}",
        airports=("GOH",),
        markup_percent=Decimal(0),
        allow_private=True,
        actor="tests",
    )
    app = create_sandbox_partner_app(
        SandboxPartnerConfig(
            service_url="http://127.0.0.1:9",
            api_key=registered.api_key,
            signing_secret=registered.signing_secret,
            outbound_token=registered.outbound_token,
            approve_after_seconds=600,
        )
    )
    server = await LiveServer(app, port=port).start()
    client = PartnerClient()
    try:
        report = await editing.check_partner(
            db,
            clock,
            box,
            client,
            registered.partner_id,
            actor="operator:b@x",
            deadlines=Deadlines(search=3, create=3, other=3),
        )
        assert report.passed, [(c.name, c.detail) for c in report.checks if c.result != "PASS"]
        assert report.airport == "GOH" and len(report.checks) == 14
        (row,) = await audit_of(db, registered.partner_id, "partner.check")
        assert row.actor == "operator:b@x"
        details = row.details
        assert {k: details[k] for k in ("passed", "airport", "summary", "failed", "base_url")} == {
            "passed": True,
            "airport": "GOH",
            "summary": {"PASS": 14, "FAIL": 0, "SKIP": 0},
            "failed": [],
            "base_url": f"http://127.0.0.1:{port}",
        }
        assert [c["name"] for c in details["checks"]] == [c.name for c in report.checks]
        assert details["reservation_no"] == report.reservation_no and details["reservation_no"].startswith("TB-CHECK")
        point = await endpoint_for(db, box, registered.partner_id)
        assert point is not None and point.signing_secret == registered.signing_secret
    finally:
        await client.aclose()
        await server.stop()
        await app.state.partner.aclose()
        await set_partner_status(db, clock, registered.partner_id, "disabled", actor="tests")
    with pytest.raises(PartnerNotFound):
        await editing.check_partner(db, clock, box, PartnerClient(), 987_654_321, actor="tests")


async def test_a_hosted_partner_is_edited_without_a_base_url_and_never_checked_or_rotated(
    db: Database,
    clock: ShiftedClock,
    settings: Settings,
) -> None:
    """Hosted partners run no server: their (empty) base URL stays, and there is nothing
    to check or sign for them; both refusals write nothing."""
    from datetime import timedelta

    from transfers.hosted.service import register_hosted_partner
    from transfers.partners import rotation

    box = SecretBox(resolve_secret_key(settings))
    hosted = await register_hosted_partner(
        db, clock, box, name="Hosted Cars", airports=("GOH",), markup_percent=Decimal(0), actor="tests"
    )
    try:
        wanted = editing.PartnerSettings("", ("BER", "GOH"), Decimal("3"))
        changes = await editing.update_settings(
            db, clock, hosted.partner_id, wanted, allow_private=False, actor="tests"
        )
        assert changes == {"airports": [["GOH"], ["BER", "GOH"]], "markup_percent": ["0.000", "3"]}
        with pytest.raises(editing.NotCalled):
            await editing.check_partner(db, clock, box, PartnerClient(), hosted.partner_id, actor="tests")
        with pytest.raises(rotation.RotationRefused, match="hosted"):
            await rotation.rotate_signing_secret(
                db, clock, box, hosted.partner_id, overlap=timedelta(hours=1), actor="tests"
            )
        assert await audit_of(db, hosted.partner_id, "partner.check") == []
        assert await audit_of(db, hosted.partner_id, "partner.rotate_secret") == []
        async with db.read() as conn:
            stored = await partners_repo.get_with_secrets(conn, hosted.partner_id)
        assert stored is not None and stored.record.base_url == "" and stored.record.airports == ("BER", "GOH")
    finally:
        await set_partner_status(db, clock, hosted.partner_id, "disabled", actor="tests")


async def test_the_built_in_partners_url_stays_as_the_service_set_it(
    db: Database,
    clock: ShiftedClock,
    settings: Settings,
) -> None:
    """The sandbox partner's URL is where this service mounts it, on loopback, trusted by that identity
    with the SSRF guard on (docs/rules/partners.md#partner-urls): its markup can be edited with the guard
    on, and its URL is not the operator's to change."""
    from transfers.partners.service import ensure_sandbox_partner

    box = SecretBox(resolve_secret_key(settings))
    url = "http://127.0.0.1:8000/sandbox-partner"
    partner_id = await ensure_sandbox_partner(db, clock, box, url)
    try:
        wanted = editing.PartnerSettings("https://elsewhere.example.com", ("*",), Decimal("4"))
        changes = await editing.update_settings(db, clock, partner_id, wanted, allow_private=False, actor="tests")
        assert changes == {"markup_percent": ["0.000", "4"]}
        async with db.read() as conn:
            stored = await partners_repo.get_with_secrets(conn, partner_id)
        assert stored is not None and stored.record.base_url == url and stored.record.markup_percent == Decimal(4)
    finally:
        back = editing.PartnerSettings(url, ("*",), Decimal("0"))
        await editing.update_settings(db, clock, partner_id, back, allow_private=False, actor="tests")
        await set_partner_status(db, clock, partner_id, "disabled", actor="tests")
