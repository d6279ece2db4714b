"""``Developers`` -> webhooks (admins only, docs/rules/agency-portal.md#pages): add an endpoint (its
signing secret shown once), edit it, disable or enable it, rotate its secret (shown once), send it a
test event; the events sent to the agency with their deliveries, and ``Resend`` on a failed one.

Through the API's own use cases (``webhooks/endpoints.py``, the one behind ``/api/v1/booking-api/
webhook-endpoints``; ``webhooks/retry.py``, the one behind ``transfers outbox retry --webhook``):
the same checks, codes and messages (shown beside their fields), with an ``admin_audit`` row naming
this admin. Another agency's endpoint or delivery is the 404 page, as a missing one."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers import paging
from transfers.agency import developer_queries as queries
from transfers.agency import forms
from transfers.agency.auth import AdminOnly, AgencyViewer, PageNotFound, services
from transfers.agency.render import page
from transfers.client_events import events
from transfers.errors import ErrorCode, Invalid, Refused
from transfers.outbox.retry import MessageNotFound
from transfers.webauth.refusals import path_id
from transfers.webhooks import endpoints, retry

router = APIRouter()
EVENT_TYPES = (events.EVERY_EVENT, *sorted(t.value for t in events.EventType if t is not events.EventType.PING))
_FIELD_OF = {
    ErrorCode.INVALID_WEBHOOK_URL: "url",
    ErrorCode.INVALID_WEBHOOK_EVENT: "events",
    ErrorCode.INVALID_WEBHOOK_ENDPOINT: "description",
}
_DONE = {
    "saved": "The endpoint is saved.",
    "disabled": "The endpoint is disabled: nothing is sent to it, and its pending deliveries are stopped.",
    "enabled": "The endpoint is enabled again.",
}


def _endpoint_body(form: FormData) -> dict[str, Any]:
    """The API's body from the form: what was typed, as typed (the use case checks it)."""
    description = forms.text(form, "description", 10_000).strip()
    return {
        "url": forms.text(form, "url", 10_000).strip(),
        "events": [value for value in form.getlist("events") if isinstance(value, str)][:20],
        "description": description or None,
    }


def _errors_of(exc: Invalid | Refused) -> dict[str, str]:
    code = exc.code if isinstance(exc.code, ErrorCode) else None
    return {_FIELD_OF.get(code, "url") if code is not None else "url": exc.message}


def _typed(body: dict[str, Any]) -> dict[str, Any]:
    return {"url": body["url"][:2000], "description": (body["description"] or "")[:500], "events": body["events"]}


async def _endpoint_page(
    request: Request,
    viewer: AgencyViewer,
    public_id: str,
    *,
    errors: dict[str, str] | None = None,
    typed: dict[str, Any] | None = None,
    secret: str = "",
    notice: str = "",
    status_code: int = 200,
) -> Response:
    svc = services(request)
    hook = await endpoints.get(svc, viewer.client, public_id)  # another agency's: NotFound, the 404 page
    log = await endpoints.deliveries(svc, viewer.client, public_id, limit=None, cursor=None)
    context: dict[str, Any] = {
        "active": "Developers",
        "hook": hook,
        "deliveries": log["data"],
        "errors": errors or {},
        "typed": typed or {"url": hook["url"], "description": hook["description"] or "", "events": hook["events"]},
        "event_types": EVENT_TYPES,
        "secret": secret,
        "notice": notice,
    }
    title = "Webhook endpoint"
    return page(request, "developers/endpoint.html", context, viewer=viewer, status_code=status_code, title=title)


def _public_id(value: str) -> str:
    if not value.isascii() or not value.startswith("we_") or len(value) > 40:
        raise PageNotFound("There is no such webhook endpoint.")
    return value


@router.get("/developers/endpoints/new")
async def new_endpoint(request: Request, viewer: AdminOnly) -> Response:
    return _new_page(request, viewer, {}, {"url": "", "description": "", "events": ["*"]})


def _new_page(
    request: Request, viewer: AgencyViewer, errors: dict[str, str], typed: dict[str, Any], status_code: int = 200
) -> Response:
    context = {"active": "Developers", "errors": errors, "typed": typed, "event_types": EVENT_TYPES}
    return page(
        request,
        "developers/new_endpoint.html",
        context,
        viewer=viewer,
        status_code=status_code,
        title="Add an endpoint",
    )


@router.post("/developers/endpoints")
async def create_endpoint(request: Request, viewer: AdminOnly) -> Response:
    form = await viewer.form(request)
    viewer.require_active_client()
    body = _endpoint_body(form)
    try:
        created = await endpoints.create(services(request), viewer.client, body, actor=viewer.actor)
    except (Invalid, Refused) as exc:
        return _new_page(request, viewer, _errors_of(exc), _typed(body), status_code=422)
    return await _endpoint_page(
        request, viewer, created["id"], secret=created["secret"], notice="The endpoint is added.", status_code=201
    )


@router.get("/developers/endpoints/{endpoint_id}")
async def endpoint(request: Request, endpoint_id: str, viewer: AdminOnly) -> Response:
    notice = _DONE.get(request.query_params.get("done", ""), "")
    test = forms.text(request.query_params, "test", 40)
    if test.startswith("evt_") and test[4:].isalnum():
        notice = f"A ping event ({test}) is on its way to this endpoint; its delivery is listed below."
    return await _endpoint_page(request, viewer, _public_id(endpoint_id), notice=notice)


