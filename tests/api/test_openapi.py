"""The served OpenAPI document: a valid OpenAPI description whose schemas the real answers obey."""

from __future__ import annotations

from typing import Any

import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate as validate_openapi

from tests.conftest import ClientFactory, bearer
from transfers.clients import service as client_service
from transfers.clients.models import ClientStatus
from transfers.clock import ShiftedClock
from transfers.db.engine import Database

BOOKING_API = "/api/v1/booking-api"
REASONS = f"{BOOKING_API}/cancellation-reasons"
REFERENCE_PATHS = ["/api/public/car/services", "/api/public/car/segment", "/api/public/car/type"]
# docs/rules/booking.md operations whose failures are docs/rules/errors.md's integer-coded 422 bodies.
SPEC_VALIDATED = {
    ("post", f"{BOOKING_API}/search"),
    ("post", f"{BOOKING_API}/booking"),
    ("get", f"{BOOKING_API}/booking"),
    ("delete", f"{BOOKING_API}/booking"),
}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


@pytest.fixture(scope="module")
async def doc(http: httpx.AsyncClient) -> dict[str, Any]:
    response = await http.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    document: dict[str, Any] = response.json()
    return document


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node: Any = doc
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def response_schema(doc: dict[str, Any], path: str, method: str, status: int | str) -> dict[str, Any]:
    response = doc["paths"][path][method]["responses"][str(status)]
    schema: dict[str, Any] = response["content"]["application/json"]["schema"]
    return schema


def validate_instance(doc: dict[str, Any], schema: dict[str, Any], instance: Any) -> None:
    """Validate a real answer against a schema of the document (its $refs resolved in the document)."""
    root = {**schema, "components": doc.get("components", {})}
    jsonschema.Draft202012Validator(root).validate(instance)


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in HTTP_METHODS
    ]


def allows_null(doc: dict[str, Any], schema: dict[str, Any]) -> bool:
    schema = resolve(doc, schema)
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds):
        return True
    return any(allows_null(doc, s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))


def types_of(doc: dict[str, Any], schema: dict[str, Any]) -> set[str]:
    schema = resolve(doc, schema)
    kinds = schema.get("type")
    found = set(kinds) if isinstance(kinds, list) else ({kinds} if kinds else set())
    for sub in schema.get("anyOf", []) + schema.get("oneOf", []):
        found |= types_of(doc, sub)
    return found


# ---- the document itself -------------------------------------------------------------------------


async def test_document_is_valid_openapi(doc: dict[str, Any]) -> None:
    validate_openapi(doc)
    assert doc["openapi"].startswith("3.")
    assert doc["info"]["title"] and doc["info"]["version"]
    op_ids = [op["operationId"] for _, _, op in operations(doc)]
    assert len(op_ids) == len(set(op_ids)), "operationIds are unique"


async def test_reference_paths_are_public_and_return_id_name_lists(doc: dict[str, Any]) -> None:
    assert not doc.get("security"), "no global security requirement (reference data and health are public)"
    for path in REFERENCE_PATHS:
        op = doc["paths"][path]["get"]
        assert not op.get("security"), path
        top = resolve(doc, response_schema(doc, path, "get", 200))
        assert top["type"] == "object" and top["required"] == ["data"]
        data = resolve(doc, top["properties"]["data"])
        assert data["type"] == "array"
        item = resolve(doc, data["items"])
        assert item["type"] == "object" and set(item["required"]) == {"id", "name"}
        assert types_of(doc, item["properties"]["id"]) == {"integer"}
        assert types_of(doc, item["properties"]["name"]) == {"string"}


async def test_cancellation_reasons_schema_matches_spec_2_7(doc: dict[str, Any]) -> None:
    top = resolve(doc, response_schema(doc, REASONS, "get", 200))
    assert top["type"] == "array"
    item = resolve(doc, top["items"])
    assert item["type"] == "object"
    assert set(item["required"]) == {"id", "name", "description", "position"}
    props = item["properties"]
    assert types_of(doc, props["id"]) == {"integer"}
    assert types_of(doc, props["name"]) == {"string"}
    assert types_of(doc, props["description"]) == {"string", "null"} and allows_null(doc, props["description"])
    assert types_of(doc, props["position"]) == {"integer"}
    assert not allows_null(doc, props["name"]) and not allows_null(doc, props["id"])


async def test_bearer_security_is_declared_on_every_booking_api_operation(doc: dict[str, Any]) -> None:
    schemes = doc["components"]["securitySchemes"]
    names = [
        name
        for name, scheme in schemes.items()
        if scheme.get("type") == "http" and scheme.get("scheme", "").lower() == "bearer"
    ]
    assert names, schemes
    booking_ops = [(path, method, op) for path, method, op in operations(doc) if path.startswith(BOOKING_API)]
    assert booking_ops
    for path, method, op in booking_ops:
        requirements = op.get("security")
        assert requirements, (method, path)
        assert all(set(r) <= set(names) and r for r in requirements), (method, path, requirements)
    for path in ("/healthz", "/readyz"):
        assert not doc["paths"][path]["get"].get("security")


