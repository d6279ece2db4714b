"""``Incidents``: the queue of open incidents an operator decides (docs/console/index.md#incidents), oldest
first, each with its age, type, reporter and booking, linked to the booking page where its evidence and
``Resolve`` are. Read-only: every operator sees it; resolving stays on the booking page."""

from __future__ import annotations

from datetime import datetime, timedelta

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.console.auth import Signed, services
from transfers.console.render import page
from transfers.incidents import service as incidents

router = APIRouter()
QUEUE_SIZE = 200


@router.get("/incidents")
async def queue(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    rows, total = await incidents.open_queue(svc.db, limit=QUEUE_SIZE)
    now = svc.clock.now()
    return page(
        request,
        "incidents.html",
        {
            "active": "Incidents",
            "rows": [{"queued": queued, "age": age(now, queued.incident.created_at)} for queued in rows],
            "total": total,
        },
        viewer=viewer,
        title="Incidents",
    )


def age(now: datetime, since: datetime) -> str:
    """How long an incident has waited, as an operator reads it: "40 min", "3 h 5 min", "4 days"."""
    seconds = max(0, int((now - since) / timedelta(seconds=1)))
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} days"
