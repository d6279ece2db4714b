"""``Deliveries``: partner deliveries that failed (refused, or expired at their deadline) and those
still pending, each with its booking's reservation number, and ``Retry`` on the failed ones. The
retry is the use case ``transfers outbox retry`` runs (``outbox/retry.py``: same refusals, same
``outbox.retry`` audit row, here with the operator); support may retry (``RETRY_DELIVERY``). Client
webhook deliveries (docs/rules/webhooks.md) are listed the same way, retried by ``webhooks/retry.py`` (as
``transfers outbox retry --webhook``).

The page opens with one line per partner and per client webhook endpoint (counts, the newest
error in words), so one dead endpoint is one line; an admin can disable a client's endpoint there
(``webhooks/endpoints.disable_for_operator``: its pending deliveries stop, audited); clients are named."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from transfers.console import delivery_queries
from transfers.console.admin_queries import (
    EXPIRED,
    FAILED,
    PENDING,
    deliveries,
    delivery_counts,
    webhook_delivery_counts,
)
from transfers.console.auth import PREFIX, PageNotFound, Signed, Viewer, services
from transfers.console.render import page
from transfers.operators.models import Capability
from transfers.outbox.retry import MessageNotFound, RetryRefused, retry_message
from transfers.webhooks import endpoints as webhook_endpoints
from transfers.webhooks import operators as webhooks_ops
from transfers.webhooks.retry import retry_webhook_delivery

router = APIRouter()
SHOWN = 200  # per table; the CLI's `transfers outbox list` reaches further back


async def _deliveries_page(
    request: Request, viewer: Viewer, *, notice: str = "", problem: str = "", status_code: int = 200
) -> Response:
    async with services(request).db.read() as conn:
        failed = await deliveries(conn, (FAILED, EXPIRED), limit=SHOWN)
        pending = await deliveries(conn, (PENDING,), limit=SHOWN)
        counts = await delivery_counts(conn)
        hooks_failed = await webhooks_ops.list_for_operator(conn, statuses=(FAILED,), limit=SHOWN)
        hooks_pending = await webhooks_ops.list_for_operator(conn, statuses=(PENDING,), limit=SHOWN)
        hook_counts = await webhook_delivery_counts(conn)
        partner_groups = await delivery_queries.partner_groups(conn)
        endpoint_groups = await delivery_queries.endpoint_groups(conn)
        names = await delivery_queries.client_names(conn, [m.client_id for m in [*hooks_failed, *hooks_pending]])
    return page(
        request,
        "deliveries.html",
        {
            "active": "Deliveries",
            "failed": failed,
            "pending": pending,
            "counts": counts,
            "shown": SHOWN,
            "hooks_failed": hooks_failed,
            "hooks_pending": hooks_pending,
            "hook_counts": hook_counts,
            "partner_groups": partner_groups,
            "endpoint_groups": endpoint_groups,
            "client_names": names,
            "can_disable": viewer.may(Capability.MANAGE_CLIENTS),
            "notice": notice,
            "problem": problem,
            "can_retry": viewer.may(Capability.RETRY_DELIVERY),
        },
        viewer=viewer,
        title="Deliveries",
        status_code=status_code,
    )


@router.get("/deliveries")
async def deliveries_page(request: Request, viewer: Signed) -> Response:
    retried = request.query_params.get("retried", "")
    what = "Webhook delivery" if request.query_params.get("kind") == "webhook" else "Delivery"
    notice = (
        f"{what} {retried} is pending again and will be sent within seconds."
        if retried.isascii() and retried.isdigit() and len(retried) < 19
        else ""
    )
    disabled = request.query_params.get("disabled", "")
    stopped = request.query_params.get("stopped", "0")
    if _endpoint_id_ok(disabled) and stopped.isascii() and stopped.isdigit() and len(stopped) < 10:
        notice = f"Endpoint {disabled} is disabled; {stopped} pending deliveries to it were stopped."
    return await _deliveries_page(request, viewer, notice=notice)


@router.post("/deliveries/{outbox_id}/retry")
async def retry_delivery(request: Request, outbox_id: str, viewer: Signed) -> Response:
    viewer.require(Capability.RETRY_DELIVERY)
    await viewer.form(request)
    if not outbox_id.isascii() or not outbox_id.isdigit() or len(outbox_id) > 18:
        raise PageNotFound("There is no such delivery.")
    svc = services(request)
    try:
        await retry_message(
            svc.db,
            svc.clock,
            int(outbox_id),
            before_pickup_hours=svc.settings.delivery_deadline_before_pickup_hours,
            actor=viewer.actor,
        )
    except MessageNotFound:
        raise PageNotFound(f"There is no delivery {outbox_id}.") from None
    except RetryRefused as exc:
        return await _deliveries_page(request, viewer, problem=f"Not retried: {exc}", status_code=409)
    return RedirectResponse(f"{PREFIX}/deliveries?retried={outbox_id}", status_code=303)


@router.post("/deliveries/webhooks/{delivery_id}/retry")
async def retry_webhook(request: Request, delivery_id: str, viewer: Signed) -> Response:
    """A failed client webhook delivery sent again (``webhooks/retry.py``, as ``transfers outbox retry
    --webhook``)."""
    viewer.require(Capability.RETRY_DELIVERY)
    await viewer.form(request)
    if not delivery_id.isascii() or not delivery_id.isdigit() or len(delivery_id) > 18:
        raise PageNotFound("There is no such webhook delivery.")
    svc = services(request)
    try:
        await retry_webhook_delivery(svc.db, svc.clock, int(delivery_id), actor=viewer.actor)
    except MessageNotFound:
        raise PageNotFound(f"There is no webhook delivery {delivery_id}.") from None
    except RetryRefused as exc:
        return await _deliveries_page(request, viewer, problem=f"Not retried: {exc}", status_code=409)
    return RedirectResponse(f"{PREFIX}/deliveries?retried={delivery_id}&kind=webhook", status_code=303)


def _endpoint_id_ok(public_id: str) -> bool:
    return public_id.startswith("we_") and len(public_id) <= 40 and public_id.isascii() and public_id[3:].isalnum()


@router.post("/deliveries/endpoints/{public_id}/disable")
async def disable_endpoint(request: Request, public_id: str, viewer: Signed) -> Response:
    """An admin turns a client's failing webhook endpoint off (the client can enable it again)."""
    viewer.require(Capability.MANAGE_CLIENTS)
    await viewer.form(request)
    if not _endpoint_id_ok(public_id):
        raise PageNotFound("There is no such webhook endpoint.")
    svc = services(request)
    async with svc.db.read() as conn:
        client_id = await delivery_queries.endpoint_owner(conn, public_id)
    if client_id is None:
        raise PageNotFound(f"There is no webhook endpoint {public_id}.")
    stopped = await webhook_endpoints.disable_for_operator(svc, client_id, public_id, actor=viewer.actor)
    if stopped is None:
        return await _deliveries_page(
            request, viewer, problem=f"Not disabled: endpoint {public_id} is disabled already.", status_code=409
        )
    return RedirectResponse(f"{PREFIX}/deliveries?disabled={public_id}&stopped={stopped}", status_code=303)
