"""The published partner OpenAPI document: valid OpenAPI 3.1, and true to the code.

"True to the code" is checked both ways: what the service sends and what the sandbox partner
answers validate against the document's schemas, and the document accepts and refuses the same
sample answers as the service's own validator (``transfers.partners.wire``).
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from decimal import Decimal
from importlib import resources
from typing import Any

import httpx
import jsonschema
import orjson
import pytest
import yaml
from pydantic import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from transfers.partners.signing import new_signing_secret, signature_headers
from transfers.partners.wire import WireSearchAnswer, search_request
from transfers.sandbox_partner import create_sandbox_partner_app
from transfers.sandbox_partner.config import SandboxPartnerConfig
from transfers.sandbox_partner.partner import approval_body
from transfers.sandbox_partner.state import Booking

DOC_URI = "urn:transfers:partner-openapi"
SECRET, TOKEN = new_signing_secret(), "ot_openapi-test"
LHR = {"type": "AIRPORT", "iata_code": "LHR", "name": "London Heathrow Airport", "lat": 51.4706, "lng": -0.46194}
CITY = {"type": "POINT", "name": "Trafalgar Square", "lat": 51.508, "lng": -0.128}
DATE = "2026-12-01T14:30:00+00:00"


def load_document() -> dict[str, Any]:
    text = resources.files("transfers").joinpath("openapi/partner.yaml").read_text()
    return dict(yaml.safe_load(text))


DOC = load_document()
REGISTRY: Registry[Any] = Registry().with_resource(DOC_URI, Resource.from_contents(DOC, DRAFT202012))


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({"$ref": f"{DOC_URI}#/components/schemas/{name}"}, registry=REGISTRY)


def assert_valid(name: str, instance: Any) -> None:
    errors = list(validator(name).iter_errors(instance))
    assert not errors, f"{name}: {[e.message for e in errors][:3]}"


def test_document_passes_the_openapi_validator() -> None:
    spec_validator = pytest.importorskip("openapi_spec_validator")
    spec_validator.validate(DOC)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_document_structure() -> None:
    assert DOC["openapi"].startswith("3.1.")
    operations = {(path, method) for path, item in DOC["paths"].items() for method in item if method != "servers"}
    assert operations == {
        ("/booking/search", "post"),
        ("/booking/create", "post"),
        ("/booking/info/{reservation_no}", "get"),
        ("/booking/update", "put"),
        ("/api/v1/reverse/booking/update", "put"),
        ("/api/v1/reverse/booking/info/{reservation_no}", "get"),
        ("/api/v1/reverse/booking/events", "post"),
        ("/api/v1/reverse/booking/positions", "post"),
        ("/api/v1/reverse/statements", "get"),  # docs/rules/statements.md
        ("/api/v1/reverse/statements/{period}", "get"),
        ("/api/v1/reverse/scorecard", "get"),  # docs/rules/quality.md#reverse-api
    }
    for path, item in DOC["paths"].items():
        for method, operation in item.items():
            if method == "servers":
                continue
            assert "200" in operation["responses"] and operation["security"], (path, method)
            assert path.startswith("/api/v1/reverse/") == ("PartnerApiKey" in operation["security"][0])
    for ref in _refs(DOC):
        target: Any = DOC
        for part in ref.removeprefix("#/").split("/"):
            target = target[part]
    for schema in DOC["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_vehicle_types_are_the_reference_data() -> None:
    seed = importlib.import_module("transfers.migrations.versions.0002_seed_reference_data")
    assert set(DOC["components"]["schemas"]["VehicleType"]["enum"]) == {name for _, name, _ in seed.VEHICLE_TYPES}


@pytest.fixture
async def sandbox() -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    app = create_sandbox_partner_app(
        SandboxPartnerConfig(
            service_url="http://127.0.0.1:9",
            api_key="pk_test",
            signing_secret=SECRET,
            outbound_token=TOKEN,
            approve_after_seconds=3600,
        )
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sandbox") as http:
        yield http, app.state.partner
    await app.state.partner.aclose()


async def call(http: httpx.AsyncClient, method: str, path: str, payload: dict[str, Any] | None) -> httpx.Response:
    body = b"" if payload is None else orjson.dumps(payload)
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Content-Type": "application/json",
        **signature_headers(SECRET, body),
    }
    return await http.request(method, path, content=body or None, headers=headers)


def create_request(ref: str, surname: str = "Lovelace") -> dict[str, Any]:
    return {
        "reservation_no": ref,
        "vehicle_id": "sedan",
        "passenger_info": {"name": "Ada", "surname": surname, "email": "ada@example.com", "phone": "+447700900123"},
        "flight_info": {"flight_number": "BA117", "extra_requests": None},
        "trip": {
            "from": LHR,
            "to": CITY,
            "date": DATE,
            "passengers": {"adult": 1, "children": 0, "infant": 0},
            "suitcase": 1,
            "small_bags": 0,
        },
        "extras": [{"id": "child-seat", "quantity": 2}, {"id": "meet-greet", "quantity": 1}],
        "price": {"total": "87.05", "currency": "EUR"},
    }


async def test_service_requests_and_sandbox_answers_match_the_document(
    sandbox: tuple[httpx.AsyncClient, Any],
) -> None:
    http, partner = sandbox
    search = search_request(pickup=LHR, dropoff=CITY, date=DATE, adult=2, children=0, infant=0)
    assert_valid("SearchRequest", search)
    found = await call(http, "POST", "/booking/search", search)
    assert found.status_code == 200
    assert_valid("SearchAnswer", found.json())

    create = create_request("TB-OPENAPI1")
    assert_valid("CreateRequest", create)
    created = await call(http, "POST", "/booking/create", create)
    assert created.status_code == 200
    assert_valid("CreateAnswer", created.json())
    declined = await call(http, "POST", "/booking/create", create_request("TB-OPENAPI2", surname="DECLINE"))
    assert_valid("CreateAnswer", declined.json())

    pending = await call(http, "GET", "/booking/info/TB-OPENAPI1", None)
    assert_valid("InfoAnswer", pending.json())
    booking: Booking = partner.ledger.bookings["TB-OPENAPI1"]
    assert_valid("InfoAnswer", booking.info(booking.approve_at))
    assert_valid("ReverseUpdateRequest", approval_body(booking))

    update = {"reservation_no": "TB-OPENAPI1", "status": "CANCELLED", "cancel_reason": "Change of plans", "note": None}
    assert_valid("UpdateRequest", update)
    cancelled = await call(http, "PUT", "/booking/update", update)
    assert_valid("Result", cancelled.json())

    missing = await call(http, "GET", "/booking/info/TB-NOSUCH", None)
    assert missing.status_code == 404
    assert_valid("ErrorAnswer", missing.json())
    unauthenticated = await http.post("/booking/search", json=search)
    assert unauthenticated.status_code == 401
    assert_valid("ErrorAnswer", unauthenticated.json())


def _answer(**vehicle_changes: Any) -> dict[str, Any]:
    vehicle = {
        "id": "sedan",
        "make": "Toyota",
        "model": "Corolla",
        "type": "SEDAN",
        "price": "45.10",
        "currency": "EUR",
        "capacity": {"passengers": 3, "suitcases": 2, "small_bags": 2},
        "extras": [{"id": 1, "name": "Child seat", "price": 8, "pricing_type": "PER_ITEM"}],
    }
    vehicle.update(vehicle_changes)
    return {"distance_km": 24, "vehicles": [vehicle]}


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"price": 45.1}, True),
        ({"price": "45"}, True),
        ({"price": "45.1234"}, True),  # the wire takes a currency's most (four); EUR's two: search.offers
        ({"price": "45.12345"}, False),
        ({"price": "20.465", "currency": "KWD"}, True),
        ({"price": "10010", "currency": "JPY"}, True),
        ({"price": 20.465, "currency": "KWD"}, True),
        ({"price": "0.00"}, False),
        ({"price": -3}, False),
        ({"price": "1e3"}, False),
        ({"price": True}, False),
        ({"currency": "eur"}, False),
        ({"capacity": {"passengers": 3, "suitcases": "2", "small_bags": 2}}, False),
        ({"capacity": {"passengers": 0, "suitcases": 2, "small_bags": 2}}, False),
        ({"make": ""}, False),
        ({"extras": [{"id": "x", "name": "Seat", "price": "8.00", "pricing_type": "PER_DAY"}]}, False),
    ],
)
def test_document_and_wire_validator_agree(changes: dict[str, Any], valid: bool) -> None:
    answer = _answer(**changes)
    assert validator("SearchAnswer").is_valid(answer) is valid
    try:
        parsed = WireSearchAnswer.model_validate(answer)
    except ValidationError:
        assert not valid
    else:
        assert valid and parsed.vehicles[0].price > Decimal(0)
    assert not validator("SearchAnswer").is_valid(_answer(type="SPACESHIP"))  # refused by the search fan-out


# --- cancellation policies in search answers, the AMENDED update ---------------------------

LUXURY = [
    {"hours_before_pickup": 48, "fee_percent": 0},
    {"hours_before_pickup": 24, "fee_percent": "50"},
    {"hours_before_pickup": 0, "fee_percent": 100},
]


@pytest.mark.parametrize(
    ("policy", "valid"),
    [
        (LUXURY, True),
        (None, True),
        ([{"hours_before_pickup": 0, "fee_percent": 12.5}], True),
        ([{"hours_before_pickup": 1.5, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 0}], False),
        ([{"hours_before_pickup": -1, "fee_percent": 0}], False),
        ([{"hours_before_pickup": 8761, "fee_percent": 0}, {"hours_before_pickup": 0, "fee_percent": 0}], False),
        ([{"hours_before_pickup": 0, "fee_percent": 101}], False),
        ([{"hours_before_pickup": 0, "fee_percent": "12.345"}], False),
        ([{"hours_before_pickup": 0, "fee_percent": True}], False),
        ([{"hours_before_pickup": True, "fee_percent": 0}], False),
        ([{"hours_before_pickup": 0, "fee_percent": 0, "cap": 5}], False),
        ([{"hours_before_pickup": h, "fee_percent": 0} for h in range(11)], False),
        ([], False),
        ("24:0,0:100", False),
    ],
)
def test_document_and_wire_validator_agree_on_policies(policy: Any, valid: bool) -> None:
    answer = _answer(cancellation_policy=policy)
    assert validator("SearchAnswer").is_valid(answer) is valid
    try:
        WireSearchAnswer.model_validate(answer)
    except ValidationError:
        assert not valid
    else:
        assert valid


def test_the_amended_update_the_service_sends_matches_the_document() -> None:
    from datetime import UTC, datetime

    from tests.helpers import booking_row
    from transfers.bookings.amend import amended_payload
    from transfers.bookings.amend_rules import Changes
    from transfers.bookings.models import Booking

    booking = Booking.from_row(
        booking_row(
            **{
                "reservation_no": "TB-OPENAPI3",
                "partner_vehicle_id": "sedan",
                "passenger_name": "Ada",
                "passenger_surname": "Byron",
                "passenger_email": "ada@example.com",
                "passenger_phone": "+447911123456",
                "flight_number": "BA999",
                "extra_requests": None,
                "pickup_location": LHR,
                "dropoff_location": CITY,
                "airport_iata": "LHR",
                "pickup_at": datetime(2026, 12, 1, 16, 5, tzinfo=UTC),
                "adult": 2,
                "children": 0,
                "infant": 0,
                "suitcase": 1,
                "small_bags": 0,
                "extras": [{"id": 1, "partner_extra_id": "child-seat", "name": "Child seat", "quantity": 2}],
            }
        )
    )
    changes = Changes(
        {
            "pickup_datetime": "2026-12-01T16:05:00+00:00",
            "passenger": {"surname": "Byron"},
            "travel_details": {"flight_number": "BA999", "extra_requests": None},
        },
        {},
    )
    payload = amended_payload(booking, changes)
    assert_valid("AmendedRequest", payload)
    assert not validator("UpdateRequest").is_valid(payload)


def test_the_flight_notice_the_service_sends_matches_the_document() -> None:
    """docs/rules/flights.md#pickup-moves: the notice is an AMENDED update with ``reason`` FLIGHT_UPDATE."""
    from datetime import UTC, datetime

    from tests.helpers import booking_row
    from transfers.bookings.models import Booking
    from transfers.flights.watch import notice_payload

    booking = Booking.from_row(
        booking_row(
            pickup_location=LHR,
            dropoff_location=CITY,
            pickup_at=datetime(2026, 12, 1, 16, 50, tzinfo=UTC),
            flight_number="ZZ1045",
        )
    )
    payload = notice_payload(booking)
    assert (payload["status"], payload["reason"]) == ("AMENDED", "FLIGHT_UPDATE")
    assert payload["changes"] == {"pickup_datetime": "2026-12-01T16:50:00+00:00"}
    assert_valid("AmendedRequest", payload)
