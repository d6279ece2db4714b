"""The landing page: bookings by status today (UTC), partner deliveries pending and failed with the
oldest pending one's age, and partners with errors in the last hour: failed search calls (partner
health, ``partners/health_repository.py``) and failed delivery attempts."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.bookings.state import BookingStatus
from transfers.console import queries
from transfers.console.auth import Signed, services
from transfers.console.render import page
from transfers.partners import health_repository
from transfers.partners.health import PartnerHealth

router = APIRouter()
STATUSES = [s.value for s in BookingStatus if s is not BookingStatus.DEFAULT]


@router.get("/")
async def dashboard(request: Request, viewer: Signed) -> Response:
    svc = services(request)
    now = svc.clock.now()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    async with svc.db.read() as conn:
        by_status = await queries.bookings_by_status_since(conn, today, STATUSES)
        deliveries = await queries.delivery_summary(conn)
        failed_attempts = await queries.partners_with_errors_since(conn, now - timedelta(hours=1))
        health = await health_repository.last_hour(conn, now)
    erring = _erring(failed_attempts, health)
    oldest = deliveries["oldest_pending"]
    age = None if oldest is None else _age(now - oldest)
    return page(
        request,
        "dashboard.html",
        {
            "active": "",
            "statuses": STATUSES,
            "by_status": by_status,
            "total_today": sum(by_status.values()),
            "deliveries": deliveries,
            "oldest_age": age,
            "erring": erring,
            "today": today,
        },
        viewer=viewer,
        title="Dashboard",
    )


def _erring(failed_attempts: list[dict[str, Any]], health: list[PartnerHealth]) -> list[dict[str, Any]]:
    """Partners with search errors or failed delivery attempts in the hour, the most errors first."""
    rows: dict[int, dict[str, Any]] = {}
    for h in health:
        if h.errors:
            rows[h.partner_id] = {
                "id": h.partner_id,
                "name": h.name,
                "search_errors": h.errors,
                "search_calls": h.search_calls,
                "by_outcome": h.errors_by_outcome,
                "errors": 0,
            }
    for p in failed_attempts:
        row = rows.setdefault(
            int(p["id"]),
            {"id": p["id"], "name": p["name"], "search_errors": 0, "search_calls": 0, "by_outcome": {}, "errors": 0},
        )
        row["errors"] = int(p["errors"])
    return sorted(rows.values(), key=lambda r: (-(r["search_errors"] + r["errors"]), r["id"]))


def _age(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} days"
