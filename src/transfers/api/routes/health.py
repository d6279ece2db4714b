"""Liveness and readiness (docs/rules/reliability.md#health): no auth, no body beyond a status word."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from transfers.api.deps import services
from transfers.api.responses import JSONBody, service_error_body
from transfers.db.errors import is_database_unavailable
from transfers.errors import ErrorCode

router = APIRouter(tags=["Operations"])


@router.get("/healthz", summary="The process is alive", operation_id="healthz")
async def healthz() -> Response:
    return JSONBody({"status": "ok"})


@router.get("/readyz", summary="The database is reachable", operation_id="readyz")
async def readyz(request: Request) -> Response:
    svc = services(request)
    if svc.shutting_down:
        return JSONBody(service_error_body(ErrorCode.UNAVAILABLE, "Shutting down."), status_code=503)
    try:
        await svc.db.ping()
    except Exception as exc:
        if not is_database_unavailable(exc):
            raise
        return JSONBody(
            service_error_body(ErrorCode.UNAVAILABLE, "The database cannot be reached."),
            status_code=503,
            headers={"Retry-After": "5"},
        )
    return JSONBody({"status": "ready"})
