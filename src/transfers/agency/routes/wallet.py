"""``Wallet`` (docs/rules/agency-portal.md#pages, docs/rules/wallet.md): every wallet the agency holds
with its balance (``GET /wallets``), and the statement of one of them (the default one, or
``?currency=``) as ``GET /wallet/entries`` gives it (the same use cases, ``wallet/statement.py``),
paged by the same cursor, and that wallet's whole statement as CSV (``/agency/wallet.csv?currency=``).
A currency the agency holds no wallet in is the API's 404 ``WALLET_NOT_FOUND``, as a page."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from transfers.agency import forms
from transfers.agency.auth import AgencyViewer, PageNotFound, Signed, services
from transfers.agency.render import page
from transfers.errors import DomainError, NotFound
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


def _currency(request: Request) -> str | None:
    return forms.text(request.query_params, "currency", 10) or None


async def _summary(svc: Services, viewer: AgencyViewer, currency: str | None) -> dict[str, object]:
    try:
        return await statement.summary(svc, viewer.client, currency)
    except NotFound as exc:
        raise PageNotFound(exc.message) from None


@router.get("/wallet")
async def wallet_page(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    currency = _currency(request)
    balance = await _summary(svc, viewer, currency)
    wallets = (await statement.every_wallet(svc, viewer.client))["data"]
    cursor = forms.text(request.query_params, "cursor", 2000)
    error = ""
    try:
        entries = await statement.entries(
            svc, viewer.client, limit="50", cursor=cursor or None, created_from=None, created_to=None, currency=currency
        )
    except DomainError:
        error = "That page link is not valid any more: the statement starts from the newest entry."
        entries = await statement.entries(
            svc, viewer.client, limit="50", cursor=None, created_from=None, created_to=None, currency=currency
        )
    context = {
        "active": "Wallet",
        "balance": balance,
        "wallets": wallets,
        "entries": entries["data"],
        "next_cursor": entries["next_cursor"],
        "paged": bool(cursor) and not error,
        "error": error,
        "kinds": KIND_WORDS,
    }
    return page(request, "wallet.html", context, viewer=viewer, title="Wallet")


async def _csv_lines(svc: Services, viewer: AgencyViewer, currency: str | None) -> AsyncIterator[str]:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    cursor: str | None = None
    while True:
        chunk = await statement.entries(
            svc, viewer.client, limit="100", cursor=cursor, created_from=None, created_to=None, currency=currency
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
    shown = await _summary(svc, viewer, _currency(request))  # the wallet exists before a byte is sent
    which = f"-{shown['currency']}" if shown["currency"] else ""
    return StreamingResponse(
        _csv_lines(svc, viewer, _currency(request)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="wallet-{viewer.client_id}{which}-{day}.csv"'},
    )