@router.post("/developers/endpoints/{endpoint_id}")
async def edit_endpoint(request: Request, endpoint_id: str, viewer: AdminOnly) -> Response:
    public_id = _public_id(endpoint_id)
    form = await viewer.form(request)
    viewer.require_active_client()
    body = _endpoint_body(form)
    try:
        await endpoints.patch(services(request), viewer.client, public_id, body, actor=viewer.actor)
    except (Invalid, Refused) as exc:
        return await _endpoint_page(
            request, viewer, public_id, errors=_errors_of(exc), typed=_typed(body), status_code=422
        )
    return RedirectResponse(f"/agency/developers/endpoints/{public_id}?done=saved", status_code=303)


@router.post("/developers/endpoints/{endpoint_id}/status")
async def endpoint_status(request: Request, endpoint_id: str, viewer: AdminOnly) -> Response:
    public_id = _public_id(endpoint_id)
    form = await viewer.form(request)
    viewer.require_active_client()
    status = forms.text(form, "status", 16)
    await endpoints.patch(services(request), viewer.client, public_id, {"status": status}, actor=viewer.actor)
    return RedirectResponse(f"/agency/developers/endpoints/{public_id}?done={status}", status_code=303)


@router.post("/developers/endpoints/{endpoint_id}/rotate")
async def rotate(request: Request, endpoint_id: str, viewer: AdminOnly) -> Response:
    public_id = _public_id(endpoint_id)
    await viewer.form(request)
    viewer.require_active_client()
    rotated = await endpoints.rotate_secret(services(request), viewer.client, public_id, actor=viewer.actor)
    notice = "A new signing secret; the old one keeps signing beside it for 24 hours."
    return await _endpoint_page(request, viewer, public_id, secret=rotated["secret"], notice=notice, status_code=201)


@router.post("/developers/endpoints/{endpoint_id}/test")
async def send_test(request: Request, endpoint_id: str, viewer: AdminOnly) -> Response:
    public_id = _public_id(endpoint_id)
    await viewer.form(request)
    viewer.require_active_client()
    sent = await endpoints.ping(services(request), viewer.client, public_id, actor=viewer.actor)
    return RedirectResponse(f"/agency/developers/endpoints/{public_id}?test={sent['event_id']}", status_code=303)


@router.get("/developers/events")
async def events_page(request: Request, viewer: AdminOnly) -> Response:
    svc = services(request)
    purpose = "agency-events"
    cursor = forms.text(request.query_params, "cursor", paging.MAX_CURSOR_CHARS)
    try:
        below = paging.decode(svc.box, purpose, viewer.client_id, cursor or None)
    except Invalid:
        below = None
    async with svc.db.read() as conn:
        rows = await queries.events_page(conn, viewer.client_id, below_id=below, limit=queries.EVENTS_PAGE + 1)
        shown = rows[: queries.EVENTS_PAGE]
        deliveries = await queries.deliveries_of(conn, [int(r["id"]) for r in shown])
    next_cursor = (
        paging.encode(svc.box, purpose, viewer.client_id, int(shown[-1]["id"]))
        if len(rows) > queries.EVENTS_PAGE
        else ""
    )
    context: dict[str, Any] = {
        "active": "Developers",
        "events": [{**row, "deliveries": deliveries.get(int(row["id"]), [])} for row in shown],
        "next_cursor": next_cursor,
        "notice": "The delivery is pending again, due now (same event id, same body)."
        if request.query_params.get("done") == "resent"
        else "",
    }
    return page(request, "developers/events.html", context, viewer=viewer, title="Events")


@router.get("/developers/events/{event_id}")
async def event_page(request: Request, event_id: str, viewer: AdminOnly) -> Response:
    """One event: the exact body every delivery sends (fixed when it was fanned out; None before)
    and its deliveries. Another agency's event is the 404 page."""
    svc = services(request)
    async with svc.db.read() as conn:
        event = await queries.event_of(conn, viewer.client_id, event_id[:60])
        if event is None:
            raise PageNotFound("There is no such event.")
        deliveries = (await queries.deliveries_of(conn, [int(event["id"])])).get(int(event["id"]), [])
    body = event["body"]
    if body:
        body = orjson.dumps(orjson.loads(body), option=orjson.OPT_INDENT_2).decode()
    context = {"active": "Developers", "event": event, "body": body, "deliveries": deliveries}
    return page(request, "developers/event.html", context, viewer=viewer, title=f"Event {event['event_id']}")


@router.post("/developers/deliveries/{delivery_id}/resend")
async def resend(request: Request, delivery_id: str, viewer: AdminOnly) -> Response:
    target = path_id(delivery_id, "delivery")
    await viewer.form(request)
    viewer.require_active_client()
    svc = services(request)
    async with svc.db.read() as conn:
        owner = await queries.delivery_client(conn, target)
    if owner != viewer.client_id:
        raise PageNotFound("There is no such delivery.")
    try:
        await retry.retry_webhook_delivery(svc.db, svc.clock, target, actor=viewer.actor)
    except MessageNotFound:
        raise PageNotFound("There is no such delivery.") from None
    # RetryRefused (delivered, still pending, endpoint disabled) is the 403 page with the use case's words
    return RedirectResponse("/agency/developers/events?done=resent", status_code=303)
