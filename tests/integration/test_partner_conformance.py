"""``transfers partners check``: the conformance suite against real partner servers over HTTP.

It passes against the reference sandbox partner, and fails with the right reason against partners
broken on purpose (``tests.fake_partner.FakePartner``, which never verifies signatures, and its
modes: slow, invalid JSON, garbage, 500 on create). The CLI runs in a thread (``asyncio.to_thread``)
because the servers run on the test's event loop.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from starlette.requests import Request
from starlette.responses import Response

from tests.fake_partner import FakePartner, Recorded, default_vehicles
from tests.servers import LiveServer
from transfers.cli.main import cli
from transfers.partners import conformance
from transfers.partners.conformance import Deadlines, Report
from transfers.partners.signing import new_signing_secret
from transfers.partners.wire import WireVehicle
from transfers.reference.airports import find_airport, great_circle_km
from transfers.sandbox_partner import SandboxPartner, SandboxPartnerConfig, create_sandbox_partner_app

SECRET = new_signing_secret()
TOKEN = "ot_conformance-test-token"
DEAD_SERVICE = "http://127.0.0.1:9"  # the sandbox partner's approval calls fail there, harmlessly
ALL_CHECKS = [
    "search",
    "create",
    "create retry, same webhook-id",
    "create, way back (trip leg 2)",  # the way back of a return trip, its own create
    "info",
    "info, unknown booking",
    "update AMENDED",
    "update AMENDED FLIGHT_UPDATE",  # the pickup followed the flight (a notice)
    "update CANCELLED",
    "update CANCELLED again",
    "update CANCELLED, way back",
    "refuses a bad signature",
    "refuses a wrong bearer token",
    "refuses a stale timestamp",
]
LHR = find_airport("LHR")
assert LHR is not None


@dataclass
class Sandbox:
    url: str
    partner: SandboxPartner


async def _serve_sandbox(**overrides: Any) -> tuple[LiveServer, SandboxPartner]:
    values: dict[str, Any] = {
        "service_url": DEAD_SERVICE,
        "api_key": "pk_0123456789ab_conformance-tests",
        "signing_secret": SECRET,
        "outbound_token": TOKEN,
        "approve_after_seconds": 60,
        "reverse_retry_delays": (0.05,),
        "reverse_timeout_seconds": 0.5,
    }
    values.update(overrides)
    app = create_sandbox_partner_app(SandboxPartnerConfig(**values))
    return await LiveServer(app).start(), app.state.partner


@pytest.fixture(scope="module")
async def sandbox() -> AsyncIterator[Sandbox]:
    server, partner = await _serve_sandbox()
    yield Sandbox(server.url, partner)
    await server.stop()
    await partner.aclose()  # a forced stop skips the lifespan


@dataclass
class ScriptedPartner(FakePartner):
    """A FakePartner whose answer for one path is replaced (the others follow ``mode`` as usual)."""

    scripted: dict[str, Callable[[Recorded], Response]] = field(default_factory=dict)

    async def _answer(self, request: Request, record: Recorded) -> Response:
        script = self.scripted.get(record.path)
        if script is not None:
            return script(record)
        return await super()._answer(request, record)


async def serve_fake(partner: FakePartner) -> LiveServer:
    partner.signing_secret, partner.token = SECRET, TOKEN  # so it records whether our calls were signed
    server = await LiveServer(partner.app()).start()
    partner.url = server.url
    return server


async def invoke(url: str, *args: str) -> Result:
    return await asyncio.to_thread(
        CliRunner().invoke,
        cli,
        ["partners", "check", url, "--token", TOKEN, "--secret", SECRET, *args],
        catch_exceptions=False,
    )


async def check_json(url: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = await invoke(url, "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}


def results(report: dict[str, Any]) -> dict[str, str]:
    return {c["name"]: c["result"] for c in report["checks"]}


async def run_fake(partner: FakePartner, *args: str) -> tuple[int, dict[str, Any]]:
    server = await serve_fake(partner)
    try:
        return await check_json(server.url, *args)
    finally:
        await server.stop()


# -- the reference partner passes ----------------------------------------------------------------


async def test_the_sandbox_partner_passes_every_check(sandbox: Sandbox) -> None:
    result = await invoke(sandbox.url)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"partner {sandbox.url}, airport LHR"
    assert lines[1].split() == ["CHECK", "RESULT", "TIME", "DEADLINE", "DETAIL"]
    rows = lines[2:-1]
    assert [row[:30].strip() for row in rows] == ALL_CHECKS
    assert all(" PASS " in row for row in rows)
    assert "3000 ms" in rows[0] and "2000 ms" in rows[1] and "6 vehicles" in rows[0]
    assert lines[-1] == "PASS: 14 passed, 0 failed, 0 skipped of 14 checks"
    # No warning (jsonschema and PyYAML are installed), and the client's log lines about the refused
    # calls are kept off the terminal.
    assert "warning:" not in result.stderr and "partner_call_failed" not in result.output


async def test_json_output_and_what_the_partner_was_left_with(sandbox: Sandbox) -> None:
    code, report = await check_json(
        sandbox.url, "--airport", "cdg", "--timeout-search", "2.5", "--timeout-create", "1.5"
    )
    assert code == 0 and report["passed"] is True and report["airport"] == "CDG"
    assert report["summary"] == {"PASS": 14, "FAIL": 0, "SKIP": 0} and report["warnings"] == []
    checks = by_name(report)
    assert list(checks) == ALL_CHECKS
    assert checks["search"]["deadline_ms"] == 2500 and checks["create"]["deadline_ms"] == 1500
    assert checks["info"]["deadline_ms"] == 3000 and checks["refuses a bad signature"]["deadline_ms"] is None
    assert all(c["reason"] is None and c["duration_ms"] > 0 for c in checks.values())
    assert checks["refuses a bad signature"]["http_status"] == 401
    assert checks["info, unknown booking"]["http_status"] == 404
    ref = report["reservation_no"]
    assert ref.startswith("TB-CHECK")
    assert checks["info"]["path"] == f"/booking/info/{ref}"
    # One booking for two deliveries of the create, cancelled again by the update check.
    assert sandbox.partner.create_attempts(ref) == 2 and sandbox.partner.effective_creates(ref) == 1
    assert sandbox.partner.info(ref)[1]["status"] == "CANCELLED"


async def test_the_way_back_of_a_return_trip_is_created_and_cancelled(sandbox: Sandbox) -> None:
    """The check sends a return trip's way back as the service does (docs/rules/return-trips.md#create):
    its own create with ``trip`` {id TR-..., leg 2}, the route reversed, on a later day, no flight; then cancels it."""
    code, report = await check_json(sandbox.url)
    assert code == 0, report
    checks = by_name(report)
    back = checks["create, way back (trip leg 2)"]
    assert back["result"] == "PASS" and back["deadline_ms"] == 2000 and ", leg 2" in back["note"]
    back_no = back["note"].split(" for ")[1].split(" ")[0]
    assert back_no.startswith("TB-CHECK") and back_no != report["reservation_no"]
    assert sandbox.partner.create_attempts(back_no) == 1 and sandbox.partner.effective_creates(back_no) == 1
    assert sandbox.partner.info(back_no)[1]["status"] == "CANCELLED"
    assert checks["update CANCELLED, way back"]["result"] == "PASS"


async def test_the_way_back_request_is_the_way_out_reversed() -> None:
    partner = FakePartner()
    _, report = await run_fake(partner)
    assert by_name(report)["create, way back (trip leg 2)"]["result"] == "PASS"
    out, _, back = (c.body for c in partner.calls("/booking/create"))
    assert out["trip"]["id"] is None and out["trip"]["leg"] is None  # the first create: a single booking
    assert back["trip"]["id"].startswith("TR-CHECK") and back["trip"]["leg"] == 2
    assert (back["trip"]["from"], back["trip"]["to"]) == (out["trip"]["to"], out["trip"]["from"])
    later = datetime.fromisoformat(back["trip"]["date"]) - datetime.fromisoformat(out["trip"]["date"])
    assert later == timedelta(days=3)
    assert back["flight_info"]["flight_number"] is None and back["reservation_no"] != out["reservation_no"]
    assert (back["vehicle_id"], back["price"], back["passenger_info"]) == (
        out["vehicle_id"],
        out["price"],
        out["passenger_info"],
    )
    assert conformance.contract_schemas().component_errors("CreateRequest", back) == []
    cancels = [c.body["reservation_no"] for c in partner.calls("/booking/update") if c.body["status"] == "CANCELLED"]
    assert cancels == [out["reservation_no"]] * 2 + [back["reservation_no"]]


async def test_a_partner_ignoring_the_timestamp_fails_only_the_replay_check() -> None:
    server, partner = await _serve_sandbox(signature_tolerance_seconds=10**9)
    try:
        code, report = await check_json(server.url)
    finally:
        await server.stop()
        await partner.aclose()
    assert code == 1 and report["passed"] is False
    failed = {c["name"]: c["reason"] for c in report["checks"] if c["result"] != "PASS"}
    assert failed == {
        "refuses a stale timestamp": "accepted a request with a signature timestamp 10 minutes old "
        "(HTTP 200); expected 401"
    }


# -- broken partners fail, for the right reason --------------------------------------------------


async def test_a_partner_that_verifies_nothing_and_dedupes_nothing() -> None:
    partner = FakePartner()
    code, report = await run_fake(partner)
    assert code == 1
    assert results(report) == {
        "search": "PASS",
        "create": "PASS",
        "create retry, same webhook-id": "FAIL",
        "create, way back (trip leg 2)": "PASS",
        "info": "PASS",
        "info, unknown booking": "FAIL",
        "update AMENDED": "PASS",
        "update AMENDED FLIGHT_UPDATE": "PASS",
        "update CANCELLED": "PASS",
        "update CANCELLED again": "PASS",
        "update CANCELLED, way back": "PASS",
        "refuses a bad signature": "FAIL",
        "refuses a wrong bearer token": "FAIL",
        "refuses a stale timestamp": "FAIL",
    }
    checks = by_name(report)
    assert checks["create retry, same webhook-id"]["reason"] == (
        "not deduplicated: the retry answered reservation_no 'P-3', the first delivery 'P-2' (a second booking?)"
    )
    assert checks["info, unknown booking"]["reason"] == "HTTP 200 for a booking it never received; expected 404"
    assert checks["refuses a bad signature"]["reason"] == (
        "accepted a request with a bad signature (HTTP 200); expected 401"
    )
    assert checks["refuses a wrong bearer token"]["reason"].startswith("accepted a request with a wrong bearer token")
    # What it received was signed exactly as the service signs (it records whether each call verified),
    # and the retry was the same message: same webhook-id, same bytes.
    assert [r.signature_ok for r in partner.requests] == [True] * 11 + [False] * 3
    first, retry, _ = partner.calls("/booking/create")
    assert first.headers["webhook-id"] == retry.headers["webhook-id"] and first.body == retry.body
    assert first.body["reservation_no"] == report["reservation_no"] and first.body["vehicle_id"] == "car-1"
    assert partner.requests[0].headers["x-request-id"].startswith("partner-check-")


async def test_a_slow_partner_fails_on_its_deadlines() -> None:
    code, report = await run_fake(
        FakePartner(mode="slow", delay=0.35), "--timeout-search", "0.2", "--timeout-create", "0.25"
    )
    assert code == 1
    checks = by_name(report)
    search, create = checks["search"], checks["create"]
    assert search["result"] == "FAIL" and search["duration_ms"] > 350
    assert search["reason"] == f"answered in {search['duration_ms']:.0f} ms > 200 ms deadline"
    assert create["reason"] == (
        f"answered in {create['duration_ms']:.0f} ms > 250 ms deadline; "
        "the service would retry (its first attempt times out)"
    )
    assert checks["info"]["result"] == "PASS"  # 3 s for info and update


async def test_a_partner_answering_html() -> None:
    code, report = await run_fake(FakePartner(mode="invalid_json"))
    checks = by_name(report)
    assert code == 1 and checks["search"]["reason"] == "answer is not JSON (HTTP 200)"
    assert checks["create"] == {
        **checks["create"],
        "result": "SKIP",
        "reason": "not run: the search gave no vehicle to book",
    }
    assert checks["update CANCELLED"]["reason"] == "not run: no booking was created"


@pytest.mark.parametrize(
    ("garbage", "reason"),
    [
        (
            {"vehicles": [{**default_vehicles()[0], "price": "-5.00"}]},
            'vehicles[0].price: must be positive (got "-5.00")',
        ),
        (
            {"vehicles": [{**default_vehicles()[0], "price": 12.34567}]},
            "vehicles[0].price: must be a plain decimal with at most its currency's decimals (four at most) "
            "(got 12.34567)",
        ),
        (
            {"vehicles": [{**default_vehicles()[0], "price": 12.345}]},
            "vehicles[0].price: EUR amounts have at most two decimals: 12.345 is refused, not rounded; "
            "the service leaves it out of searches",
        ),
        (
            {"vehicles": [{**default_vehicles()[0], "price": "10010.5", "currency": "JPY", "extras": []}]},
            "vehicles[0].price: JPY amounts have no decimals: 10010.5 is refused, not rounded; "
            "the service leaves it out of searches",
        ),
        ({"distance_km": "far", "vehicles": []}, 'distance_km: Input should be a valid integer (got "far")'),
        ([1, 2], "answer: must be a JSON object"),
    ],
)
async def test_a_partner_answering_garbage(garbage: Any, reason: str) -> None:
    code, report = await run_fake(FakePartner(mode="garbage", garbage=garbage))
    checks = by_name(report)
    assert code == 1 and checks["search"]["result"] == "FAIL"
    assert checks["search"]["reason"] == reason
    assert checks["create"]["result"] == "SKIP"


async def test_an_unknown_vehicle_type_fails_search_but_the_booking_checks_still_run() -> None:
    partner = FakePartner(vehicles=[{**default_vehicles()[0], "type": "SPACESHIP"}])
    code, report = await run_fake(partner)
    checks = by_name(report)
    assert code == 1
    assert checks["search"]["reason"] == (
        "vehicles[0].type: 'SPACESHIP' is not a reference vehicle type "
        "(BUS, ELECTRIC, ESTATE, LUXURY, MINIBUS, MINIVAN, SEDAN)"
    )
    assert checks["create"]["result"] == "PASS" and checks["info"]["result"] == "PASS"


async def test_a_500_on_create() -> None:
    partner = ScriptedPartner(
        scripted={
            "/booking/create": lambda _: Response(
                b'{"status":"Error","message":"database down"}', status_code=500, media_type="application/json"
            )
        }
    )
    code, report = await run_fake(partner)
    checks = by_name(report)
    assert code == 1 and checks["search"]["result"] == "PASS"
    assert checks["create"]["reason"] == "HTTP 500: 'database down'; the service would retry"
    assert checks["create"]["http_status"] == 500
    assert {checks[name]["result"] for name in ("create retry, same webhook-id", "info", "update CANCELLED")} == {
        "SKIP"
    }
    assert len(partner.calls("/booking/create")) == 1


async def test_a_create_answer_the_service_accepts_but_partner_yaml_does_not() -> None:
    partner = ScriptedPartner(
        scripted={
            "/booking/create": lambda _: Response(
                b'{"reservation_no":"R-1","status":"PENDING","booking_details":"free text"}',
                media_type="application/json",
            )
        }
    )
    code, report = await run_fake(partner)
    assert code == 1
    assert by_name(report)["create"]["reason"] == "booking_details: 'free text' is not of type 'object' (partner.yaml)"


async def test_a_declined_create_skips_the_cancellation() -> None:
    code, report = await run_fake(FakePartner(create_status="DECLINED"))
    checks = by_name(report)
    assert code == 1 and checks["create"]["result"] == "PASS" and checks["create"]["note"].startswith("DECLINED")
    assert checks["update CANCELLED"]["reason"] == "not run: create answered DECLINED (nothing to cancel)"


async def test_an_error_body_on_update() -> None:
    partner = ScriptedPartner(
        scripted={
            "/booking/update": lambda _: Response(
                b'{"status":"Error","message":"cannot cancel"}', media_type="application/json"
            )
        }
    )
    code, report = await run_fake(partner)
    assert code == 1
    assert by_name(report)["update CANCELLED"]["reason"] == (
        "answered status 'Error': 'cannot cancel'; expected \"Success\""
    )


async def test_nothing_listening() -> None:
    code, report = await check_json(DEAD_SERVICE)
    checks = by_name(report)
    assert code == 1 and checks["search"]["reason"] == "could not connect (ConnectError)"
    assert checks["refuses a bad signature"]["reason"] == (
        "could not connect (ConnectError) for a request with a bad signature; expected 401"
    )


# -- the module's own API and the CLI's argument checks ------------------------------------------


async def test_the_async_api_directly(sandbox: Sandbox) -> None:
    report = await conformance.run_conformance(
        sandbox.url, token=TOKEN, secret=SECRET, airport=LHR, deadlines=Deadlines(search=1, create=1, other=1)
    )
    assert isinstance(report, Report) and report.passed, report.as_dict()
    assert [c.deadline_ms for c in report.checks[:4]] == [1000, 1000, 1000, 1000]
    wrong = await conformance.run_conformance(sandbox.url, token="ot_not-the-token", secret=SECRET, airport=LHR)
    assert not wrong.passed
    assert wrong.checks[0].reason == "HTTP 401: 'Missing or wrong bearer token'"


def test_the_requests_are_contract_valid_and_realistic() -> None:
    run = conformance.ConformanceRun(
        None,
        None,
        LHR,
        Deadlines(),
        conformance.contract_schemas(),  # type: ignore[arg-type]
        now=datetime(2026, 3, 27, 23, 0, tzinfo=UTC),
    )
    search = run.search_payload()
    schemas = conformance.contract_schemas()
    assert schemas.component_errors("SearchRequest", search) == []
    assert search["from"] == {"type": "AIRPORT", "iata_code": "LHR", "name": LHR.name, "lat": LHR.lat, "lng": LHR.lng}
    point = search["to"]
    assert abs(great_circle_km(LHR.lat, LHR.lng, point["lat"], point["lng"]) - 20) < 0.01
    # three days ahead, local to the airport: 2026-03-30 is after the UK's switch to summer time
    assert search["date"] == "2026-03-30T14:30:00+01:00"
    assert search["passengers"] == {"adult": 2, "children": 0, "infant": 0}
    vehicle = WireVehicle.model_validate({**default_vehicles()[0], "id": 7, "price": 40})
    create = run.create_payload("TB-CHECKABCDEFGH", vehicle, search)
    assert create["vehicle_id"] == "7"
    assert schemas.component_errors("CreateRequest", create) == []
    assert create["price"] == {"total": "40.00", "currency": "EUR"} and create["trip"]["date"] == search["date"]
    far_north = conformance.destination_point(89.99, 10.0, 20, 45)
    assert -90 <= far_north[0] <= 90 and -180 <= far_north[1] <= 180


def test_reference_vehicle_types_match_partner_yaml() -> None:
    doc = yaml.safe_load(resources.files("transfers").joinpath("openapi/partner.yaml").read_text())
    assert set(doc["components"]["schemas"]["VehicleType"]["enum"]) == conformance.REFERENCE_VEHICLE_TYPES


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ftp://partner.example"], "Invalid value for URL: the partner URL must be http or https"),
        (["http://127.0.0.1:9", "--airport", "ZZZ"], "Invalid value for --airport: unknown IATA airport code 'ZZZ'"),
        (["http://127.0.0.1:9", "--timeout-search", "0"], "Invalid value for '--timeout-search'"),
    ],
)
def test_bad_arguments_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["partners", "check", *args, "--token", TOKEN, "--secret", SECRET])
    assert result.exit_code == 2 and message in result.stderr


@pytest.mark.parametrize("secret", ["not-a-secret", "whsec_@@@", "whsec_"])
def test_bad_secrets_exit_2(secret: str) -> None:
    result = CliRunner().invoke(cli, ["partners", "check", "http://127.0.0.1:9", "--token", TOKEN, "--secret", secret])
    assert result.exit_code == 2 and "Invalid value for --secret" in result.stderr


async def test_without_jsonschema_the_wire_checks_still_run(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    schemas = conformance.ContractSchemas()
    assert schemas.unavailable is not None and "jsonschema is not installed" in schemas.unavailable
    assert schemas.errors("POST", "/booking/search", {"vehicles": "nope"}) == []
    monkeypatch.setattr(conformance, "contract_schemas", lambda: schemas)
    result = await invoke(sandbox.url)
    assert result.exit_code == 0
    assert "warning: answers not checked against partner.yaml (jsonschema is not installed" in result.stderr
    code, report = await run_fake(FakePartner(mode="garbage", garbage={"vehicles": [{"id": "x"}]}))
    assert code == 1
    assert by_name(report)["search"]["reason"].startswith("vehicles[0].make: Field required; ")
    assert report["warnings"] == [schemas.unavailable]


# -- the AMENDED update ---------------------------------------------------------------------


async def test_an_amendment_must_be_answered_and_a_refusal_must_say_why() -> None:
    refusing = FakePartner(amend_status="Error", amend_message="No driver free at that hour")
    _, report = await run_fake(refusing)
    check = by_name(report)["update AMENDED"]
    assert check["result"] == "PASS" and check["note"] == "Error: 'No driver free at that hour'"
    (amended,) = [
        c for c in refusing.calls("/booking/update") if c.body["status"] == "AMENDED" and "reason" not in c.body
    ]
    (notice,) = [c for c in refusing.calls("/booking/update") if c.body.get("reason") == "FLIGHT_UPDATE"]
    assert notice.signature_ok and set(notice.body["changes"]) == {"pickup_datetime"}
    # a refused notice is noted, not a failure: the pickup moves anyway (docs/rules/flights.md#pickup-moves)
    flight_check = by_name(report)["update AMENDED FLIGHT_UPDATE"]
    assert flight_check["result"] == "PASS" and "recorded" in flight_check["note"]
    assert amended.signature_ok and amended.body["changes"] == {"travel_details": amended.body["flight_info"]}
    assert amended.body["trip"] == refusing.calls("/booking/create")[0].body["trip"]
    mute = FakePartner(amend_status="Error", amend_message="")
    _, report = await run_fake(mute)
    assert by_name(report)["update AMENDED"]["result"] == "FAIL"
    assert "without a message" in by_name(report)["update AMENDED"]["reason"]
    garbage = FakePartner(amend_status="Maybe")
    _, report = await run_fake(garbage)
    assert by_name(report)["update AMENDED"]["result"] == "FAIL"
