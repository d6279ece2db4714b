"""``Messages`` (docs/rules/messages.md#sending): the text messages the sandbox SMS provider kept instead
of sending, newest first, each with its booking, client, template, language, masked number and the text
as the traveller would have read it. Read-only; every operator sees it. A client's settings are on its
page (``client_messages.py``); a booking's messages on the booking's page."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.console.auth import PREFIX, Signed, services
from transfers.console.render import page
from transfers.messages.addresses import mask
from transfers.messages.sandbox_queries import kept_texts

router = APIRouter()
PAGE_SIZE = 50


@router.get("/messages")
async def messages_page(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    raw_before = request.query_params.get("before", "")
    before = int(raw_before) if raw_before.isascii() and raw_before.isdigit() and len(raw_before) < 18 else None
    async with svc.db.read() as conn:
        texts = await kept_texts(conn, limit=PAGE_SIZE + 1, below_id=before)
    older = None
    if len(texts) > PAGE_SIZE:
        texts = texts[:PAGE_SIZE]
        older = f"{PREFIX}/messages?before={texts[-1].id}"
    return page(
        request,
        "messages.html",
        {
            "active": "Messages",
            "texts": [(t, mask("sms", t.to_address) or "—") for t in texts],
            "older": older,
            "first_page": before is None,
            "provider": svc.settings.resolved_sms_provider,  # TRANSFERS_SMS_PROVIDER, or its default
        },
        viewer=viewer,
        title="Messages",
    )
