"""``Wallet`` (docs/rules/agency-portal.md#pages, docs/rules/wallet.md): the balance and the statement
as the API's ``GET /wallet`` and ``GET /wallet/entries`` give them (the same use cases,
``wallet/statement.py``), paged by the same cursor, and the whole statement as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from transfers.agency import forms
from transfers.agency.auth import AgencyViewer, Signed, services
from transfers.agency.render import page
from transfers.errors import DomainError
from transfers.services import Services
from transfers.wallet import statement

router = APIRouter()
CSV_COLUMNS = ("created_at", "kind", "amount", "currency", "balance_after", "reservation_no", "note")
KIND_WORDS = {
    "top_up": "Top-up",
    "debit": "Booking paid",
    "refund": "Refund",
    "cancellation_fee": "Cancellation fee",
    "adjustment": "Adjustment",
}


@router.get("/wallet")
async def wallet_page(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    balance = await statement.summary(svc, viewer.client)
    cursor = forms.text(request.query_params, "cursor", 2000)
    error = ""
    try:
        entries = await statement.entries(
            svc, viewer.client, limit="50", cursor=cursor or None, created_from=None, created_to=None
        )
    except DomainError:
        error = "That page link is not valid any more: the statement starts from the newest entry."
        entries = await statement.entries(
            svc, viewer.client, limit="50", cursor=None, created_from=None, created_to=None
        )
    context = {
        "active": "Wallet",
        "balance": balance,
        "entries": entries["data"],
        "next_cursor": entries["next_cursor"],
        "paged": bool(cursor) and not error,
        "error": error,
        "kinds": KIND_WORDS,
    }
    return page(request, "wallet.html", context, viewer=viewer, title="Wallet")


async def _csv_lines(svc: Services, viewer: AgencyViewer) -> AsyncIterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    cursor: str | None = None
    while True:
        chunk = await statement.entries(
            svc, viewer.client, limit="100", cursor=cursor, created_from=None, created_to=None
        )
        for entry in chunk["data"]:
            writer.writerow([_cell(entry.get(column)) for column in CSV_COLUMNS])
        yield out.getvalue()
        out.seek(0)
        out.truncate()
        cursor = chunk["next_cursor"]
        if cursor is None:
            return


def _cell(value: object) -> str:
    """A cell as text; one a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``) is
    quoted with a leading apostrophe, except plain amounts like ``-45.00``."""
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@", "\t", "\r") and not _is_amount(text):
        return "'" + text
    return text


def _is_amount(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.replace(".", "", 1).isdigit()


@router.get("/wallet.csv")
async def wallet_csv(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    day = svc.clock.now().strftime("%Y-%m-%d")
    return StreamingResponse(
        _csv_lines(svc, viewer),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="wallet-{viewer.client_id}-{day}.csv"'},
    )
