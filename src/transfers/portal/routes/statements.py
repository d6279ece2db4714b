"""``Statements`` (docs/rules/statements.md#partner-api): the partner's monthly statements as the
reverse API gives them (the same use cases, ``accounting/service.py``), one month's lines, and each
month as a CSV download (streamed: a month of any length in bounded memory)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from transfers.accounting import service as books
from transfers.accounting.csvfile import csv_chunks
from transfers.portal.auth import Signed, services
from transfers.portal.render import page

router = APIRouter()
LINES_SHOWN = 500  # on the page; the CSV has them all


@router.get("/statements")
async def statements_page(request: Request, viewer: Signed) -> Response:
    found = await books.statements(services(request).db, viewer.partner_id)
    return page(
        request,
        "statements.html",
        {"active": "Statements", "statements": [s.as_api() for s in found]},
        viewer=viewer,
        title="Statements",
    )


@router.get("/statements/{period}.csv")
async def statement_csv(request: Request, period: str, viewer: Signed) -> Response:
    db = services(request).db
    found = await books.statement(db, viewer.partner_id, period, request.query_params.get("currency"))
    return StreamingResponse(
        csv_chunks(books.stream_lines(db, found)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="statement-{found.period}-{found.currency}.csv"'},
    )


@router.get("/statements/{period}")
async def statement_page(request: Request, period: str, viewer: Signed) -> Response:
    db = services(request).db
    found = await books.statement(db, viewer.partner_id, period, request.query_params.get("currency"))
    lines = await books.statement_lines(db, found, limit=LINES_SHOWN + 1)
    return page(
        request,
        "statement.html",
        {
            "active": "Statements",
            "s": found.as_api(),
            "lines": lines[:LINES_SHOWN],
            "more": len(lines) > LINES_SHOWN,
        },
        viewer=viewer,
        title=f"Statement {found.period}",
    )
