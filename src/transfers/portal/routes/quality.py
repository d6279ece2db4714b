"""``Quality`` (docs/rules/quality.md#portal): the partner's own latest scorecard only (the viewer's
partner id, never one from the request), per airport, 26 weeks of its rates as inline SVG charts, the
formula in words and what would raise its score (``quality/advice.py``, from its own counts)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from transfers.portal.auth import Signed, services
from transfers.portal.render import page
from transfers.quality import views
from transfers.quality.advice import advise
from transfers.quality.rules import COUNT_NAMES, Counts

router = APIRouter()


@router.get("/quality")
async def quality_page(request: Request, viewer: Signed) -> Response:
    found = await views.overview(services(request).db, viewer.partner_id)
    own = found.partners[0] if found.partners else None
    card = own.card if own else None
    return page(
        request,
        "quality.html",
        {
            "active": "Quality",
            "own": own,
            "card": card,
            "advice": advise(Counts.of(card)) if card else None,
            "count_names": COUNT_NAMES,
        },
        viewer=viewer,
        title="Quality",
    )
