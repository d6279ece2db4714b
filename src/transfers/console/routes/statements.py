"""A partner's statements in the console (docs/rules/statements.md#operators):
``/console/partners/{id}/statements`` lists them (the open month included) with each month's lines
as CSV; an admin (``MOVE_MONEY``) marks a closed one paid (``Mark paid``, field ``Reference``: a
``PAYOUT`` of its closing balance) or adjusts the partner's account (``Adjust``: ``Amount``,
``Note``). The same use cases as the CLI (``accounting/service.py``), each audited with the operator
in the transaction that moves the money."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from transfers.accounting import service as books
from transfers.accounting.csvfile import csv_chunks
from transfers.console.admin_queries import partner_row
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.render import page
from transfers.errors import Conflict, Invalid, NotFound, Refused
from transfers.operators.models import Capability
from transfers.webauth.refusals import path_id

router = APIRouter()
NOTICES = {
    "paid": "The statement is marked paid: its payout is a line of the open month.",
    "adjusted": "The adjustment is a line of the open month.",
}


async def _statements_page(
    request: Request,
    viewer: Viewer,
    partner_id: int,
    *,
    status_code: int = 200,
    error: str = "",
    typed: dict[str, str] | None = None,
) -> Response:
    svc = services(request)
    async with svc.db.read() as conn:
        partner = await partner_row(conn, partner_id)
    if partner is None:
        raise PageNotFound(f"There is no partner {partner_id}.")
    found = await books.statements(svc.db, partner_id)
    context: dict[str, Any] = {
        "active": "Partners",
        "p": partner,
        "statements": [{**s.as_api(), "payable": s.status.value == "CLOSED" and s.figures.closing > 0} for s in found],
        "error": error,
        "typed": typed or {},
        "currency": found[0].currency if found else "EUR",
        "notice": NOTICES.get(request.query_params.get("done", ""), ""),
        "can_pay": viewer.may(Capability.MOVE_MONEY),
    }
    return page(
        request,
        "partners/statements.html",
        context,
        viewer=viewer,
        status_code=status_code,
        title=f"Statements of {partner.name}",
    )


@router.get("/partners/{partner_id}/statements")
async def statements_page(request: Request, partner_id: str, viewer: Signed) -> Response:
    return await _statements_page(request, viewer, path_id(partner_id, "partner"))


@router.get("/partners/{partner_id}/statements/{period}.csv")
async def statement_csv(request: Request, partner_id: str, period: str, viewer: Signed) -> Response:
    pid = path_id(partner_id, "partner")
    db = services(request).db
    found = await books.statement(db, pid, period, request.query_params.get("currency"))
    return StreamingResponse(
        csv_chunks(books.stream_lines(db, found)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="statement-{pid}-{found.period}-{found.currency}.csv"'},
    )


def _status(exc: Exception) -> int:
    return 409 if isinstance(exc, Conflict) else 404 if isinstance(exc, NotFound) else 422


@router.post("/partners/{partner_id}/statements/{period}/paid")
async def mark_paid(request: Request, partner_id: str, period: str, viewer: Signed) -> Response:
    viewer.require(Capability.MOVE_MONEY)
    form = await viewer.form(request)
    pid = path_id(partner_id, "partner")
    svc = services(request)
    try:
        await books.mark_paid(
            svc.db, pid, period, form.get("currency"), form.get("reference"), actor=viewer.actor, now=svc.clock.now()
        )
    except (Invalid, Refused, Conflict, NotFound) as exc:
        return await _statements_page(request, viewer, pid, status_code=_status(exc), error=str(exc))
    return RedirectResponse(f"{PREFIX}/partners/{pid}/statements?done=paid", status_code=303)


@router.post("/partners/{partner_id}/adjustments")
async def adjust(request: Request, partner_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.MOVE_MONEY)
    form = await viewer.form(request)
    pid = path_id(partner_id, "partner")
    svc = services(request)
    typed = {k: str(form.get(k) or "")[:2000] for k in ("amount", "note", "currency")}
    async with svc.db.read() as conn:
        if await partner_row(conn, pid) is None:
            raise PageNotFound(f"There is no partner {pid}.")
    try:
        await books.adjust(
            svc.db,
            pid,
            form.get("currency"),
            form.get("amount"),
            form.get("note"),
            actor=viewer.actor,
            now=svc.clock.now(),
        )
    except (Invalid, Refused) as exc:
        return await _statements_page(request, viewer, pid, status_code=422, error=str(exc), typed=typed)
    return RedirectResponse(f"{PREFIX}/partners/{pid}/statements?done=adjusted", status_code=303)
