"""HTTP metrics middleware and the ``GET /metrics`` route.

Requests are labelled by the *route template* the router matched (``/api/v1/booking-api/
booking``, ``/sandbox-partner/booking/info/{reservation_no}``), never the raw path, so a scan of
random URLs cannot grow the series: a path no route matched is ``route="unmatched"``. They are
counted by ``RequestPlumbing``, the outermost layer, so the 413/500/503 answers it writes count too.

The business counters (``bookings_created_total``, ``wallet_refusals_total``) are not read off the
answers: ``bookings/service.py`` counts them where the booking is written or the debit refused, so
an idempotent replay (answered from the stored answer) never counts.
"""

from __future__ import annotations

import asyncio
import hmac
from dataclasses import dataclass
from typing import Any

import structlog
from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Scope

from transfers.api.responses import service_error_body
from transfers.bookings import operator_queries as booking_queries
from transfers.bookings.state import BookingStatus
from transfers.config import Settings
from transfers.delivery import operators as outbox_views
from transfers.errors import ErrorCode
from transfers.observability import metrics
from transfers.services import Services
from transfers.webhooks import operators as webhooks_ops

log = structlog.get_logger("transfers.metrics")
_SCRAPE_DB_TIMEOUT_SECONDS = 5.0


def route_template(scope: Scope, entry_root_path: str) -> str:
    """The template of the route that handled the request, with any mount prefix; ``unmatched``."""
    route = scope.get("route")
    template = getattr(route, "path_format", None) or getattr(route, "path", None)
    if not isinstance(template, str) or not template:
        return metrics.UNMATCHED
    root_path = scope.get("root_path", "") or ""
    mount_prefix = root_path[len(entry_root_path) :] if root_path.startswith(entry_root_path) else ""
    return mount_prefix + template


@dataclass
class ResponseSeen:
    """What the outermost middleware (``api.middleware.RequestPlumbing``) saw of one answer."""

    status: int = 0

    def start(self, message: Message) -> None:
        self.status = message["status"]


# (route, method, status) -> its counter and its duration histogram: one lookup per request instead of
# two, each building its key and the status's text (as metrics._PARTNER_SERIES; the same label space).
_REQUEST_SERIES: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def observe_request(scope: Scope, entry_root_path: str, seen: ResponseSeen, seconds: float) -> None:
    """Count one finished request. Called by ``RequestPlumbing`` (the outermost layer, one send
    wrapper for plumbing, rate-limit headers and metrics), so the 413/500/503 it writes count too."""
    key = (route_template(scope, entry_root_path), scope["method"], seen.status)
    found = _REQUEST_SERIES.get(key)
    if found is None:
        route, method, status = key
        found = _REQUEST_SERIES[key] = (
            metrics.series(metrics.HTTP_REQUESTS, route, method, str(status) if status else "none"),
            metrics.series(metrics.HTTP_DURATION, route, method),
        )
    found[0].inc()
    found[1].observe(seconds)


router = APIRouter(tags=["Operations"])


def metrics_refusal(settings: Settings, authorization: str | None) -> Response | None:
    """Why this scrape is refused (None: serve it). With ``TRANSFERS_METRICS_TOKEN`` set, only
    ``Authorization: Bearer <token>`` is served (401 otherwise, the token compared in constant time);
    without it the sandbox serves everyone and live nobody (404: booking volumes and partner names are
    not for the public port)."""
    token = settings.metrics_token
    if not token:
        if settings.is_sandbox:
            return None
        return JSONResponse(service_error_body(ErrorCode.NOT_FOUND), status_code=404)
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return None
    body = service_error_body(ErrorCode.UNAUTHENTICATED, "GET /metrics needs Authorization: Bearer <metrics token>.")
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": 'Bearer realm="metrics"'})


@router.get("/metrics", include_in_schema=False)
async def metrics_endpoint(request: Request) -> Response:
    """Prometheus exposition, behind ``TRANSFERS_METRICS_TOKEN`` (``metrics_refusal``)."""
    svc: Services = request.app.state.services
    refusal = metrics_refusal(svc.settings, request.headers.get("authorization"))
    if refusal is not None:
        return refusal
    families = await _database_families(svc)
    body, content_type = metrics.render(request.headers.get("accept", ""), families)
    return Response(body, media_type=None, headers={"Content-Type": content_type})


async def _database_families(svc: Services) -> list[Any]:
    statuses = [s.value for s in BookingStatus if s is not BookingStatus.DEFAULT]
    now = svc.clock.now()
    try:
        async with asyncio.timeout(_SCRAPE_DB_TIMEOUT_SECONDS), svc.db.read() as conn:
            pending, oldest = await outbox_views.pending_summary(conn)
            by_status = await booking_queries.count_by_status(conn)
            webhooks_pending, oldest_webhook = await webhooks_ops.pending_summary(conn)
    except Exception as exc:  # a scrape must still answer the process metrics
        log.warning("metrics_database_scrape_failed", error=type(exc).__name__)
        return metrics.database_families(
            pending=0, oldest_pending=None, now=now, bookings_by_status={}, statuses=statuses, ok=False
        )
    return metrics.database_families(
        pending=pending,
        oldest_pending=oldest,
        now=now,
        bookings_by_status=by_status,
        statuses=statuses,
        ok=True,
        webhooks_pending=webhooks_pending,
        oldest_webhook=oldest_webhook,
    )
