"""The landing page: bookings by status today (UTC), partner deliveries pending and failed with the
oldest pending one's age, and the last hour's errors in three tables apart (a partner
listed for failed deliveries read "0 of 0" search errors): partner searches that failed (partner
health, ``partners/health_repository.py``, "3 of 12 calls"), partner delivery attempts that failed,
and client webhook endpoints whose deliveries failed or are being retried; how many incidents are open
(the queue, ``routes/incidents.py``)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.bookings.state import BookingStatus
from transfers.console import delivery_queries, queries
from transfers.console.auth import Signed, services
from transfers.console.render import page
from transfers.flights import repository as flight_repository
from transfers.incidents import repository as incident_repository
from transfers.partners import health_repository

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
        webhook_failures = await delivery_queries.webhook_failures_since(conn, now - timedelta(hours=1))
        # docs/rules/flights.md#disruption: live bookings whose flight is disrupted, picked up in the next 24 h
        disrupted = await flight_repository.disrupted_within(conn, now, now + timedelta(hours=24), limit=200)
        open_incidents = await incident_repository.count_open(conn)
    searches = sorted(
        (h for h in health if h.errors and h.search_calls),
        key=lambda h: (-h.errors, h.partner_id),
    )
    oldest = deliveries.oldest_pending
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
            "search_errors": [
                {
                    "id": h.partner_id,
                    "name": h.name,
                    "errors": h.errors,
                    "calls": h.search_calls,
                    "by_outcome": h.errors_by_outcome,
                }
                for h in searches
            ],
            "delivery_errors": failed_attempts,
            "webhook_failures": webhook_failures,
            "disrupted": [
                {
                    "reservation_no": b.reservation_no,
                    "flight": b.flight_number,
                    "status": (b.flight_state or {}).get("status", "UNKNOWN"),
                    "pickup_at": b.pickup_at,
                    "airport": b.airport_iata,
                    "since": b.flight_disrupted_at,
                }
                for b in disrupted
            ],
            "today": today,
            "open_incidents": open_incidents,
        },
        viewer=viewer,
        title="Dashboard",
    )


def _age(delta: timedelta) -> str:
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} days"
