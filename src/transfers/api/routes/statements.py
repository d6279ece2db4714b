"""The partner's statements in the reverse API (docs/rules/statements.md#partner-api): what the
service owes it, month by month, with every line, as JSON or streamed CSV."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response, StreamingResponse

from transfers.accounting import service as books
from transfers.accounting.csvfile import csv_chunks
from transfers.api import schemas
from transfers.api.deps import current_partner, services
from transfers.api.errors import REVERSE_PREFIX
from transfers.api.responses import JSONBody
from transfers.auth.service import PartnerPrincipal
from transfers.errors import ErrorCode, Invalid

router = APIRouter(prefix=REVERSE_PREFIX, tags=["Reverse API (partners)"])
STATEMENT_ERRORS: dict[int | str, dict[str, Any]] = {
    **schemas.service_errors(ErrorCode.UNAUTHENTICATED, ErrorCode.RATE_LIMITED),
    404: {"model": schemas.PartnerErrorBody, "description": "no statement of yours for that period"},
    422: {"model": schemas.PartnerErrorBody, "description": "a period not written YYYY-MM, an unknown format"},
}


@router.get(
    "/statements",
    summary="Your monthly statements, newest first",
    responses=STATEMENT_ERRORS,
    operation_id="reverse_list_statements",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def list_statements(request: Request, partner: PartnerPrincipal = Depends(current_partner)) -> Response:
    found = await books.statements(services(request).db, partner.partner_id)
    return JSONBody({"data": [s.as_api() for s in found]})


@router.get(
    "/statements/{period}",
    summary="One month's statement with its lines (?format=csv: as CSV)",
    responses=STATEMENT_ERRORS,
    operation_id="reverse_get_statement",
    openapi_extra={"security": [{"BearerAuth": []}]},
)
async def get_statement(
    request: Request,
    period: str,
    format: str = "json",
    currency: str | None = None,
    partner: PartnerPrincipal = Depends(current_partner),
) -> Response:
    if format not in ("json", "csv"):
        raise Invalid("format is json or csv.")
    db = services(request).db
    found = await books.statement(db, partner.partner_id, period, currency)
    if format == "csv":
        name = f"statement-{found.period}-{found.currency}.csv"
        return StreamingResponse(
            csv_chunks(books.stream_lines(db, found)),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )
    return JSONBody({**found.as_api(), "lines": await books.statement_lines(db, found)})
