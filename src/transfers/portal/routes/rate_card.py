"""The hosted partner's rate card as a form (``/partner/rate-card``): vehicles, fixed prices,
night surcharges, extras, lead time, blackout dates and the cancellation tiers, field by field,
with every problem beside its field and in a summary at the top (``portal/card_form.py`` maps the
form to the card and the card's ``$.path`` errors back to fields). Rows are added and removed by
submit buttons, so the page works without JavaScript; nothing is saved until ``Save rate card``,
and then only a card that passes the same schema and domain rules as the CLI and the API
(``hosted/service.set_rate_card``: one transaction, so no card is ever half-written).

The JSON stays: ``/partner/rate-card/card.json`` downloads the saved card, and
``/partner/rate-card/json`` imports one (a file or pasted text), through the same validation.
The price preview lives in ``rate_card_preview.py``."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.hosted import repository as repo
from transfers.hosted import service as hosted_service
from transfers.portal import card_errors, card_form
from transfers.portal.auth import PREFIX, PageNotFound, PartnerViewer, Signed, services
from transfers.portal.render import page
from transfers.ratecards import card as cards

router = APIRouter()
MAX_CARD_CHARS = 200_000
ACTIONS_ADD = {f"add-{t}": t for t in card_form.TABLES}


async def signed_partner(conn: AsyncConnection, viewer: PartnerViewer) -> repo.PortalPartner:
    """The signed-in user's partner; gone meanwhile (a race with its removal): the 404 page."""
    partner = await repo.partner_record(conn, viewer.partner_id)
    if partner is None:
        raise PageNotFound("There is no such partner.")
    return partner


async def partner_airports(request: Request, viewer: PartnerViewer) -> tuple[list[str], Decimal]:
    async with services(request).db.read() as conn:
        partner = await signed_partner(conn, viewer)
    return [code for code in partner.airports.split(",") if code and code != "*"], partner.markup_percent


async def editor(
    request: Request,
    viewer: PartnerViewer,
    form: card_form.CardForm,
    *,
    errors: dict[str, str] | None = None,
    general: list[str] | None = None,
    preview: dict[str, Any] | None = None,
    notice: str = "",
    status_code: int = 200,
) -> Response:
    """The form page; ``errors`` by field id, ``general`` the card's problems that have no field."""
    airports, markup = await partner_airports(request, viewer)
    types = sorted(await hosted_service.vehicle_types(services(request).db))
    values = preview or {}
    typed = values.get("typed") or {"airport": airports[0] if airports else ""}
    context = {
        "active": "Rate card",
        "form": form,
        "errors": card_errors.in_page_order(errors or {}),
        "general": general or [],
        "type_options": [(t, t.replace("_", " ").capitalize()) for t in types],
        "vehicle_options": [(v["id"].strip(), v["id"].strip()) for v in form.vehicles if v["id"].strip()],
        "airports": airports,
        "typed": typed,
        "preview": values,
        "notice": notice,
        "markup": markup,
    }
    if request.query_params.get("fragment") == "preview":
        return page(request, "preview.html", context, viewer=viewer, status_code=status_code)
    return page(request, "rate_card.html", context, viewer=viewer, status_code=status_code, title="Rate card")


@router.get("/rate-card")
async def rate_card_page(request: Request, viewer: Signed) -> Response:
    viewer.require_hosted()
    services(request).geocoder.start_warming()  # the preview's place search will need it soon
    stored = await hosted_service.get_rate_card(services(request).db, viewer.partner_id)
    notice = "Saved: searches use the new card from now on." if request.query_params.get("saved") else ""
    return await editor(request, viewer, card_form.from_card(stored), notice=notice)