def envelopes(doc: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternative bodies a response schema allows (the branches of an anyOf/oneOf)."""
    schema = resolve(doc, schema)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        return [body for branch in branches for body in envelopes(doc, branch)]
    return [schema]


async def test_error_responses_are_documented_with_the_error_envelope(doc: dict[str, Any]) -> None:
    booking_ops = [(path, method, op) for path, method, op in operations(doc) if path.startswith(BOOKING_API)]
    for path, method, op in booking_ops:
        responses = op["responses"]
        assert {"401", "403"} <= set(responses), (method, path, sorted(responses))
        for status, response in responses.items():
            if not status.isdigit() or int(status) < 400:
                continue
            code_types = []
            for body in envelopes(doc, response["content"]["application/json"]["schema"]):
                where = (method, path, status, body.get("title"))
                assert body["type"] == "object", where
                assert set(body["required"]) >= {"status", "code", "message"}, where
                props = body["properties"]
                status_schema = resolve(doc, props["status"])
                assert status_schema.get("const") == "Error" or status_schema.get("enum") == ["Error"], where
                assert types_of(doc, props["message"]) == {"string"}, where
                code_types.append(types_of(doc, props["code"]))
            assert all(kinds in ({"integer"}, {"string"}) for kinds in code_types), (method, path, status)
            if status == "422" and (method, path) in SPEC_VALIDATED:
                # docs/rules/errors.md's integer code table (other 422s, e.g. IDEMPOTENCY_KEY_REUSED, may join it).
                assert {"integer"} in code_types, (method, path, status)
            elif status != "422":
                assert all(kinds == {"string"} for kinds in code_types), (method, path, status)
    documented = {(m, p) for p, m, op in booking_ops if "422" in op["responses"]}
    assert documented >= SPEC_VALIDATED & {(m, p) for p, m, _ in booking_ops}


# ---- real answers obey the document --------------------------------------------------------------


async def test_real_reference_answers_match_the_document(http: httpx.AsyncClient, doc: dict[str, Any]) -> None:
    for path in REFERENCE_PATHS:
        response = await http.get(path)
        assert response.status_code == 200
        validate_instance(doc, response_schema(doc, path, "get", 200), response.json())


async def test_real_cancellation_reasons_match_the_document(
    http: httpx.AsyncClient, doc: dict[str, Any], make_client: ClientFactory
) -> None:
    _, key = await make_client()
    response = await http.get(REASONS, headers=bearer(key))
    assert response.status_code == 200
    body = response.json()
    validate_instance(doc, response_schema(doc, REASONS, "get", 200), body)
    assert any(r["description"] is None for r in body)  # the nullable branch is exercised too


async def test_real_error_answers_match_the_document(
    http: httpx.AsyncClient, doc: dict[str, Any], make_client: ClientFactory, db: Database, clock: ShiftedClock
) -> None:
    unauthenticated = await http.get(REASONS)
    assert unauthenticated.status_code == 401
    validate_instance(doc, response_schema(doc, REASONS, "get", 401), unauthenticated.json())

    client_id, key = await make_client()
    await client_service.set_status(db, clock, client_id, ClientStatus.SUSPENDED, actor="tests")
    suspended = await http.get(REASONS, headers=bearer(key))
    assert suspended.status_code == 403
    validate_instance(doc, response_schema(doc, REASONS, "get", 403), suspended.json())

    too_large = await http.post(f"{BOOKING_API}/search", content=b"{" + b" " * 70_000 + b"}")
    assert too_large.status_code == 413
    if "413" in doc["paths"].get(f"{BOOKING_API}/search", {}).get("post", {}).get("responses", {}):
        validate_instance(doc, response_schema(doc, f"{BOOKING_API}/search", "post", 413), too_large.json())

    # 404 and 405 are not per-operation answers; they use the same documented string-code envelope.
    envelope = response_schema(doc, REASONS, "get", 401)
    not_found = await http.get("/api/v1/no-such-thing")
    wrong_method = await http.patch(REASONS)
    assert (not_found.status_code, wrong_method.status_code) == (404, 405)
    validate_instance(doc, envelope, not_found.json())
    validate_instance(doc, envelope, wrong_method.json())


async def test_the_schema_check_is_not_vacuous(doc: dict[str, Any]) -> None:
    """Control case: answers that break the contract are rejected by the same validation."""
    reference = response_schema(doc, "/api/public/car/type", "get", 200)
    reasons = response_schema(doc, REASONS, "get", 200)
    for schema, wrong in [
        (reference, [{"id": 1, "name": "SEDAN"}]),  # a bare array instead of {"data": [...]}
        (reference, {"data": [{"id": "1", "name": "SEDAN"}]}),  # id as a string
        (reference, {"data": [{"id": 1}]}),  # name missing
        (reasons, {"data": []}),  # an object instead of a bare array
        (reasons, [{"id": 1, "name": "Other", "position": 5}]),  # description missing (it is required)
        (reasons, [{"id": 1, "name": "Other", "description": 3, "position": 5}]),
        (response_schema(doc, REASONS, "get", 401), {"status": "Error", "code": 401, "message": "x"}),
    ]:
        with pytest.raises(jsonschema.ValidationError):
            validate_instance(doc, schema, wrong)
