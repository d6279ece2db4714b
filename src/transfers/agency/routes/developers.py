"""``Developers`` (admins only, docs/rules/agency-portal.md#pages): the agency's API keys (create: shown
once; revoke; a revoked key stays listed as revoked), its webhook endpoints (listed here, managed in
``developer_webhooks.py``) and the request log (``/agency/developers/requests``: the last 7 days,
filterable by status; docs/rules/agency-portal.md#request-log).

Keys go through the use cases of ``transfers clients keys create|revoke`` (``clients/service.py``):
the same ``admin_audit`` rows, with this admin as the actor. Another agency's key is the 404 page."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers import paging
from transfers.agency import forms
from transfers.agency.auth import AdminOnly, AgencyViewer, services
from transfers.agency.render import page
from transfers.clients import repository as clients_repo
from transfers.clients import service as clients_service
from transfers.requestlog import repository as request_log
from transfers.webhooks import endpoints
from transfers.webhooks import repository as hooks_repo

router = APIRouter()
LOG_PAGE = 50
STATUS_CLASSES = ("2xx", "3xx", "4xx", "5xx")
_DONE = {"revoked": "The key is revoked: requests made with it are refused from now on (within a second)."}


async def _index(
    request: Request, viewer: AgencyViewer, *, new_key: str = "", notice: str = "", status_code: int = 200
) -> Response:
    svc = services(request)
    async with svc.db.read() as conn:
        keys = await clients_repo.keys_of_client(conn, viewer.client_id)
        hooks = [
            endpoints.view(row) | {"disabled_reason": row.disabled_reason}
            for row in await hooks_repo.list_endpoints(conn, viewer.client_id)
        ]
    context: dict[str, Any] = {
        "active": "Developers",
        "keys": keys,
        "hooks": hooks,
        "new_key": new_key,
        "notice": notice,
        "max_endpoints": endpoints.MAX_ENDPOINTS,
    }
    return page(request, "developers/index.html", context, viewer=viewer, status_code=status_code, title="Developers")


@router.get("/developers")
async def developers(request: Request, viewer: AdminOnly) -> Response:
    return await _index(request, viewer, notice=_DONE.get(request.query_params.get("done", ""), ""))


@router.post("/developers/keys")
async def create_key(request: Request, viewer: AdminOnly) -> Response:
    await viewer.form(request)
    viewer.require_active_client()
    svc = services(request)
    created = await clients_service.issue_client_key(svc.db, svc.clock, viewer.client_id, actor=viewer.actor)
    return await _index(request, viewer, new_key=created.api_key, status_code=201)


@router.post("/developers/keys/{prefix}/revoke")
async def revoke_key(request: Request, prefix: str, viewer: AdminOnly) -> Response:
    await viewer.form(request)
    svc = services(request)
    await clients_service.revoke_client_key(svc.db, svc.clock, viewer.client_id, prefix[:40], actor=viewer.actor)
    return RedirectResponse("/agency/developers?done=revoked", status_code=303)


def _cursor_key(request: Request) -> bytes:
    return services(request).box.derive("cursor:agency-request-log")


def _below(request: Request, viewer: AgencyViewer, cursor: str) -> tuple[datetime, int] | None:
    """The position a ``Next`` link carries (sealed for this agency); anything else: the first page."""
    payload = paging.unseal(_cursor_key(request), viewer.client_id, cursor) if cursor else None
    if payload is None:
        return None
    at, _, row_id = payload.partition("|")
    try:
        return datetime.fromisoformat(at), int(row_id)
    except ValueError:
        return None


@router.get("/developers/requests")
async def request_log_page(request: Request, viewer: AdminOnly) -> Response:
    svc = services(request)
    query = request.query_params
    chosen = forms.text(query, "status", 8)
    typed = forms.text(query, "code", 20).strip()
    wanted = typed or chosen
    status = request_log.status_filter(wanted) if wanted else None
    errors: dict[str, str] = {}
    if wanted and status is None:
        errors["code"] = "Type a status such as 404, or a class: 2xx, 3xx, 4xx or 5xx."
    below = _below(request, viewer, forms.text(query, "cursor", paging.MAX_CURSOR_CHARS))
    now = svc.clock.now()
    rows: list[dict[str, Any]] = []
    if not errors:
        async with svc.db.read() as conn:
            rows = await request_log.page(
                conn,
                viewer.client_id,
                since=now - request_log.RETENTION,
                status=status,
                below=below,
                limit=LOG_PAGE + 1,
            )
    shown = rows[:LOG_PAGE]
    next_cursor = ""
    if len(rows) > LOG_PAGE:
        last = shown[-1]
        next_cursor = paging.seal(_cursor_key(request), viewer.client_id, f"{last['at'].isoformat()}|{last['id']}")
    context: dict[str, Any] = {
        "active": "Developers",
        "rows": shown,
        "classes": STATUS_CLASSES,
        "chosen": chosen if chosen in STATUS_CLASSES else "",
        "typed": {"code": typed},
        "errors": errors,
        "next_cursor": next_cursor,
        "logging": svc.request_log is not None,
    }
    return page(
        request,
        "developers/requests.html",
        context,
        viewer=viewer,
        status_code=422 if errors else 200,
        title="Request log",
    )