async def checked(request: Request, form: card_form.CardForm) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The card the form describes and every problem of it, by field and general."""
    mapped = card_form.to_card(form)
    types = await hosted_service.vehicle_types(services(request).db)
    by_field, general = card_errors.field_errors(form, mapped, cards.validate(mapped.document, vehicle_types=types))
    return mapped.document, by_field, general


@router.post("/rate-card")
async def rate_card_post(request: Request, viewer: Signed) -> Response:
    """``action``: ``save`` (the default, also what Enter in a field does), ``add-v|f|x|t`` (a
    blank row), ``remove-{table}-{index}``; adding or removing saves nothing."""
    posted = await viewer.form(request)
    viewer.require_hosted()
    form = card_form.from_post(posted)
    action = str(posted.get("action") or "save")
    if action in ACTIONS_ADD:
        form.add_row(ACTIONS_ADD[action])
        return await editor(request, viewer, form)
    if action.startswith("remove-"):
        _, table, index = [*action.split("-"), "", ""][:3]
        form.remove_row(table, int(index) if index.isdigit() else -1)
        return await editor(request, viewer, form)
    document, errors, general = await checked(request, form)
    if not errors and not general:
        svc = services(request)
        try:
            await hosted_service.set_rate_card(svc.db, svc.clock, viewer.partner_id, document, actor=viewer.actor)
        except cards.InvalidRateCard as exc:  # a rule the form's check did not see (kept for safety)
            general = [str(e) for e in exc.errors]
        else:
            return RedirectResponse(f"{PREFIX}/rate-card?saved=1", status_code=303)
    return await editor(request, viewer, form, errors=errors, general=general, status_code=422)


@router.get("/rate-card/card.json")
async def rate_card_download(request: Request, viewer: Signed) -> Response:
    viewer.require_hosted()
    stored = await hosted_service.get_rate_card(services(request).db, viewer.partner_id)
    if stored is None:
        raise PageNotFound("No rate card is saved yet.")
    return Response(
        json.dumps(stored, indent=2, ensure_ascii=False) + "\n",
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="rate-card-{viewer.partner_id}.json"'},
    )


async def _json_page(
    request: Request, viewer: PartnerViewer, card_text: str, errors: list[cards.CardError], status_code: int = 200
) -> Response:
    context = {"active": "Rate card", "card_text": card_text, "errors": errors}
    return page(
        request, "rate_card_json.html", context, viewer=viewer, status_code=status_code, title="Rate card as JSON"
    )


@router.get("/rate-card/json")
async def rate_card_json_page(request: Request, viewer: Signed) -> Response:
    viewer.require_hosted()
    stored = await hosted_service.get_rate_card(services(request).db, viewer.partner_id)
    text = json.dumps(stored, indent=2, ensure_ascii=False) if stored is not None else ""
    return await _json_page(request, viewer, text, [])


async def _posted_card_text(posted: FormData) -> str:
    """The uploaded file when one was chosen, else the text box; at most MAX_CARD_CHARS + 1."""
    upload = posted.get("file")
    if isinstance(upload, UploadFile) and upload.filename:
        raw = await upload.read(MAX_CARD_CHARS * 4 + 1)
        return raw.decode("utf-8", errors="replace")[: MAX_CARD_CHARS + 1]
    text = posted.get("card")
    return text[: MAX_CARD_CHARS + 1] if isinstance(text, str) else ""


def parse_text(card_text: str) -> tuple[Any, list[cards.CardError]]:
    if len(card_text) > MAX_CARD_CHARS:
        return None, [cards.CardError("$", f"the card is over {MAX_CARD_CHARS} characters")]
    try:
        return json.loads(card_text), []
    except json.JSONDecodeError as exc:
        return None, [cards.CardError("$", f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")]


@router.post("/rate-card/json")
async def rate_card_import(request: Request, viewer: Signed) -> Response:
    """Import a card as JSON: saved whole, or not at all with every problem listed."""
    posted = await viewer.form(request)
    try:
        viewer.require_hosted()
        card_text = await _posted_card_text(posted)
    finally:
        await posted.close()  # an uploaded file's spooled copy
    document, errors = parse_text(card_text)
    if not errors:
        svc = services(request)
        try:
            await hosted_service.set_rate_card(svc.db, svc.clock, viewer.partner_id, document, actor=viewer.actor)
        except cards.InvalidRateCard as exc:
            errors = exc.errors
    if errors:
        return await _json_page(request, viewer, card_text[:MAX_CARD_CHARS], errors, status_code=422)
    return RedirectResponse(f"{PREFIX}/rate-card?saved=1", status_code=303)
