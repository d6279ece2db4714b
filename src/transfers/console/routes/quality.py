"""``Quality`` (docs/rules/quality.md#console): every partner's latest scorecard (score, tier,
counts, rates), its split per airport and 26 weeks of its on-time, decline and incident rates drawn
as inline SVG (no script, nothing from another host), and ``quality.csv``. Each count links to the
bookings list narrowed to exactly the bookings it counted (``/console/bookings?counted=...``)."""

from __future__ import annotations

import csv
import io
from urllib.parse import urlencode

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.accounting.csvfile import cell
from transfers.console.auth import PREFIX, Signed, services
from transfers.console.render import page
from transfers.db.tables.quality import ALL_AIRPORTS
from transfers.quality import views
from transfers.quality.rules import COUNT_NAMES

router = APIRouter()
COUNT_TITLES = {
    "requests": "Requests",
    "declined": "Declined",
    "partner_cancelled": "Cancelled by partner",
    "driver_no_shows": "Driver no-shows",
    "rides": "Rides",
    "on_time": "On time",
    "covered": "Covered",
    "partner_incidents": "Incidents",
    "ratings": "Ratings",
}


def counted_base(partner_id: int, card: dict[str, object], airport: str = ALL_AIRPORTS) -> str:
    """The link to the bookings list narrowed to the bookings behind one count (``routes/bookings.py``,
    ``console/counted.py``), less the count's name, which ends it: one ``urlencode`` per row, not per
    count (2,700 links on a page of 100 partners)."""
    query: dict[str, object] = {"partner": partner_id, "as_of": card["as_of"]}
    if airport != ALL_AIRPORTS:
        query["airport"] = airport
    return f"{PREFIX}/bookings?" + urlencode(query) + "&counted="


@router.get("/quality")
async def quality_page(request: Request, viewer: Signed) -> Response:
    found = await views.overview(services(request).db)
    return page(
        request,
        "quality.html",
        {
            "active": "Quality",
            "partners": found.partners,
            "days": found.days,
            "count_names": COUNT_NAMES,
            "count_titles": COUNT_TITLES,
            "counted_base": counted_base,
            "all_airports": ALL_AIRPORTS,
        },
        viewer=viewer,
        title="Quality",
    )


@router.get("/quality.csv")
async def quality_csv(request: Request, viewer: Signed) -> Response:
    found = await views.overview(services(request).db)
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([cell(v) for v in row] for row in views.csv_rows(found))
    day = found.days[-1] if found.days else "none"
    return Response(
        out.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="partner-quality-{day}.csv"'},
    )
