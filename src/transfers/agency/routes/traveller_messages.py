"""``Messages`` (admins only, docs/rules/messages.md#settings): the agency's settings of the messages to its
travellers, through ``messages/settings_service.py``, the use case ``transfers clients messages`` runs,
audited with this admin. The whole form is one change: a refusal (a brand name of 31 characters, a
sender with punctuation, SMS without the travellers' consent) is shown beside its field with what was
typed kept, and nothing is changed."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.agency.auth import AdminOnly, AgencyViewer, services
from transfers.agency.render import page
from transfers.messages import settings_form, settings_service
from transfers.messages.models import MessageSettings
from transfers.messages.settings_rules import MessageSettingsInvalid

router = APIRouter()


def _page(
    request: Request,
    viewer: AgencyViewer,
    current: MessageSettings,
    *,
    typed: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    notice: str = "",
    status_code: int = 200,
) -> Response:
    context: dict[str, Any] = {
        "active": "Messages",
        "current": current,
        "consented_at": current.travellers_consented_at,
        "typed": typed if typed is not None else settings_form.form_values(current),
        "errors": errors or {},
        "languages": settings_form.LANGUAGE_CHOICES,
        "notice": notice,
    }
    return page(request, "messages.html", context, viewer=viewer, status_code=status_code, title="Messages")


@router.get("/messages")
async def messages_page(request: Request, viewer: AdminOnly) -> Response:
    current = await settings_service.get_settings(services(request).db, viewer.client_id)
    notice = "Saved." if request.query_params.get("done") == "saved" else ""
    return _page(request, viewer, current, notice=notice)


@router.post("/messages")
async def save_messages(request: Request, viewer: AdminOnly) -> Response:
    form = await viewer.form(request)
    svc = services(request)
    current = await settings_service.get_settings(svc.db, viewer.client_id)
    typed = settings_form.typed_values(form)
    try:
        await settings_service.update_settings(
            svc.db, svc.clock, viewer.client_id, settings_form.change_of(typed, current), actor=viewer.actor
        )
    except MessageSettingsInvalid as refusal:
        errors = settings_form.field_error(refusal)
        return _page(request, viewer, current, typed=typed, errors=errors, status_code=422)
    return RedirectResponse("/agency/messages?done=saved", status_code=303)
