"""``Audit log``: every operator action (console and CLI), newest first, paged by cursor."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.console import queries
from transfers.console.auth import PREFIX, Signed, services
from transfers.console.forms import decode_cursor, encode_cursor, text
from transfers.console.render import page

router = APIRouter()
PAGE_SIZE = 50


@router.get("/audit")
async def audit_log(request: Request, viewer: Signed) -> Response:
    params = request.query_params
    actor, actor_error = text(params.get("actor"), limit=200)
    subject, subject_error = text(params.get("subject"), limit=200)
    errors = {k: v for k, v in (("actor", actor_error), ("subject", subject_error)) if v}
    cursor_value = params.get("cursor")
    before = decode_cursor(cursor_value)
    rows = []
    if not errors:
        async with services(request).db.read() as conn:
            rows = await queries.audit_entries(
                conn, before=before, limit=PAGE_SIZE + 1, actor=actor or None, subject=subject or None
            )
    next_link = None
    if len(rows) > PAGE_SIZE:
        rows = rows[:PAGE_SIZE]
        kept = {k: v for k, v in params.items() if k != "cursor" and v}
        next_link = f"{PREFIX}/audit?" + urlencode({**kept, "cursor": encode_cursor(rows[-1].created_at, rows[-1].id)})
    return page(
        request,
        "audit.html",
        {
            "active": "Audit log",
            "rows": rows,
            "errors": errors,
            "typed": {"actor": actor, "subject": subject},
            "next_link": next_link,
            "first_page": before is None,
            "notice": "That page link is out of date; showing the newest entries."
            if cursor_value and before is None
            else "",
        },
        viewer=viewer,
        title="Audit log",
        status_code=400 if errors else 200,
    )
