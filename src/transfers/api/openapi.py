"""The served OpenAPI document: FastAPI's generation plus what hand-parsed routes cannot declare.

Routes read their JSON bodies and some query parameters by hand (to answer the spec's codes in
table order), so their request schemas are attached here from ``transfers.api.schemas``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from transfers.api import schemas

# operation_id -> request body model, for routes that parse their own body
REQUEST_BODIES: dict[str, type[BaseModel]] = {}
# operation_id -> {query parameter name: JSON schema}, for parameters typed looser in code
QUERY_TYPES: dict[str, dict[str, dict[str, Any]]] = {}
BEARER: dict[str, list[str]] = {"BearerAuth": []}
UNAUTHENTICATED_OPS = {"healthz", "readyz", "reference_services", "reference_segment", "reference_type"}


def install_openapi(app: FastAPI) -> None:
    def build() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        doc = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
            webhooks=app.webhooks.routes,  # the events POSTed to client endpoints
        )
        components = doc.setdefault("components", {})
        models = list(REQUEST_BODIES.values())
        if models:
            _, defs = models_json_schema(
                [(m, "validation") for m in models], ref_template="#/components/schemas/{model}"
            )
            components.setdefault("schemas", {}).update(defs.get("$defs", {}))
        components.setdefault("securitySchemes", {})["BearerAuth"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "API key issued by `transfers clients create`",
        }
        for path_item in doc.get("paths", {}).values():
            for operation in path_item.values():
                op_id = operation.get("operationId")
                if op_id in REQUEST_BODIES:
                    operation["requestBody"] = {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"$ref": f"#/components/schemas/{REQUEST_BODIES[op_id].__name__}"}
                            }
                        },
                    }
                for param in operation.get("parameters", []):
                    override = QUERY_TYPES.get(op_id, {}).get(param["name"])
                    if override is not None:
                        param["schema"] = override
                if op_id not in UNAUTHENTICATED_OPS and not op_id.startswith("reverse_"):
                    operation["security"] = [BEARER]
                _drop_framework_422(operation)
        app.openapi_schema = doc
        return doc

    app.openapi = build  # type: ignore[method-assign]


_FRAMEWORK_422 = "#/components/schemas/HTTPValidationError"


def _drop_framework_422(operation: dict[str, Any]) -> None:
    """FastAPI lists its own 422 (``HTTPValidationError``) for every route with a declared parameter; this
    service answers a framework-level parameter error 400 ``MALFORMED_REQUEST`` (``api/errors.py``), and
    each route lists the 422 it can answer itself, so FastAPI's is not one of its answers."""
    schema = operation.get("responses", {}).get("422", {}).get("content", {}).get("application/json", {})
    if schema.get("schema", {}).get("$ref") == _FRAMEWORK_422:
        del operation["responses"]["422"]


def register_body(operation_id: str, model: type[BaseModel]) -> None:
    REQUEST_BODIES[operation_id] = model


def register_query_types(operation_id: str, types: dict[str, dict[str, Any]]) -> None:
    QUERY_TYPES[operation_id] = types


__all__ = ["install_openapi", "register_body", "register_query_types", "schemas"]
